import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { collectAndParse, runCli, SHARED } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { listLanded } from '../../src/storage/landed-files.js';

afterAll(cleanupTemp);

const FIXTURE = join(SHARED, 'conformance', 'scenarios', 'fixture.yaml');
const SESSION = '00000001-0000-4000-8000-000000000001';

let dir = '';
let config = '';

beforeAll(async () => {
  dir = tempDir();
  config = join(dir, 'aszcol.yaml');
  expect((await runCli(['scenario', 'build', FIXTURE, '--out', dir, '--at', '2026-06-01T09:00:00Z'])).code).toBe(0);
  await collectAndParse(config);
});

/** Every record line of a root's landed files, in sequence order, and the number of files. */
function recordLines(root: string): { lines: string[]; files: number } {
  const files = listLanded(root, SESSION);
  const lines = files.flatMap((f) => readFileSync(f.path, 'utf8').split('\n').slice(1, -2));
  return { lines, files: files.length };
}

const rootConfig = (root: string) => {
  const p = join(tempDir(), 'aszcol.yaml');
  writeFileSync(p, `storage:\n  root: ${JSON.stringify(root)}\n`);
  return p;
};

describe('aszcol repack DEST', () => {
  test('one record a file under a 1-byte budget: every record byte for byte in order, a root that verifies and folds the same', async () => {
    const dest = join(tempDir(), 'repacked');
    const r = await runCli(['repack', dest, '--config', config, '--max-delta-bytes', '1', '--json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const before = recordLines(dir),
      after = recordLines(dest);
    expect(after.lines).toEqual(before.lines);
    expect(after.files).toBe(before.lines.length);
    const report = JSON.parse(r.stdout) as { sessions: { filesIn: number; filesOut: number; records: number; rounds: number }[] };
    expect(report.sessions).toEqual([
      expect.objectContaining({ filesIn: before.files, filesOut: before.lines.length, records: before.lines.length, rounds: 1 }),
    ]);
    // Nothing derived was copied: the repacked root has its own index and chain.
    const verify = await runCli(['verify', '--config', rootConfig(dest)]);
    expect(verify.code).toBe(0);
    const fold = async (cfg: string) =>
      JSON.parse((await runCli(['conversation', SESSION, '--config', cfg, '--fold'])).stdout) as { head: Record<string, unknown> };
    const [a, b] = [(await fold(config)).head, (await fold(rootConfig(dest))).head];
    for (const k of ['talks', 'steps', 'streams', 'segments', 'llm_calls', 'subagents', 'unresolved']) expect([k, b[k]]).toEqual([k, a[k]]);
    expect(b.through_seq).toBe(before.lines.length);
  });

  test('a populated destination is refused before anything is written; the root itself too', async () => {
    const dest = tempDir();
    mkdirSync(join(dest, 'something'));
    const r = await runCli(['repack', dest, '--config', config]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/must be a new or empty directory/);
    expect(readdirSync(dest)).toEqual(['something']);
    const self = await runCli(['repack', dir, '--config', config]);
    expect(self.code).toBe(2);
    expect(self.stderr).toMatch(/is the storage root itself/);
  });
});
