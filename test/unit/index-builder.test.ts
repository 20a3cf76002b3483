/**
 * A pass writes each landed record's index entry into the index's columns as it lands
 * (storage/index-builder.ts), holding no entry object. The ground truth is the index as it was always
 * built: `entryFromRecord` for each record, encoded by `encodeIndex`, and, on disk, `updateIndex`
 * reading the landed files back. Records come from the real converters: a transcript with tool
 * calls, repeated usage and a failed attempt, the runtime's events and spans, provider bodies.
 * A landed file that is abandoned half way leaves no entry behind, and a record replaced because it
 * could not be written is indexed once, as what was written.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { convertTranscriptLine } from '../../src/adapters/claude-code/dialect.js';
import { otlpLogRecordToSd, otlpSpanToSd } from '../../src/adapters/claude-code/otlp-dialect.js';
import { bodyParts } from '../../src/formats/session-data/provider-body.js';
import type { SdRecord } from '../../src/formats/session-data/types.js';
import { encodeIndex } from '../../src/storage/index-codec.js';
import { IndexBuilder, type EntryFile } from '../../src/storage/index-builder.js';
import { entryFromRecord, updateIndex } from '../../src/storage/index.js';
import { extendIndex, FreshIndex } from '../../src/storage/fresh-index.js';
import { indexNewSession } from '../../src/storage/new-session.js';
import { landLines } from '../../src/storage/landing.js';
import { otlpDir } from '../../src/storage/layout.js';
import { TranscriptBuilder } from '../helpers/cc.js';
import { ccEventRecord, llmRequestSpan } from '../helpers/cc-telemetry.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const S = '1d3e0000-0000-4000-8000-00000000b111';
const T0 = Date.parse('2026-12-01T10:00:00.000Z');
type Converted = Omit<SdRecord, 'ord' | 'off' | 'sha' | 'bytes'>;
const withProvenance = (r: Converted, i: number): SdRecord => ({ ord: i + 1, off: i * 100, sha: `s${i}`, bytes: 100, ...r });

/** A transcript with a tool call, its result, a message in three fragments repeating one usage, a failed attempt, and a helper's line. */
function transcript(usage = { input_tokens: 12, output_tokens: 7, cache_read_input_tokens: 300, cache_creation_input_tokens: 4 }): Converted[] {
  const t = new TranscriptBuilder(S, { start: '2026-12-01T10:00:00.000Z' });
  t.prompt('list the files, é 🧪', 'p1');
  t.fragment('msg_1', { type: 'thinking', thinking: 'look first', signature: 'sig' }, { stop: null, usage });
  t.fragment('msg_1', { type: 'text', text: 'Listing.' }, { stop: null, usage });
  t.fragment('msg_1', { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'ls' } }, { stop: 'tool_use', usage });
  t.result('toolu_1', 'a.txt\nb.txt', 'p1');
  t.push({
    type: 'system',
    subtype: 'api_error',
    level: 'error',
    error: { status: 529, error: { type: 'overloaded_error' } },
    retryAttempt: 1,
    retryInMs: 500,
  });
  t.fragment('msg_2', { type: 'text', text: 'Two files.' }, { usage: { input_tokens: 20, output_tokens: 3 }, model: 'claude-sonnet-5' });
  t.user('helper task', { isSidechain: true, agentId: 'a0000000000000001' });
  return t.lines.map((l) => convertTranscriptLine(Buffer.from(JSON.stringify(l))));
}

function events(): Converted[] {
  return [
    ccEventRecord(S, 'api_request', T0 + 10, { request_id: 'req_1', model: 'claude-opus-5-5', duration_ms: 1200, success: true }),
    ccEventRecord(S, 'tool_result', T0 + 20, { tool_name: 'Bash', success: false, tool_use_id: 'toolu_1', note: 'x'.repeat(300) }),
  ].map((e) => otlpLogRecordToSd(e).record);
}

function spans(): Converted[] {
  return [otlpSpanToSd(llmRequestSpan(S, T0 + 100, T0 + 3000, { request_id: 'req_1', success: true, attempt: 2 }, [[1, 10]])).record];
}

function bodies(): Converted[] {
  const request = Buffer.from(JSON.stringify({ model: 'claude-x', messages: [{ role: 'user', content: 'run it' }] }));
  return [{ from: 'runtime', parts: bodyParts(request, { role: 'request', src: 'b1.request.json', session: S, call: 'msg_1', request: 'req_1' }) }];
}

/** Each kind of file, with the records that land in it. */
const FILES: { file: EntryFile; records: () => Converted[] }[] = [
  { file: { kind: 'transcript', stream: 'main' }, records: transcript },
  { file: { kind: 'otlp_log' }, records: events },
  { file: { kind: 'otlp_span' }, records: spans },
  { file: { kind: 'provider_body' }, records: bodies },
  { file: { kind: 'transcript', stream: 'a0000000000000001', batch: 'wf_1' }, records: transcript },
];

