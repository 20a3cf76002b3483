/**
 * A first parse of a long history reads no landed file it does not need and shares its syncs
 * (issue 19). The index counts each landed file's workspace changes when it learns the file — from
 * memory in the collector, from the file when it is rebuilt — so the round header's totals read
 * only files that hold one. The ground truth is the landed file itself, read record by record.
 * Grouped rounds (many sessions, worker threads) land as a lone parse lands them: installed
 * read-only, the chain's state naming its head, no temporary and no lock left behind; for `aszcol
 * usage` the threads also count each chain they wrote, and the report is the one it works out alone.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import { isChangeRecord } from '../../src/formats/session-data/changes.js';
import { windowChanges } from '../../src/processors/assembler/window-changes.js';
import { discardIndex, loadIndex, updateIndex } from '../../src/storage/index.js';
import { cliRoot, runCli } from '../helpers/cli.js';
import { keepUsage, usageOfFold } from '../../src/assemble/usage/load.js';
import { loadChain } from '../../src/storage/chain.js';
import { chainHeadKey } from '../../src/storage/usage-cache.js';
import { cleanupTemp } from '../helpers/tmp.js';
import { rec, writeLines } from '../helpers/transcript.js';

afterAll(cleanupTemp);

const sid = (i: number) => `7c1d2e3f-2222-4333-8444-${String(i).padStart(12, '0')}`;
const CWD = '/home/me/project';

/** An Edit's call and its result as Claude Code writes them, the result carrying the runtime's patch. */
function editTurn(session: string, i: number): object[] {
  const id = `toolu_${session.slice(-6)}_${i}`;
  return [
    rec.assistant(session, `msg_${session.slice(-6)}_${i}`, [{ type: 'tool_use', id, name: 'Edit', input: { file_path: `${CWD}/a${i}.ts` } }], {
      stop_reason: 'tool_use',
    }),
    rec.user(session, '', {
      cwd: CWD,
      message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: id, content: 'done' }] },
      toolUseResult: {
        filePath: `${CWD}/a${i}.ts`,
        oldString: 'x',
        newString: 'y\nz',
        originalFile: 'x\n',
        structuredPatch: [{ oldStart: 1, oldLines: 1, newStart: 1, newLines: 2, lines: ['-x', '+y', '+z'] }],
      },
    }),
  ];
}

/** Per landed file (by its path under the session), how many records carry a `changes/1` part: read from the file. */
function changesOnDisk(root: string, session: string, rels: string[]): Record<string, number> {
  return Object.fromEntries(
    rels.map((rel) => [rel, readSessionData(join(root, rel)).records.filter((r) => r.parts.some((p) => p.k === 'data' && isChangeRecord(p.data))).length]),
  );
}

describe('a first parse reads only the landed files that hold a workspace change', () => {
  test('the index counts each file’s changes as collected and as rebuilt from the files, and the round header totals them', async () => {
    const { root, src, config } = cliRoot('aszcol-first-reads-');
    const s = sid(1);
    writeLines(join(src, '-home-me-project', `${s}.jsonl`), [rec.user(s, 'edit two files'), ...editTurn(s, 1), ...editTurn(s, 2)]);
    writeLines(join(src, '-home-me-project', s, 'subagents', 'agent-a0000000000000001.jsonl'), [
      rec.user(s, 'a helper', { isSidechain: true, agentId: 'a0000000000000001' }),
    ]);
    expect((await runCli(['collect', '--once', '--config', config])).code).toBe(0);

    const collected = loadIndex(root, s)!;
    const truth = changesOnDisk(
      root,
      s,
      collected.files.map((f) => f.rel),
    );
    expect(Object.values(truth).sort()).toEqual([0, 2]); // the main transcript holds both edits, the helper's none
    expect(Object.fromEntries(collected.files.map((f) => [f.rel, f.changes]))).toEqual(truth);

    discardIndex(root, s);
    const rebuilt = updateIndex(root, s).index;
    expect(Object.fromEntries(rebuilt.files.map((f) => [f.rel, f.changes]))).toEqual(truth);

    // A file the index says holds no change is never opened; one it knows nothing about (an older index) is.
    const gone = { seq: 99, kind: 'transcript' as const, rel: `${s}/streams/main/not-there.sd`, digest: '', records: 1 };
    expect(windowChanges(root, [{ ...gone, changes: 0 }], () => true)).toEqual([]);
    expect(() => windowChanges(root, [gone], () => true)).toThrow(/ENOENT/);

    const parsed = await runCli(['parse', '--json', '--config', config]);
    expect(parsed.code).toBe(0);
    const rounds = join(root, '_conversations', s, 'rounds');
    const [round] = readdirSync(rounds);
    const header = JSON.parse(readFileSync(join(rounds, round!), 'utf8').split('\n')[0]!) as { changes: number; lines_added: number; lines_removed: number };
    expect(header).toMatchObject({ changes: 2, lines_added: 4, lines_removed: 2 });
  }, 120_000);
});

