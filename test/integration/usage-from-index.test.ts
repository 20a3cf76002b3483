/**
 * A usage report reads each call's usage from the session's index, kept as the record landed, not
 * from the landed file (issue 19: re-reading every transcript was an eighth of a first parse). The
 * ground truth is the source transcript's own `message.usage`; the landed-file reader must agree
 * with the index call for call, an index without the usage (written before it was kept) must fall
 * back to the files, and with the landed transcripts out of reach the index alone still counts
 * every call.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { callsOfChain } from '../../src/assemble/usage/calls.js';
import { indexedUsageRows, landedUsageRows } from '../../src/assemble/usage/rows.js';
import { loadChain } from '../../src/storage/chain.js';
import { discardIndex, loadIndex, updateIndex, type IndexEntry, type SessionIndex } from '../../src/storage/index.js';
import { cliRoot, runCli } from '../helpers/cli.js';
import { cleanupTemp } from '../helpers/tmp.js';
import { rec, writeLines } from '../helpers/transcript.js';

afterAll(cleanupTemp);

const sid = (i: number) => `9a1b2c3d-5555-4666-8777-${String(i).padStart(12, '0')}`;

/** The provider usage each message states in the source, by message id: the ground truth. */
const stated = new Map<string, { input: number; output: number; cache_read: number; cache_write: number; model: string; time: number }>();

/** An answered message whose usage differs from every other's (one leaves out the cache counts, as a provider may). */
function answer(session: string, i: number, k: number): object {
  const id = `msg_${session.slice(-4)}_${i}_${k}`;
  const r = rec.assistant(session, id, [{ type: 'text', text: `answer ${k}` }]) as { timestamp: string; message: Record<string, unknown> };
  const withCache = k % 2 === 0;
  const usage = {
    input_tokens: 100 * i + k,
    output_tokens: 7 * k + 1,
    ...(withCache ? { cache_read_input_tokens: 1000 + i, cache_creation_input_tokens: 30 + k } : {}),
  };
  const model = k === 2 ? 'claude-sonnet-5' : 'claude-opus-5-5';
  r.message.usage = usage;
  r.message.model = model;
  r.timestamp = `2026-11-30T0${i}:1${k}:00.000Z`;
  stated.set(id, {
    input: usage.input_tokens,
    output: usage.output_tokens,
    cache_read: withCache ? 1000 + i : 0,
    cache_write: withCache ? 30 + k : 0,
    model,
    time: Date.parse(r.timestamp),
  });
  return r;
}

/** The same index with no figures kept for any record and no source path for any file, as one written before they were kept reads. */
function asOlderIndex(ix: SessionIndex): SessionIndex {
  const plain = (e: IndexEntry): IndexEntry => {
    const out: IndexEntry = { seq: e.seq, row: e.row, fileKind: e.fileKind, flags: e.flags, parts: e.parts };
    if (e.time !== undefined) out.time = e.time;
    return out;
  };
  return { ...ix, files: ix.files.map(({ src: _, ...f }) => f), entries: ix.entries.map(plain) };
}

describe('a usage report reads the usage the index kept', () => {
  test('call for call the index (as collected and as rebuilt) gives what the source states and what the landed files give; an older index falls back; without the landed files the index still counts', async () => {
    const { root, src, config } = cliRoot('aszcol-usage-index-');
    const sessions = [1, 2, 3].map(sid);
    sessions.forEach((s, i) =>
      writeLines(join(src, `-home-me-p${i}`, `${s}.jsonl`), [
        rec.user(s, `prompt ${i}`),
        answer(s, i + 1, 1),
        rec.user(s, 'more'),
        answer(s, i + 1, 2),
        answer(s, i + 1, 3),
      ]),
    );
    expect((await runCli(['collect', '--once', '--config', config])).code).toBe(0);
    const parsed = await runCli(['parse', '--json', '--config', config]);
    expect(parsed.code).toBe(0);

    for (const [i, s] of sessions.entries()) {
      const fold = loadChain(root, s).fold;
      const index = loadIndex(root, s)!;
      const fromIndex = callsOfChain(s, fold, indexedUsageRows(root, s, index));
      const fromFiles = callsOfChain(s, fold, landedUsageRows(root, s));
      expect(fromIndex.uncounted).toEqual([]);
      expect(fromIndex.calls).toHaveLength(3);
      for (const c of fromIndex.calls) {
        const truth = stated.get(c.call)!;
        expect(c.tokens).toEqual({ input: truth.input, output: truth.output, cache_read: truth.cache_read, cache_write: truth.cache_write });
        expect(c.model).toBe(truth.model);
        expect(c.time).toBe(truth.time);
        expect(c.project).toBe(`-home-me-p${i}`);
      }
      expect(fromIndex).toEqual(fromFiles);
      expect(index.files.filter((f) => f.kind === 'transcript').map((f) => f.src)).toEqual([`-home-me-p${i}/${s}.jsonl`]);
      expect(callsOfChain(s, fold, indexedUsageRows(root, s, asOlderIndex(index)))).toEqual(fromFiles);

      // The landed transcripts moved out of reach: the files give nothing, the index every call and the project; an older index, no project.
      const streams = join(root, s, 'streams');
      renameSync(streams, `${streams}.away`);
      try {
        const noFiles = callsOfChain(s, fold, landedUsageRows(root, s));
        expect(noFiles.calls).toEqual([]);
        expect(noFiles.uncounted).toHaveLength(3);
        const indexOnly = callsOfChain(s, fold, indexedUsageRows(root, s, index));
        expect(indexOnly).toEqual(fromFiles);
        const older = callsOfChain(s, fold, indexedUsageRows(root, s, asOlderIndex(index)));
        expect(older.calls).toEqual([]);
        expect(older.uncounted).toHaveLength(3);
      } finally {
        renameSync(`${streams}.away`, streams);
      }
      // An index rebuilt from the landed files keeps the same usage and source paths as the collector's.
      discardIndex(root, s);
      const rebuilt = updateIndex(root, s).index;
      expect(rebuilt.files.map((f) => f.src)).toEqual(index.files.map((f) => f.src));
      expect(callsOfChain(s, fold, indexedUsageRows(root, s, rebuilt))).toEqual(fromFiles);
    }
  }, 120_000);
});
