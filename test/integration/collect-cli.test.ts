import { afterAll, describe, expect, test } from '@jest/globals';
import { chmodSync, mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { rec, writeLines } from '../helpers/transcript.js';
import { landedFiles, recordsOf } from '../helpers/root.js';
import { FileLock } from '../../src/storage/lock.js';
import { listDir } from '../../src/storage/layout.js';
import { readIndexState } from '../../src/storage/index.js';

afterAll(cleanupTemp);

function setup() {
  const base = tempDir();
  const root = join(base, 'data');
  const src = join(base, 'projects');
  mkdirSync(src, { recursive: true });
  const config = writeConfig(base, root, src);
  return { base, root, src, config };
}

const sid = (i: number) => `0438c73b-1111-4222-8333-${String(i).padStart(12, '0')}`;

describe('aszcol collect, verify, show, sources as processes', () => {
  test('upper-case session id, memory/, a session with children and no main transcript; show prints one record', async () => {
    const { root, src, config } = setup();
    const UP = '41090DAB-113C-4A2B-9C3D-5E6F7A8B9C0D';
    writeLines(join(src, '-p', `${UP}.jsonl`), [rec.user(UP, 'hello'), rec.user(UP, 'again')]);
    writeLines(join(src, '-p', 'memory', 'notes.jsonl'), [{ not: 'a session' }]);
    writeLines(join(src, '-p', sid(1), 'subagents', 'agent-a0123456789abcdef.jsonl'), [rec.user(sid(1), 'child only')]);
    const r = await runCli(['collect', '--once', '--config', config]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/sessions 2 sources 2 landed 2 file\(s\) 3 record\(s\)/);
    // byte-exact, not case-folded; beside them only the root's own `_conversations` (its landing epoch, storage/landing-epoch.ts)
    expect(listDir(root).sort()).toEqual([sid(1), UP, '_conversations'].sort());
    expect(landedFiles(root, sid(1))[0]!.header.stream).toBe('a0123456789abcdef');
    const show = await runCli(['show', '--config', config, '--session', UP, '1', '2']);
    expect(show.code).toBe(0);
    expect(JSON.parse(show.stdout).record).toMatchObject({ ord: 2, parts: [{ k: 'text', text: 'again' }] });
    expect((await runCli(['show', '--config', config, '--session', UP, '1', '3'])).code).toBe(1);
    expect((await runCli(['show', '--config', config, '--session', UP, '9', '1'])).stderr).toMatch(/no landed file with sequence 9/);
    const src2 = await runCli(['sources', '--config', config, '--json']);
    expect(
      JSON.parse(src2.stdout)
        .sessions.map((s: { session: string }) => s.session)
        .sort(),
    ).toEqual([sid(1), UP].sort());
    const v = await runCli(['verify', '--config', config]);
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/checked 2 session\(s\)/);
  });

  test('a session another process holds is skipped and counted busy, then collected once released', async () => {
    const { root, src, config } = setup();
    writeLines(join(src, '-p', `${sid(2)}.jsonl`), [rec.user(sid(2), 'x')]);
    const lock = new FileLock(join(root, sid(2), '.lock'));
    expect(lock.tryAcquire()).toBe(true);
    const r = await runCli(['collect', '--once', '--config', config]);
    expect(r.stdout).toMatch(/busy 1/);
    expect(r.code).toBe(1);
    expect(existsSync(join(root, sid(2), 'streams'))).toBe(false);
    lock.release();
    const again = await runCli(['collect', '--once', '--config', config]);
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/busy 0/);
    expect(recordsOf(landedFiles(root, sid(2)))).toHaveLength(1);
  });

  test('two collectors at once: no sequence issued twice, every line landed once', async () => {
    const { root, src, config } = setup();
    const N = 24,
      LINES = 400;
    for (let i = 0; i < N; i++) {
      writeLines(
        join(src, '-p', `${sid(100 + i)}.jsonl`),
        Array.from({ length: LINES }, (_, j) => rec.user(sid(100 + i), `s${i} l${j} ${'z'.repeat(200)}`)),
      );
      writeLines(
        join(src, '-p', sid(100 + i), 'subagents', 'agent-a0123456789abcdef.jsonl'),
        Array.from({ length: 50 }, (_, j) => rec.user(sid(100 + i), `c${j}`)),
      );
    }
    const cfg2 = join(root, '..', 'small.yaml');
    writeFileSync(cfg2, readFileSync(config, 'utf8') + '    max_delta_bytes: 8KiB\n');
    const [a, b] = await Promise.all([runCli(['collect', '--once', '--config', cfg2]), runCli(['collect', '--once', '--config', cfg2])]);
    expect(a.stderr + b.stderr).toBe('');
    // Whatever one skipped as busy, a later pass lands.
    for (let k = 0; k < 5; k++) if ((await runCli(['collect', '--once', '--config', cfg2])).code === 0) break;
    for (let i = 0; i < N; i++) {
      const files = landedFiles(root, sid(100 + i));
      const seqs = files.map((f) => f.seq);
      expect(new Set(seqs).size).toBe(seqs.length);
      expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, k) => k + 1));
      expect(recordsOf(files)).toHaveLength(LINES + 50);
    }
    const v = await runCli(['verify', '--config', config, '--json']);
    expect(JSON.parse(v.stdout)).toMatchObject({ problems: [], relanded: 0, records: N * (LINES + 50) });
  });

  test('a crash between landing a file and committing its cursor lands those records twice; verify counts them re-landed', async () => {
    const { root, src, config } = setup();
    writeLines(
      join(src, '-p', `${sid(3)}.jsonl`),
      Array.from({ length: 7 }, (_, j) => rec.user(sid(3), `l${j}`)),
    );
    const crashed = await runCli(['collect', '--once', '--config', config], { env: { ASZCOL_TEST_CRASH_AFTER_LAND: '1' } });
    expect(crashed.code).toBe(137);
    expect(existsSync(join(root, sid(3), '.lock'))).toBe(true); // the dead holder's lock is left behind
    const r = await runCli(['collect', '--once', '--config', config]);
    expect(r.code).toBe(0); // the stale lock is taken over
    const files = landedFiles(root, sid(3));
    expect(files.map((f) => f.seq)).toEqual([1, 2]);
    expect(recordsOf(files)).toHaveLength(14);
    const v = await runCli(['verify', '--config', config]);
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/7 record\(s\) landed more than once/);
    // The crashed pass never indexed its file; the next collect caught the index up with both.
    expect(readIndexState(root, sid(3))?.indexedSeq).toBe(2);
    // Assembly removes the copies: the chain holds each record once.
    const p = await runCli(['parse', '--config', config, '--json']);
    expect(JSON.parse(p.stdout)[0].summary).toMatchObject({ talks: 7, runs: 7 });
  });

  test('verify fails on a tampered landed file and on a lost last file (end gap)', async () => {
    const { root, src, config } = setup();
    writeLines(join(src, '-p', `${sid(4)}.jsonl`), [rec.user(sid(4), 'a')]);
    await runCli(['collect', '--once', '--config', config]);
    writeLines(join(src, '-p', `${sid(4)}.jsonl`), [rec.user(sid(4), 'b')], { append: true });
    await runCli(['collect', '--once', '--config', config]);
    const [first, second] = landedFiles(root, sid(4));
    chmodSync(second!.path, 0o644);
    writeFileSync(second!.path, readFileSync(second!.path, 'utf8').replace('"b"', '"c"'));
    let v = await runCli(['verify', '--config', config]);
    expect(v.code).toBe(1);
    expect(v.stderr).toMatch(/digest mismatch/);
    const { rmSync } = await import('node:fs');
    rmSync(second!.path);
    v = await runCli(['verify', '--config', config]);
    expect(v.code).toBe(1);
    expect(v.stderr).toMatch(/end gap/);
    expect(first).toBeDefined();
  });

  test('a project directory that cannot be read is an error of the pass (run as an unprivileged user)', async () => {
    const { base, root, src, config } = setup();
    writeLines(join(src, '-ok', `${sid(5)}.jsonl`), [rec.user(sid(5), 'a')]);
    mkdirSync(join(src, '-locked'));
    writeLines(join(src, '-locked', `${sid(6)}.jsonl`), [rec.user(sid(6), 'b')]);
    for (const d of [base, src, join(src, '-ok')]) chmodSync(d, 0o777);
    chmodSync(join(src, '-locked'), 0o000);
    mkdirSync(root, { mode: 0o777 });
    chmodSync(root, 0o777);
    const r = await runCli(['collect', '--once', '--config', config], { uid: 65534, gid: 65534 });
    chmodSync(join(src, '-locked'), 0o755);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/cannot read project directory.*-locked/);
    expect(r.stdout).toMatch(/landed 1 file/); // the readable directory is still collected
  });

  test('configuration errors name their exact path and exit 2', async () => {
    const dir = tempDir();
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, 'receivers:\n  claude_code_local:\n    max_delta_byte: 2MiB\n');
    let r = await runCli(['collect', '--once', '--config', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/receivers\.claude_code_local\.max_delta_byte: unknown key/);
    writeFileSync(bad, 'receivers:\n  claude_code_local:\n    interval: soon\n');
    r = await runCli(['sources', '--config', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/receivers\.claude_code_local\.interval: "soon" is not a duration/);
    writeFileSync(bad, 'storage:\n  root: ${env:ASZ_TEST_UNSET_VAR}\n');
    r = await runCli(['verify', '--config', bad]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/storage\.root: environment variable ASZ_TEST_UNSET_VAR is not set/);
  });
});
