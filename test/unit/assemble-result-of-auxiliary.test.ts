/**
 * Two definitions asz 0.6 makes (docs/en/concepts-and-designs/conversation-assembly.md and
 * unified-conversation-model.md), held on an assembled session:
 * - `result_of` ("a record → the tool use whose result it carried") is never written as a
 *   relation: the tool node references the request record and the result record, and its
 *   `result_join` attribute is the join's quality.
 * - An ExecutionStream is main, child, auxiliary or judge: the runtime's own side calls
 *   (`query_source: auxiliary`), which no transcript holds, are the auxiliary stream, not open
 *   `telemetry` gaps; a request whose events do not all say so stays unresolved.
 */
import { describe, expect, test } from '@jest/globals';
import { assemble } from '../../src/assemble/assemble.js';
import { TERMS } from '../../src/adapters/claude-code/glossary.js';
import type { PlainLogRecord, PlainObject } from '../../src/otlp/plain-types.js';
import { TranscriptBuilder } from '../helpers/cc.js';
import { diffAssembly } from '../../src/processors/assembler/diff.js';
import { emptyFold } from '../../src/formats/session-flow/fold.js';
import { buildView } from '../../src/formats/view/build.js';
import { ccEventRecord, transcriptEntries, logEntries } from '../helpers/cc-telemetry.js';

const S = '7e1e0000-0000-4000-8000-000000000016';
const T0 = Date.parse('2026-12-01T10:00:00.000Z');

const event = (name: string, timeMs: number, attributes: PlainObject): PlainLogRecord => ccEventRecord(S, name, timeMs, attributes);

function oneTool() {
  const t = new TranscriptBuilder(S, { start: '2026-12-01T10:00:00.000Z' });
  t.prompt('run it', 'p1');
  const call = t.fragment('msg_1', { type: 'tool_use', id: 'tu_1', name: 'Bash', input: { command: 'true' } }, { stop: 'tool_use' });
  t.result('tu_1', 'ok', 'p1');
  const closing = t.fragment('msg_2', { type: 'text', text: 'done' });
  return { t, call, closing };
}

describe('result_of as asz 0.6 defines it', () => {
  test('the tool node references its request and its result record; result_join carries the quality; no result_of relation is written', () => {
    const { t } = oneTool();
    const a = assemble({ session: S, entries: transcriptEntries(1, t) });
    const tool = a.nodes.get('tool/tu_1')!;
    // The request (the call's fragment, row 2) and the result (row 3).
    expect(tool.refs!.map((r) => r.row)).toEqual([2, 3]);
    expect(tool.attrs).toMatchObject({ result: 'available', result_join: 'exact_unique' });
    expect([...a.relations.values()].map((r): string => r.type)).not.toContain('result_of');
    // The glossary says so for a reader who asks for the runtime's words.
    expect(TERMS.result_of!.note).toMatch(/no relation is written/);
  });
});

describe('the auxiliary stream', () => {
  const aux = (request: string, at: number, extra: PlainObject = {}) =>
    event('api_request', at, {
      request_id: request,
      query_source: 'auxiliary',
      model: 'claude-haiku',
      duration_ms: 300,
      cost_usd: 0.0004,
      input_tokens: 90,
      output_tokens: 12,
      ...extra,
    });

  test("the runtime's own calls become one auxiliary stream under the session, with each call's figures and the events as evidence", () => {
    const { t, call, closing } = oneTool();
    const events = [
      event('api_request', T0 + 100, { request_id: 'req_1', query_source: 'main', duration_ms: 900, cost_usd: 0.01 }),
      event('assistant_response', T0 + 101, { request_id: 'req_1', 'message.uuid': call }),
      event('api_request', T0 + 200, { request_id: 'req_2', query_source: 'main', duration_ms: 50, cost_usd: 0.001 }),
      event('assistant_response', T0 + 201, { request_id: 'req_2', 'message.uuid': closing }),
      aux('req_title', T0 + 300),
      event('api_error', T0 + 350, { request_id: 'req_sum', query_source: 'auxiliary', status_code: '529', attempt: 1 }),
      aux('req_sum', T0 + 400, { duration_ms: 700, cost_usd: 0.0011 }),
    ];
    const a = assemble({ session: S, entries: [...transcriptEntries(1, t), ...logEntries(2, events)] });
    const stream = a.nodes.get('stream/auxiliary')!;
    expect(stream).toMatchObject({ kind: 'stream', parent: `session/${S}`, stream: 'auxiliary' });
    expect(stream.attrs).toMatchObject({
      role: 'auxiliary',
      from: 'telemetry',
      calls: 2,
      duration_ms: 1000,
      cost_usd: 0.0015,
      input_tokens: 180,
      output_tokens: 24,
    });
    expect((stream.attrs!.requests as { request_id: string; errors?: number }[]).map((r) => [r.request_id, r.errors])).toEqual([
      ['req_title', undefined],
      ['req_sum', 1],
    ]);
    expect(stream.refs).toHaveLength(3);
    // Not gaps: no telemetry entry names them, and the main calls still joined.
    expect([...a.unresolved.values()].filter((u) => u.kind === 'telemetry')).toEqual([]);
    expect(a.nodes.get('call/msg_1')!.attrs).toMatchObject({ request_id: 'req_1' });
    // It has no epochs, talks or steps of its own.
    expect([...a.nodes.values()].filter((n) => n.stream === 'auxiliary').map((n) => n.kind)).toEqual(['stream']);
    // The view lists it beside main, after it, and renders no talk for it.
    const fold = emptyFold();
    for (const f of diffAssembly(fold, a, 1)) fold.entities.set(f.id, f);
    fold.rounds = 1;
    const doc = buildView({
      conversation: S,
      fold,
      rounds: [],
      files: [],
      problems: [],
      state: 'complete' as never,
      records: { record: () => undefined, lane: () => 'main' },
    });
    expect(doc.streams.map((x) => [x.id, x.role])).toEqual([
      ['stream/main', 'main'],
      ['stream/auxiliary', 'auxiliary'],
    ]);
    expect(doc.talks.every((t) => t.stream !== 'auxiliary')).toBe(true);
  });

  test('a request that joins no call and does not say it was auxiliary stays an open telemetry entry; so does one whose events disagree', () => {
    const { t } = oneTool();
    const events = [
      event('api_request', T0 + 100, { request_id: 'req_lost', duration_ms: 10 }),
      aux('req_mixed', T0 + 200),
      event('api_error', T0 + 150, { request_id: 'req_mixed', query_source: 'main' }),
    ];
    const a = assemble({ session: S, entries: [...transcriptEntries(1, t), ...logEntries(2, events)] });
    expect(a.nodes.has('stream/auxiliary')).toBe(false);
    expect(
      [...a.unresolved.values()]
        .filter((u) => u.kind === 'telemetry')
        .map((u) => u.ref)
        .sort(),
    ).toEqual(['request/req_lost', 'request/req_mixed']);
  });
});