describe('the index written straight into its columns', () => {
  test('gives the bytes entryFromRecord and encodeIndex give, for every kind of file', () => {
    const builder = new IndexBuilder();
    const entries = FILES.flatMap(({ file, records }, f) =>
      records().map((r, i) => {
        builder.addRecord(withProvenance(r, i), f + 1, i + 1, file);
        return entryFromRecord(withProvenance(r, i), f + 1, i + 1, file);
      }),
    );
    expect(entries.length).toBe(builder.entries);
    expect(entries.some((e) => e.figures)).toBe(true);
    const head = { session: S, indexedSeq: FILES.length, files: [] };
    expect(builder.encode(head).equals(encodeIndex({ ...head, entries }))).toBe(true);
    expect(Buffer.concat(builder.encodePieces(head)).equals(builder.encode(head))).toBe(true);
  });

  test('forgets the records after a mark, and the strings and figures only they used', () => {
    // The usage the forgotten records carried comes again right after: it must be written anew, not copied from what was forgotten.
    const usage = { input_tokens: 1, output_tokens: 2, cache_read_input_tokens: 3, cache_creation_input_tokens: 5 };
    const [a, b, c] = [[...events(), ...transcript()], transcript(usage).slice(0, 4), transcript(usage)];
    const kept = new IndexBuilder();
    const rolled = new IndexBuilder();
    const file: EntryFile = { kind: 'transcript', stream: 'main' };
    a.forEach((r, i) => [kept, rolled].forEach((x) => x.addRecord(withProvenance(r, i), 1, i + 1, file)));
    const m = rolled.mark();
    b.forEach((r, i) => rolled.addRecord(withProvenance(r, i), 2, i + 1, { kind: 'transcript', stream: 'b' }));
    rolled.rollback(m);
    c.forEach((r, i) => [kept, rolled].forEach((x) => x.addRecord(withProvenance(r, i), 2, i + 1, file)));
    const head = { session: S, indexedSeq: 2, files: [] };
    expect(rolled.entries).toBe(a.length + c.length);
    expect(rolled.encode(head).equals(kept.encode(head))).toBe(true);
  });
});

describe('a pass that lands files into a fresh index', () => {
  const target = (root: string, seq: number) => ({
    dir: otlpDir(root, S),
    prefix: 'otlp_log',
    stamp: `20261201T10000${seq}.000000000Z`,
    at: new Date(T0).toISOString(),
    header: { kind: 'otlp_log' as const, adapter: 'test/1', dialect: 'test/1', src: 'otlp/logs', session: S },
  });
  const land = (root: string, seq: number, records: Converted[], fresh: FreshIndex) =>
    landLines(
      target(root, seq),
      seq,
      records.map((_, i) => ({ line: Buffer.from(String(i)), off: i, ord: i + 1 })),
      (line) => {
        const r = records[Number(line.toString())]!;
        if ((r as { fail?: true }).fail) throw new Error('the source went away');
        return r;
      },
      undefined,
      fresh,
    );

  /** Every record here; then the same root's index rebuilt from its landed files must read the same bytes. */
  function landedRoot(): { root: string; fresh: FreshIndex } {
    const root = join(tempDir('aszcol-index-builder-'), 'data');
    mkdirSync(otlpDir(root, S), { recursive: true });
    const fresh = new FreshIndex();
    // Nested too deep to be written: the record lands as an unknown part saying why, and only that is indexed.
    let deep: unknown = 'bottom';
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const unwritable: Converted = { from: 'runtime', id: 'deep-1', parts: [{ k: 'data', state: 'available', bytes: 1, data: deep }] };
    land(root, 1, [...events(), unwritable, ...events()], fresh);
    // A file abandoned half way (its source failed): nothing of it is indexed.
    expect(() => land(root, 2, [...events(), { fail: true } as unknown as Converted], fresh)).toThrow('the source went away');
    land(root, 3, spans(), fresh);
    return { root, fresh };
  }

  const rebuilt = (root: string) => {
    const path = join(root, S, 'index', 'entries.bin');
    const written = readFileSync(path);
    rmSync(join(root, S, 'index'), { recursive: true });
    expect(updateIndex(root, S).problems).toEqual([]);
    return { written, fromDisk: readFileSync(path) };
  };

  test('a new session: its index from the columns equals the one its landed files give', () => {
    const { root, fresh } = landedRoot();
    expect(fresh.files.map((f) => [f.seq, f.records])).toEqual([
      [1, 5],
      [3, 1],
    ]);
    indexNewSession(root, S, fresh);
    const { written, fromDisk } = rebuilt(root);
    expect(written.equals(fromDisk)).toBe(true);
  });

  test('a session with an index: the entries read back from the columns extend it to the same bytes', () => {
    const { root, fresh } = landedRoot();
    const { added, problems } = extendIndex(root, S, fresh);
    expect({ added, problems }).toEqual({ added: 2, problems: [] });
    const { written, fromDisk } = rebuilt(root);
    expect(written.equals(fromDisk)).toBe(true);
  });
});
