/**
 * Cut provider bodies refer to records landed before them (asz 0.6's `copy` and `piece`), so the
 * order bodies land in is part of their meaning. A collect killed (a real SIGKILL) between two
 * provider_body files of one pass leaves only whole files, and nothing in them refers to a record
 * that did not land; the next collect lands the rest once, cut against what the first landed, and
 * every body rebuilds to its source's bytes — which `aszcol verify` checks too.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import { manifestOf } from '../../src/formats/session-data/provider-body.js';
import { landedBodyFiles, SessionProviderBodies } from '../../src/storage/provider-body-files.js';
import { verifyProviderBodies } from '../../src/storage/verify-provider-bodies.js';
import { bodySession, writeBodies } from '../helpers/body-session.js';
import { runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

describe('a collect killed between two provider body files', () => {
  test('loses nothing, lands nothing twice, and leaves no body referring to what did not land', async () => {
    const base = tempDir('aszcol-bodies-kill-');
    const root = join(base, 'data');
    const raw = join(base, 'raw');
    mkdirSync(join(base, 'home', 'projects'), { recursive: true });
    const s = bodySession(30);
    writeBodies(raw, s);
    // A small file budget, so one pass lands the thirty calls' bodies in many files.
    const config = writeConfig(base, root, join(base, 'home', 'projects'), `    provider_bodies: ${JSON.stringify(raw)}\n    max_delta_bytes: 16384\n`);

    const killed = await runCli(['collect', '--once', '--config', config], { env: { ASZCOL_TEST_CRASH_AFTER_BODY_FILES: '3' } });
    expect(killed.code).toBe(137);
    const early = landedBodyFiles(root, s.session);
    expect(early).toHaveLength(3);
    // What landed before the kill stands on its own: every body in it rebuilds from it alone.
    const before = verifyProviderBodies(root, s.session);
    expect(before.problems).toEqual([]);
    expect(before.bodies).toBeGreaterThan(0);
    expect(before.bodies).toBeLessThan(60);
    expect(readdirSync(join(root, s.session, 'provider_body')).filter((n) => n.startsWith('.tmp-'))).toEqual([]);

    const again = await runCli(['collect', '--once', '--json', '--config', config]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).bodies).toEqual({ landed: 60 - before.bodies, waiting: 0, unreadable: 0 });

    // Every body once, rebuilt to its source's exact bytes by a reader that loads the files in landing order.
    const files = landedBodyFiles(root, s.session);
    const reader = new SessionProviderBodies(files);
    const srcs: string[] = [];
    let copiesAcrossTheKill = 0;
    const earlyIds = new Set(early.flatMap((f) => readSessionData(f.path).records.map((r) => r.id)));
    for (const f of files)
      for (const [i, r] of readSessionData(f.path).records.entries()) {
        const m = manifestOf(r)!;
        srcs.push(m.src!);
        expect(reader.bodyAt(f.seq, i + 1).equals(readFileSync(join(raw, m.src!)))).toBe(true);
        if (!earlyIds.has(r.id) && m.segments.some((sg) => sg.copy && earlyIds.has(sg.copy.from))) copiesAcrossTheKill++;
      }
    expect(srcs.sort()).toEqual([...s.bodies.keys()].filter((n) => n.endsWith('.json')).sort());
    // The second collect cut against what the first landed: the first request after the kill copies from a body landed before it.
    expect(copiesAcrossTheKill).toBeGreaterThan(0);

    const verify = await runCli(['verify', '--config', config]);
    expect(verify.stdout + verify.stderr).not.toMatch(/does not rebuild/);
    expect(verify.code).toBe(0);
  }, 120_000);
});
