/**
 * Collection syncs landed files in batches (issue 19): many sessions' files are synced side by
 * side, installed, and only then do their cursors, indexes and session states move. A real
 * SIGKILL at the batch's weakest point (files installed, no cursor yet) must lose nothing, and
 * after assembly nothing is there twice. The index a batch writes from the records in memory is
 * the one the landed files give when read back.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { landedFiles } from '../helpers/root.js';
import { rec, writeLines } from '../helpers/transcript.js';
import { readIndexState, updateIndex } from '../../src/storage/index.js';

afterAll(cleanupTemp);

const SESSIONS = 30;
const PROMPTS = 6;
const sid = (i: number) => `0438c73b-2222-4333-8444-${String(i).padStart(12, '0')}`;
const agent = (i: number) => `a${String(i).padStart(16, '0')}`;

/** Thirty sessions in three projects; every third has a helper's transcript and sidecar. Returns each session's source uuids. */
function writeHistory(src: string): Map<string, string[]> {
  const uuids = new Map<string, string[]>();
  for (let i = 0; i < SESSIONS; i++) {
    const s = sid(i);
    const project = join(src, `-home-me-p${i % 3}`);
    const main = Array.from({ length: PROMPTS }, (_, j) => rec.user(s, `prompt ${j} of session ${i}`));
    writeLines(join(project, `${s}.jsonl`), main);
    const ids = main.map((r) => r.uuid);
    if (i % 3 === 0) {
      const child = [rec.user(s, 'helper task', { isSidechain: true, agentId: agent(i) })];
      writeLines(join(project, s, 'subagents', `agent-${agent(i)}.jsonl`), child);
      writeLines(join(project, s, 'subagents', `agent-${agent(i)}.meta.json`), [{ agentType: 'general-purpose', description: 'helper' }]);
      ids.push(child[0]!.uuid);
    }
    uuids.set(s, ids);
  }
  return uuids;
}

function cursorsUnder(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith('.cursor')) out.push(join(d, e.name));
    }
  };
  if (existsSync(root)) walk(root);
  return out;
}

function temporariesUnder(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.startsWith('.tmp-')) out.push(join(d, e.name));
    }
  };
  if (existsSync(root)) walk(root);
  return out;
}

/** The sessions with landed files that no cursor of theirs counts yet. */
function landedWithoutCursor(root: string, sessions: Iterable<string>): string[] {
  return [...sessions].filter((s) => existsSync(join(root, s)) && landedFiles(root, s).length > 0 && cursorsUnder(join(root, s)).length === 0);
}

/**
 * Collects thirty sessions with two workers, killed with SIGKILL at a worker's `crashAt`-th batch
 * (its files installed, its cursors not yet moved); then a second collect, and the checks that
 * nothing was lost and that assembly holds each record once. Returns what the kill left.
 */
async function killThenRecover(
  crashAt: number | { env: NodeJS.ProcessEnv },
  o: { batchSync?: 'filesystem' | 'files'; relanded?: 'yes' | 'no' | 'either' } = {},
): Promise<{ cursorsAfterKill: number; uncounted: string[]; temporariesAfterKill: number }> {
  const base = tempDir('aszcol-batch-kill-');
  const root = join(base, 'data');
  const src = join(base, 'projects');
  const uuids = writeHistory(src);
  const settings = `    workers: 2\n${o.batchSync ? `    batch_sync: ${o.batchSync}\n` : ''}`;
  const config = writeConfig(base, root, src, settings);

  const env = typeof crashAt === 'number' ? { ASZCOL_TEST_CRASH_AFTER_LAND: String(crashAt) } : crashAt.env;
  const killed = await runCli(['collect', '--once', '--config', config], { env });
  expect(killed.code).toBe(137);
  const after = {
    cursorsAfterKill: cursorsUnder(root).length,
    uncounted: landedWithoutCursor(root, uuids.keys()),
    temporariesAfterKill: temporariesUnder(root).length,
  };

  const again = await runCli(['collect', '--once', '--config', config, '--json']);
  expect(again.code).toBe(0);
  expect(temporariesUnder(root)).toEqual([]);
  // Nothing lost: every source record's uuid is in a landed file of its session.
  for (const [s, ids] of uuids) {
    const landed = new Set(landedFiles(root, s).flatMap((f) => f.records.map((r) => r.id)));
    expect(ids.filter((id) => !landed.has(id))).toEqual([]);
  }
  // The killed batch's files were landed again: verify names the copies and passes.
  const v = await runCli(['verify', '--config', config]);
  expect(v.code).toBe(0);
  // Files a cursor did not count when the kill came are landed again, and verify names those copies.
  if ((o.relanded ?? 'yes') === 'yes') expect(v.stdout).toMatch(/record\(s\) landed more than once/);
  if (o.relanded === 'no') expect(v.stdout).not.toMatch(/landed more than once/);

  // Nothing twice after assembly: each chain is the one a collect that was never killed gives.
  mkdirSync(join(base, 'clean'), { recursive: true });
  const clean = writeConfig(join(base, 'clean'), join(base, 'clean', 'data'), src, settings);
  expect((await runCli(['collect', '--once', '--config', clean])).code).toBe(0);
  const summaries = async (cfg: string) => {
    const p = await runCli(['parse', '--config', cfg, '--json']);
    expect(p.code).toBe(0);
    const rows = JSON.parse(p.stdout) as { session: string; summary: { talks: number } }[];
    return new Map(rows.map((r) => [r.session, r.summary]));
  };
  const recovered = await summaries(config);
  const neverKilled = await summaries(clean);
  expect(recovered.size).toBe(SESSIONS);
  expect(recovered).toEqual(neverKilled);
  for (const summary of recovered.values()) expect(summary.talks).toBeGreaterThanOrEqual(PROMPTS);
  return after;
}

