/**
 * Stage 9 joins ids by number. Within one loaded index a string has one number, so the join keys
 * typed arrays by the index's own numbers; records built in memory, or read from two loads, share
 * no table, and then every id is numbered as met. Equal text must get one code either way, a
 * code must give its text back, and the row groups keyed by codes must behave as the ones keyed by
 * text (row-groups.test.ts).
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CodeGroups, CodeMap } from '../../src/assemble/code-groups.js';
import { loadIndex, saveIndex, type IndexEntry } from '../../src/storage/index.js';
import { IdCodes, sharedStringTable, stringCodedOf } from '../../src/storage/string-codes.js';
import { TranscriptBuilder } from '../helpers/cc.js';
import { ccEventRecord, logEntries, transcriptEntries } from '../helpers/cc-telemetry.js';

const S = '1dc0de00-0000-4000-8000-000000000001';

function entries(): IndexEntry[] {
  const t = new TranscriptBuilder(S, { start: '2026-11-30T10:00:00.000Z' });
  t.prompt('list the files', 'p1');
  t.fragment('msg_1', { type: 'tool_use', id: 'tu_1', name: 'Bash', input: { command: 'ls' } }, { stop: 'tool_use' });
  t.result('tu_1', 'a b', 'p1');
  const at = Date.parse('2026-11-30T10:00:01.000Z');
  const events = [
    ccEventRecord(S, 'api_request', at, { request_id: 'req_1', duration_ms: 700, 'prompt.id': 'p1' }),
    ccEventRecord(S, 'tool_result', at, { request_id: 'req_1', tool_use_id: 'tu_1', duration_ms: '15', success: 'true' }),
  ];
  return [...transcriptEntries(1, t), ...logEntries(2, events)];
}

describe('id codes', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aszcol-id-codes-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const load = (name: string, es: IndexEntry[]) => {
    saveIndex(join(dir, name), { session: S, indexedSeq: 2, files: [], entries: es });
    return loadIndex(join(dir, name), S)!.entries;
  };

  test('records of one loaded index share its string table, and a record id has the same number wherever it is named', () => {
    const built = entries();
    const loaded = load('one', built);
    const table = sharedStringTable(loaded);
    expect(table).toBeDefined();
    const call = loaded.find((e) => e.call === 'msg_1')!;
    const coded = stringCodedOf(call)!;
    expect(table![coded.code('call')]).toBe('msg_1');
    const use = call.parts.findIndex((p) => p.k === 'call' && p.id === 'tu_1');
    const event = loaded.find((e) => e.fileKind === 'otlp_log' && e.figures && [...Array(e.figures.count).keys()].some((i) => e.figures!.value(i) === 'tu_1'))!;
    const figures = event.figures as unknown as { valueCode(i: number): number; value(i: number): unknown; count: number };
    const at = [...Array(figures.count).keys()].find((i) => figures.value(i) === 'tu_1')!;
    // The transcript's tool use and the event naming it: one string, one number.
    expect(figures.valueCode(at)).toBe(coded.partIdCode(use));
    expect(table![coded.partIdCode(use)]).toBe('tu_1');
  });

  test('records built in memory, or read from two loads, share no table', () => {
    const built = entries();
    const loaded = load('two-a', built);
    expect(sharedStringTable(built)).toBeUndefined();
    expect(sharedStringTable([...loaded.slice(0, 2), built[2]!])).toBeUndefined();
    expect(sharedStringTable([...loaded.slice(0, 2), ...load('two-b', built).slice(2)])).toBeUndefined();
  });

  test('with a table its numbers are the codes, and text it does not hold is numbered after it; without one, text is numbered as met', () => {
    const withTable = new IdCodes(['req_a', 'tu_a']);
    expect(withTable.of('tu_a', 1)).toBe(1);
    expect(withTable.of('req_new', -1)).toBe(2);
    expect(withTable.of('req_new', -1)).toBe(2);
    expect(withTable.text(1)).toBe('tu_a');
    expect(withTable.text(2)).toBe('req_new');
    const own = new IdCodes(undefined);
    expect([own.of('req_b', 7), own.of('req_c', -1), own.of('req_b', -1)]).toEqual([0, 1, 0]);
    expect(own.text(1)).toBe('req_c');
    expect(own.size).toBe(2);
  });

  test('groups by code keep one group per code in row order, first seen first, and a code map grows past its size', () => {
    const codes = [5, 5, 9, -1, 5, 9, 9, 70_000, 5];
    const g = new CodeGroups(codes.length, 10);
    codes.forEach((c, r) => g.add(c, r));
    expect(g.keys()).toEqual([5, 9, 70_000]);
    expect(g.rows(5)).toEqual([0, 1, 4, 8]);
    expect(g.rows(9)).toEqual([2, 5, 6]);
    expect(g.rows(70_000)).toEqual([7]);
    expect([g.first(3), g.first(-1), g.first(1e9)]).toEqual([-1, -1, -1]);
    const m = new CodeMap(4);
    m.set(2, 0);
    m.set(100, 41);
    expect([m.get(2), m.get(100), m.get(3), m.get(-1), m.has(2), m.has(99)]).toEqual([0, 41, -1, -1, true, false]);
  });
});
