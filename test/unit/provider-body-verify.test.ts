/**
 * `aszcol verify` rebuilds every landed provider body: a session whose cut bodies all add up passes,
 * and one that lost the file later bodies copy from names each body that no longer rebuilds, and why.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { chmodSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ProviderBodyCollector } from '../../src/receivers/claude-code-local/provider-bodies.js';
import { landedBodyFiles } from '../../src/storage/provider-body-files.js';
import { verifyProviderBodies } from '../../src/storage/verify-provider-bodies.js';
import { verifyRoot } from '../../src/storage/verify.js';
import { bodySession, writeBodies } from '../helpers/body-session.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

describe('verify rebuilds provider bodies', () => {
  test('every cut body rebuilds; removing the file the later ones copy from names each of them', () => {
    const base = tempDir('aszcol-body-verify-');
    const root = join(base, 'data');
    const s = bodySession(12);
    writeBodies(join(base, 'raw'), s);
    const report = new ProviderBodyCollector({ root, dir: join(base, 'raw'), maxDeltaBytes: 8192, settleMs: 0 }).pass();
    expect(report.errors).toEqual([]);
    expect(report.writtenWhole).toEqual([]);
    expect(report.storedBytes).toBeLessThan(report.landedBytes / 2);
    expect(verifyProviderBodies(root, s.session)).toEqual({ bodies: 24, problems: [] });
    expect(verifyRoot(root, s.session).problems).toEqual([]);

    const [first] = landedBodyFiles(root, s.session);
    chmodSync(join(root, s.session, 'provider_body'), 0o755);
    rmSync(first!.path);
    const after = verifyProviderBodies(root, s.session);
    expect(after.problems.length).toBeGreaterThan(0);
    expect(after.problems[0]).toMatch(/row \d+: the (request|response) body .* does not rebuild: .*(has not landed|held by no earlier record)/);
    expect(verifyRoot(root, s.session).problems).toEqual(expect.arrayContaining(after.problems));
  });
});