describe('collection in sync batches', () => {
  test('a collect killed after a batch installed its files and before any cursor moved loses nothing, and assembly holds each record once', async () => {
    const { cursorsAfterKill, uncounted } = await killThenRecover(1);
    // The kill came inside a worker's first batch: several sessions' files are installed and not one cursor counts them.
    expect(uncounted.length).toBeGreaterThan(1);
    expect(cursorsAfterKill).toBe(0);
  }, 120_000);

  test("killed in a worker's second batch, built while its first synced: the first batch's cursors stand, the second's files land again once", async () => {
    // Thirty sessions in groups of twelve over two workers: one worker is handed a second group while its first batch syncs.
    const { cursorsAfterKill, uncounted } = await killThenRecover(2);
    // The first batch moved its cursors before the second's syncs began; the second's files are installed and counted by none.
    expect(cursorsAfterKill).toBeGreaterThan(0);
    expect(uncounted.length).toBeGreaterThan(0);
  }, 120_000);

  test('synced whole (batch_sync: filesystem), a kill after a batch installed its files loses nothing and lands nothing twice after assembly', async () => {
    const { cursorsAfterKill, uncounted } = await killThenRecover(1, { batchSync: 'filesystem' });
    expect(uncounted.length).toBeGreaterThan(1);
    expect(cursorsAfterKill).toBe(0);
  }, 120_000);

  test('synced whole, killed after the first filesystem sync and before any file was installed: only temporaries were left, and they are swept', async () => {
    const { cursorsAfterKill, uncounted, temporariesAfterKill } = await killThenRecover(
      { env: { ASZCOL_TEST_CRASH_AT_STEP: 'files-synced:1' } },
      { batchSync: 'filesystem', relanded: 'no' },
    );
    // The first batch's bytes were durable under temporary names only: nothing installed, nothing to land twice.
    expect(temporariesAfterKill).toBeGreaterThan(0);
    expect(uncounted).toEqual([]);
    expect(cursorsAfterKill).toBe(0);
  }, 120_000);

  test("synced whole, killed while a batch's state files were being moved: the moved cursors count durable files, the rest land again once", async () => {
    // The second batch of a worker, so one batch stood whole before the kill.
    const { cursorsAfterKill } = await killThenRecover(
      { env: { ASZCOL_TEST_CRASH_AT_STEP: 'state-half-moved:2' } },
      { batchSync: 'filesystem', relanded: 'either' },
    );
    expect(cursorsAfterKill).toBeGreaterThan(0);
  }, 120_000);

  test('the index a batch writes from the records it landed is byte for byte the one rebuilt by reading the landed files', async () => {
    const base = tempDir('aszcol-batch-index-');
    const root = join(base, 'data');
    const src = join(base, 'projects');
    const uuids = writeHistory(src);
    const config = writeConfig(base, root, src, '    workers: 2\n');
    expect((await runCli(['collect', '--once', '--config', config])).code).toBe(0);
    // A second pass extends the index with appended lines.
    for (const s of [...uuids.keys()].slice(0, 5))
      writeLines(join(src, `-home-me-p${Number(s.slice(-12)) % 3}`, `${s}.jsonl`), [rec.user(s, 'one more')], { append: true });
    expect((await runCli(['collect', '--once', '--config', config])).code).toBe(0);
    for (const s of uuids.keys()) {
      const entries = join(root, s, 'index', 'entries.bin');
      const written = readFileSync(entries);
      rmSync(join(root, s, 'index'), { recursive: true });
      const rebuilt = updateIndex(root, s);
      expect(rebuilt.problems).toEqual([]);
      expect(readFileSync(entries).equals(written)).toBe(true);
      expect(readIndexState(root, s)?.indexedSeq).toBe(landedFiles(root, s).at(-1)?.seq);
    }
  }, 120_000);
});
