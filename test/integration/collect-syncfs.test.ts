/**
 * With `batch_sync: filesystem` a collect makes each batch durable with two syncs of the root's
 * filesystem (coreutils `sync --file-system`), not an fsync per file (issue 19). A stand-in `sync` first in PATH records each
 * call and passes it on to the real one, or fails the way an old coreutils or a bad disk would:
 * then the collector syncs file by file, says so once, and loses nothing.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { chmodSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { landedFiles } from '../helpers/root.js';
import { rec, writeLines } from '../helpers/transcript.js';

afterAll(cleanupTemp);

const SESSIONS = 30;
const sid = (i: number) => `5d1f0a2c-3333-4444-8555-${String(i).padStart(12, '0')}`;
const REAL_SYNC = ['/usr/bin/sync', '/bin/sync'].find((p) => existsSync(p));

function writeHistory(src: string): Map<string, string[]> {
  const uuids = new Map<string, string[]>();
  for (let i = 0; i < SESSIONS; i++) {
    const s = sid(i);
    const lines = Array.from({ length: 4 }, (_, j) => rec.user(s, `prompt ${j} of session ${i}`));
    writeLines(join(src, `-home-me-p${i % 3}`, `${s}.jsonl`), lines);
    uuids.set(
      s,
      lines.map((r) => r.uuid),
    );
  }
  return uuids;
}

/** A `sync` in its own bin directory: logs its arguments to `log`, then runs `body` (a shell fragment). */
function standInSync(dir: string, log: string, body: string): string {
  const bin = join(dir, 'bin');
  mkdirSync(bin, { recursive: true });
  writeFileSync(join(bin, 'sync'), `#!/bin/sh\necho "$*" >> ${JSON.stringify(log)}\n${body}\n`);
  chmodSync(join(bin, 'sync'), 0o755);
  return bin;
}

function setUp(prefix: string, durability?: string) {
  const base = tempDir(prefix);
  const root = join(base, 'data');
  const src = join(base, 'projects');
  const uuids = writeHistory(src);
  const config = writeConfig(base, root, src, `    workers: 2\n${durability ? `    batch_sync: ${durability}\n` : ''}`);
  const log = join(base, 'sync.log');
  return { base, root, src, uuids, config, log };
}

const calls = (log: string) => (existsSync(log) ? readFileSync(log, 'utf8').split('\n').filter(Boolean) : []);

function expectAllLanded(root: string, uuids: Map<string, string[]>): void {
  for (const [s, ids] of uuids) {
    const landed = new Set(landedFiles(root, s).flatMap((f) => f.records.map((r) => r.id)));
    expect(ids.filter((id) => !landed.has(id))).toEqual([]);
  }
}

describe('a batch made durable with one filesystem sync', () => {
  test('thirty sessions land with a few syncs of the root filesystem, far fewer than their files', async () => {
    expect(REAL_SYNC).toBeDefined();
    const { base, root, uuids, config, log } = setUp('aszcol-syncfs-', 'filesystem');
    const bin = standInSync(base, log, `exec ${REAL_SYNC} "$@"`);
    const r = await runCli(['collect', '--once', '--json', '--config', config], { env: { PATH: `${bin}:${process.env.PATH}` } });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toMatch(/note/);
    const pass = JSON.parse(r.stdout.trim().split('\n').pop()!) as { landedFiles: number };
    expect(pass.landedFiles).toBe(SESSIONS);
    expectAllLanded(root, uuids);
    const made = calls(log);
    // Every call syncs the storage root's filesystem: one try per worker, then two per batch of up to twelve sessions.
    expect(made.length).toBeGreaterThan(0);
    for (const c of made) expect(c).toBe(`--file-system ${root}`);
    expect(made.length).toBeLessThanOrEqual(2 + 2 * Math.ceil(SESSIONS / 12) + 2);
    const v = await runCli(['verify', '--config', config]);
    expect(v.code).toBe(0);
  }, 120_000);

  test('with batch_sync: files (the default) no filesystem sync runs', async () => {
    const { base, root, uuids, config, log } = setUp('aszcol-syncfs-files-');
    const bin = standInSync(base, log, `exec ${REAL_SYNC} "$@"`);
    const r = await runCli(['collect', '--once', '--config', config], { env: { PATH: `${bin}:${process.env.PATH}` } });
    expect(r.code).toBe(0);
    expectAllLanded(root, uuids);
    expect(calls(log)).toEqual([]);
  }, 120_000);

  test('a sync that does not know --file-system: file by file, said once, everything landed', async () => {
    const { base, root, uuids, config, log } = setUp('aszcol-syncfs-old-', 'filesystem');
    const bin = standInSync(base, log, `echo "sync: unrecognized option '--file-system'" >&2\nexit 1`);
    const r = await runCli(['collect', '--once', '--config', config], { env: { PATH: `${bin}:${process.env.PATH}` } });
    expect(r.code).toBe(0);
    const notes = r.stderr.split('\n').filter((l) => l.startsWith('aszcol: note:'));
    expect(notes).toEqual([expect.stringMatching(/batch_sync: syncing file by file from now on: .*unrecognized option '--file-system'/)]);
    // Each worker tried once and never again.
    expect(calls(log).length).toBeLessThanOrEqual(2);
    expectAllLanded(root, uuids);
    expect((await runCli(['verify', '--config', config])).code).toBe(0);
  }, 120_000);

  test('a sync that fails once batches rely on it (a write-back error): no cursor moves past it, and the next pass lands the rest once', async () => {
    const { base, root, uuids, config, log } = setUp('aszcol-syncfs-eio-', 'filesystem');
    // The first two calls (each worker's try) pass; every later one fails.
    const bin = standInSync(
      base,
      log,
      `[ "$(wc -l < ${JSON.stringify(log)})" -le 2 ] && exec ${REAL_SYNC} "$@"\necho "sync: error syncing: Input/output error" >&2\nexit 1`,
    );
    const first = await runCli(['collect', '--once', '--config', config], { env: { PATH: `${bin}:${process.env.PATH}` } });
    expect([0, 1]).toContain(first.code);
    expect(first.stderr).toMatch(/Input\/output error/);
    const again = await runCli(['collect', '--once', '--config', config]);
    expect(again.code).toBe(0);
    expectAllLanded(root, uuids);
    const v = await runCli(['verify', '--config', config]);
    expect(v.code).toBe(0);
    // And after assembly each session holds its four prompts once.
    const p = await runCli(['parse', '--config', config, '--json']);
    expect(p.code).toBe(0);
    const rows = JSON.parse(p.stdout) as { session: string; summary: { talks: number } }[];
    expect(rows.length).toBe(SESSIONS);
    for (const row of rows) expect(row.summary.talks).toBe(4);
  }, 120_000);
});