describe('a first parse of many sessions, rounds synced a group at a time', () => {
  test('every round is installed read-only, each chain’s state names its head, and nothing is left locked or half-written', async () => {
    const { root, src, config } = cliRoot('aszcol-first-group-');
    const n = 30; // more than two groups over two threads
    for (let i = 0; i < n; i++)
      writeLines(join(src, `-p${i % 4}`, `${sid(100 + i)}.jsonl`), [rec.user(sid(100 + i), `prompt ${i}`), ...editTurn(sid(100 + i), i)]);
    expect((await runCli(['collect', '--once', '--config', config])).code).toBe(0);

    const parsed = await runCli(['parse', '--json', '--config', config]);
    expect(parsed.stderr).toBe('');
    expect(parsed.code).toBe(0);
    const rows = JSON.parse(parsed.stdout) as { session: string; status: string; head: number; headDigest: string }[];
    expect(rows.map((r) => r.status)).toEqual(Array(n).fill('written'));
    for (const r of rows) {
      const chain = join(root, '_conversations', r.session);
      const rounds = readdirSync(join(chain, 'rounds'));
      expect(rounds).toHaveLength(r.head);
      for (const name of rounds) expect(statSync(join(chain, 'rounds', name)).mode & 0o222).toBe(0);
      expect(readdirSync(chain).filter((x) => x.startsWith('.tmp-') || x === '.lock')).toEqual([]);
      expect(rounds.filter((x) => x.startsWith('.tmp-'))).toEqual([]);
      const state = readFileSync(join(chain, 'conversation.state'), 'utf8');
      expect(state).toMatch(new RegExp(`^head_digest\\s+${r.headDigest}$`, 'm'));
      expect(state).toMatch(new RegExp(`^head\\s+${r.head}$`, 'm'));
    }
    // The next parse finds every chain settled: the state and the rounds on disk agree.
    const again = await runCli(['parse', '--json', '--config', config]);
    expect((JSON.parse(again.stdout) as { status: string }[]).map((r) => r.status)).toEqual(Array(n).fill('unchanged'));
  }, 180_000);
});

describe('aszcol usage from scratch over many sessions', () => {
  test('the calls the parse threads counted into each chain’s usage cache (from the folds in memory) are those the chains read back give, and so is the report', async () => {
    const { root, src, config } = cliRoot('aszcol-usage-scratch-');
    const n = 20;
    for (let i = 0; i < n; i++) {
      const s = sid(200 + i);
      writeLines(join(src, `-p${i % 3}`, `${s}.jsonl`), [
        rec.user(s, `prompt ${i}`),
        ...editTurn(s, i),
        rec.assistant(s, `msg_end_${i}`, [{ type: 'text', text: 'done' }]),
      ]);
    }
    const args = ['usage', 'session', '--json', '--timezone', 'UTC', '--config', config];
    const scratch = await runCli(args);
    expect(scratch.stderr).toBe('');
    expect(scratch.code).toBe(0);
    const cached = readdirSync(join(root, '_conversations'), { withFileTypes: true })
      .filter((e) => e.isDirectory() && readdirSync(join(root, '_conversations', e.name)).includes('usage.cache.json'))
      .map((e) => e.name);
    expect(cached).toHaveLength(n);
    // The threads work each chain's calls out from the fold their parse left in memory; the report below folds the rounds read back from disk.
    const cacheOf = (c: string) => readFileSync(join(root, '_conversations', c, 'usage.cache.json'), 'utf8');
    const fromMemory = new Map(cached.map((c) => [c, cacheOf(c)]));

    for (const c of cached) rmSync(join(root, '_conversations', c, 'usage.cache.json'));
    const alone = await runCli([...args, '--no-collect']);
    expect(alone.code).toBe(0);
    for (const c of cached) expect(cacheOf(c)).toBe(fromMemory.get(c));

    // A usage worked out for a head that is no longer the chain's head (another parser extended it) is not kept.
    const c = cached[0]!;
    const entry = usageOfFold(root, c, loadChain(root, c).fold);
    rmSync(join(root, '_conversations', c, 'usage.cache.json'));
    keepUsage(root, c, `r000002-000000000000.sf:10`, entry);
    expect(readdirSync(join(root, '_conversations', c))).not.toContain('usage.cache.json');
    keepUsage(root, c, chainHeadKey(root, c)!, entry);
    expect(cacheOf(c)).toBe(fromMemory.get(c));
    const report = JSON.parse(scratch.stdout) as { rows: unknown[]; totals: { calls: number; output_tokens: number } };
    expect(report.rows).toHaveLength(n);
    expect(report.totals).toMatchObject({ calls: 2 * n, output_tokens: 2 * n * 5 });
    expect(JSON.parse(scratch.stdout)).toEqual(JSON.parse(alone.stdout));
  }, 180_000);
});
