/**
 * The index's stored form (storage/index-codec.ts): loading reads its columns in place. Random
 * entries — every field present or absent, ids with and without non-ASCII characters, figures of every type, usage repeated record after record — must come back exactly as they were built, whether
 * the columns are viewed in place or copied (a buffer that does not start aligned), and an index
 * whose bytes were cut short must be refused, never read as zeros.
 */
import { describe, expect, test } from '@jest/globals';
import { decodeIndex, encodeIndex } from '../../src/storage/index-codec.js';
import { FigureList, readUsageFigures, usageFigures, type Figures } from '../../src/storage/index-figures.js';
import { INDEX_STRING_FIELDS, type IndexEntry, type IndexedPart, type SessionIndex } from '../../src/storage/index-types.js';
import type { FileKind, PartKind, PartState, Usage } from '../../src/formats/session-data/types.js';

/** A small deterministic generator, so a failure names a seed that reproduces it. */
function random(seed: number): () => number {
  let x = seed >>> 0 || 1;
  return () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
}

const FILE_KINDS: FileKind[] = ['transcript', 'otlp_log', 'otlp_span', 'provider_body'] as FileKind[];
const PART_KINDS: PartKind[] = ['text', 'reasoning', 'call', 'result'];
const STATES: PartState[] = ['available', 'truncated', 'redacted', 'omitted', 'unavailable'];

function randomIndex(seed: number, entries: number, alphabet: string): SessionIndex {
  const r = random(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(r() * xs.length)]!;
  // Ids repeat, as a call id does across its fragments: the string table numbers each once.
  const word = () => `${pick(['msg', 'tu', 'req', 'a'])}_${Math.floor(r() * 50)}${r() < 0.3 ? pick([...alphabet]) : ''}`;
  const maybe = <T>(v: () => T): T | undefined => (r() < 0.5 ? v() : undefined);
  const out: IndexEntry[] = [];
  for (let i = 0; i < entries; i++) {
    const e: IndexEntry = {
      seq: 1 + Math.floor(i / 10),
      row: 1 + (i % 10),
      fileKind: pick(FILE_KINDS),
      flags: r() < 0.3 ? [pick(['sidechain', 'api_error', 'meta']), 'compact'] : [],
      parts: [],
    };
    const stream = maybe(word);
    if (stream !== undefined) e.stream = stream;
    const batch = maybe(word);
    if (batch !== undefined) e.fileBatch = batch;
    for (const f of INDEX_STRING_FIELDS) {
      const v = maybe(word);
      if (v !== undefined) e[f] = v;
    }
    if (r() < 0.8) e.time = Date.parse('2026-11-30T10:00:00Z') + Math.floor(r() * 1e9);
    const parts = Math.floor(r() * 4);
    for (let p = 0; p < parts; p++) {
      const part: IndexedPart = { block: p * 2, k: pick(PART_KINDS), state: pick(STATES) };
      const id = maybe(word),
        name = maybe(word),
        of = maybe(word);
      if (id !== undefined) part.id = id;
      if (name !== undefined) part.name = name;
      if (of !== undefined) part.of = of;
      if (r() < 0.3) part.failed = r() < 0.5;
      e.parts.push(part);
    }
    if (r() < 0.4) {
      const f = new FigureList();
      f.add('event', pick(['api_request', 'tool_result']), true);
      f.add('request_id', word(), false);
      f.add('duration_ms', Math.floor(r() * 5000) / 10, false);
      f.add('success', r() < 0.5, false);
      if (r() < 0.3) f.add('note', `${word()} ${alphabet}`, false);
      e.figures = f;
    } else if (r() < 0.6) {
      // Usage as a transcript record carries it: drawn from a few, so runs of one usage (a message's fragments) come back to back.
      const usages: Usage[] = [
        { in: 10, out: 5, cache_read: 300, cache_write: 20 },
        { in: 10, out: 5 },
        { out: 7, cache_write: 0 },
      ];
      e.figures = usageFigures(pick(usages), pick(['claude-opus-5-5', 'claude-sonnet-5', undefined]));
    }
    out.push(e);
  }
  const files = [{ seq: 1, kind: 'transcript' as FileKind, rel: `s/transcript/t${alphabet}.sd`, digest: 'ab'.repeat(32), records: entries, changes: 0 }];
  return { session: 's', indexedSeq: Math.ceil(entries / 10), files, entries: out };
}

/** An entry's usage and model as text, to find runs of one usage. */
const usageOf = (e: IndexEntry) => {
  const u = e.figures ? readUsageFigures(e.figures) : undefined;
  return u && JSON.stringify(u);
};

/** Every field an entry answers, as plain data: what assembly can read from it. */
function plain(e: IndexEntry): Record<string, unknown> {
  const figures = (f: Figures | undefined) => (f ? Array.from({ length: f.count }, (_, i) => [f.key(i), f.value(i), f.own(i)]) : undefined);
  const o: Record<string, unknown> = {
    seq: e.seq,
    row: e.row,
    fileKind: e.fileKind,
    stream: e.stream,
    fileBatch: e.fileBatch,
    time: e.time,
    flags: [...e.flags],
  };
  for (const f of INDEX_STRING_FIELDS) o[f] = e[f];
  o.parts = e.parts.map((p) => ({ ...p }));
  o.figures = figures(e.figures);
  return o;
}

/**
 * The same bytes `shift` bytes into a larger buffer, as a pooled read hands them over: at 8 the
 * columns are viewed in place at an offset, at 1 they cannot be and are copied.
 */
function shifted(bytes: Buffer, shift: number): Buffer {
  const backing = Buffer.alloc(bytes.length + shift);
  bytes.copy(backing, shift);
  const out = backing.subarray(shift);
  expect(out.byteOffset).toBe(shift);
  return out;
}

describe('the stored index', () => {
  test.each([
    [1, 'xyz'],
    [2, 'é—✓🚀'],
    [3, 'q'],
  ])('random entries (seed %d, extra characters %s) load back exactly as built, viewed in place, at an offset or copied', (seed, alphabet) => {
    const built = randomIndex(seed, 400, alphabet);
    const bytes = encodeIndex(built);
    const expected = built.entries.map(plain);
    for (const buf of [Buffer.from(bytes), shifted(bytes, 8), shifted(bytes, 1)]) {
      const loaded = decodeIndex(buf)!;
      expect(loaded.session).toBe('s');
      expect(loaded.indexedSeq).toBe(built.indexedSeq);
      expect(loaded.files).toEqual(built.files);
      expect(loaded.entries.map(plain)).toEqual(expected);
      // The usage a report reads back is the usage each record was built with, repeated runs included.
      const usage = (e: IndexEntry) => (e.figures ? readUsageFigures(e.figures) : undefined);
      expect(loaded.entries.map(usage)).toEqual(built.entries.map(usage));
    }
    expect(
      built.entries.filter((e, i) => i > 0 && e.figures && usageOf(e) !== undefined && usageOf(e) === usageOf(built.entries[i - 1]!)).length,
    ).toBeGreaterThan(3);
  });

  test('an index cut short anywhere in its columns is refused, not read as zeros', () => {
    const bytes = encodeIndex(randomIndex(4, 200, 'abc'));
    for (const cut of [8, 1000, Math.floor(bytes.length / 2)]) {
      expect(() => decodeIndex(Buffer.from(bytes.subarray(0, bytes.length - cut)))).toThrow(RangeError);
    }
    expect(decodeIndex(Buffer.from(bytes.subarray(0, 4)))).toBeUndefined(); // not even the prefix: not an index
  });
});
