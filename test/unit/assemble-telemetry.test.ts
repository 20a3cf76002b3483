/**
 * Stage 9: Claude Code's own events and spans joined to the calls, tools and talks they describe,
 * by identifiers only. The records go through the real converters (transcript dialect, OTLP
 * dialect) and the index's own entry builder, so the join sees exactly what a landed root holds.
 */
import { describe, expect, test } from '@jest/globals';
import { assemble } from '../../src/assemble/assemble.js';
import type { PlainLogRecord, PlainObject, PlainSpan } from '../../src/otlp/plain-types.js';
import { diffAssembly } from '../../src/processors/assembler/diff.js';
import { emptyFold } from '../../src/formats/session-flow/fold.js';
import { TranscriptBuilder } from '../helpers/cc.js';
import { ccEventRecord, transcriptEntries, logEntries, spanEntries } from '../helpers/cc-telemetry.js';

const S = '7e1e0000-0000-4000-8000-000000000015';
const T0 = Date.parse('2026-11-30T10:00:00.000Z');

const event = (name: string, timeMs: number, attributes: PlainObject): PlainLogRecord => ccEventRecord(S, name, timeMs, attributes);

function span(name: string, startMs: number, ms: number, attributes: PlainObject, ids: { spanId: string; parentSpanId?: string }): PlainSpan {
  return {
    traceId: 'ab'.repeat(16),
    spanId: ids.spanId,
    parentSpanId: ids.parentSpanId ?? '',
    traceState: '',
    flags: 0,
    name,
    kind: 1,
    startNs: BigInt(startMs) * 1_000_000n,
    endNs: BigInt(startMs + ms) * 1_000_000n,
    attributes: { 'session.id': S, ...attributes },
    droppedAttributes: 0,
    events: [],
    links: [],
    status: undefined,
  } as unknown as PlainSpan;
}

/** One talk: a call that runs Bash (answered), then a closing call. */
function talk() {
  const t = new TranscriptBuilder(S, { start: '2026-11-30T10:00:00.000Z' });
  t.prompt('run it', 'p1');
  const bashCall = t.fragment('msg_1', { type: 'tool_use', id: 'tu_1', name: 'Bash', input: { command: 'sleep 0.5' } }, { stop: 'tool_use' });
  t.result('tu_1', '', 'p1');
  const closing = t.fragment('msg_2', { type: 'text', text: 'done' });
  return { t, bashCall, closing };
}

function events(bashCall: string, closing: string) {
  return [
    event('user_prompt', T0, { 'prompt.id': 'p1', prompt_length: '6' }),
    event('tool_decision', T0 + 1500, { 'prompt.id': 'p1', tool_use_id: 'tu_1', request_id: 'req_1', decision: 'accept', source: 'config', tool_name: 'Bash' }),
    event('api_request', T0 + 1600, {
      'prompt.id': 'p1',
      request_id: 'req_1',
      duration_ms: 950,
      ttft_ms: 900,
      cost_usd: 0.0158,
      speed: 'normal',
      input_tokens: 1200,
      output_tokens: 300,
    }),
    event('assistant_response', T0 + 1601, { 'prompt.id': 'p1', request_id: 'req_1', 'message.uuid': bashCall }),
    // the runtime sends these as strings
    event('tool_result', T0 + 2200, {
      'prompt.id': 'p1',
      tool_use_id: 'tu_1',
      request_id: 'req_1',
      success: 'true',
      duration_ms: '512',
      tool_result_size_bytes: '5',
    }),
    event('api_error', T0 + 2300, { 'prompt.id': 'p1', request_id: 'req_2', status_code: '529', attempt: 1, duration_ms: 120, error: 'overloaded' }),
    event('api_request', T0 + 2500, { 'prompt.id': 'p1', request_id: 'req_2', duration_ms: 40, ttft_ms: 30, cost_usd: 0.00136 }),
    event('assistant_response', T0 + 2501, { 'prompt.id': 'p1', request_id: 'req_2', 'message.uuid': closing }),
  ];
}

describe('stage 9: the runtime telemetry joined to the steps', () => {
  test('a call gets its duration, ttft, cost and failed attempts by request id; a tool its execution, outcome and decision by tool use id', () => {
    const { t, bashCall, closing } = talk();
    const spans = [
      span('claude_code.tool', T0 + 1600, 560, { tool_use_id: 'tu_1', tool_name: 'Bash' }, { spanId: 'a1' }),
      span('claude_code.tool.blocked_on_user', T0 + 1600, 19, { decision: 'accept', source: 'config' }, { spanId: 'a2', parentSpanId: 'a1' }),
      span('claude_code.llm_request', T0 + 650, 960, { request_id: 'req_1', duration_ms: 960, ttft_ms: 900, success: true, attempt: 1 }, { spanId: 'b1' }),
    ];
    const a = assemble({ session: S, entries: [...transcriptEntries(1, t), ...logEntries(2, events(bashCall, closing)), ...spanEntries(3, spans)] });
    expect(a.nodes.get('call/msg_1')!.attrs).toMatchObject({
      request_id: 'req_1',
      duration_ms: 950,
      duration_ms_from: 'event',
      ttft_ms: 900,
      cost_usd: 0.0158,
      speed: 'normal',
      started_at: new Date(T0 + 650).toISOString(),
      span_from: 'span',
      event_usage: { input: 1200, output: 300 },
    });
    expect(a.nodes.get('call/msg_1')!.attrs!.unavailable).toBeUndefined();
    expect(a.nodes.get('call/msg_2')!.attrs).toMatchObject({
      request_id: 'req_2',
      cost_usd: 0.00136,
      attempts: [{ attempt: 1, status_code: 529, duration_ms: 120, from: 'event' }],
      attempts_lost_ms: 120,
    });
    expect(a.nodes.get('tool/tu_1')!.attrs).toMatchObject({
      timing: 'observed',
      execution_ms: 512,
      execution_ms_from: 'event',
      success: true,
      result_bytes: 5,
      decision: 'accept',
      decision_source: 'config',
      blocked_on_user_ms: 19,
    });
    const talkNode = [...a.nodes.values()].find((n) => n.kind === 'talk')!;
    expect(talkNode.attrs).toMatchObject({ prompt_ids: ['p1'], cost_usd: 0.01716, api_ms: 990, tool_ms: 512, api_calls: 2, api_errors: 1 });
    expect(a.nodes.get(`session/${S}`)!.attrs).toMatchObject({ cost_usd: 0.01716, api_calls: 2 });
    expect([...a.unresolved.values()]).toEqual([]);
  });

  test('an event that joins nothing is open evidence with its reason, never attached by time', () => {
    const { t, bashCall, closing } = talk();
    const stray = [
      event('api_request', T0 + 1600, { 'prompt.id': 'p1', request_id: 'req_9', duration_ms: 5, cost_usd: 1 }),
      event('tool_result', T0 + 1601, { 'prompt.id': 'p1', tool_use_id: 'tu_9', success: 'false', duration_ms: '3' }),
    ];
    const a = assemble({ session: S, entries: [...transcriptEntries(1, t), ...logEntries(2, [...events(bashCall, closing), ...stray])] });
    const unres = [...a.unresolved.values()].map((u) => [u.kind, u.ref, u.state]);
    expect(unres).toEqual(
      expect.arrayContaining([
        ['telemetry', 'request/req_9', 'open'],
        ['telemetry', 'tool_use/tu_9', 'open'],
      ]),
    );
    expect([...a.unresolved.values()].find((u) => u.ref === 'request/req_9')!.reason).toMatch(/no landed call is tied to it/);
    // The stray cost still counts toward the conversation: it is the runtime's own bill.
    expect(a.nodes.get(`session/${S}`)!.attrs!.cost_usd).toBe(1.01716);
    expect(a.nodes.get('call/msg_1')!.attrs!.cost_usd).toBe(0.0158);
  });

  test('no OTLP at all: every call and tool says which figures are unavailable and why', () => {
    const { t } = talk();
    const a = assemble({ session: S, entries: transcriptEntries(1, t) });
    expect(a.nodes.get('call/msg_1')!.attrs).toMatchObject({
      unavailable: ['duration_ms', 'ttft_ms', 'cost_usd'],
      unavailable_reason: expect.stringMatching(/no OTLP export/),
    });
    expect(a.nodes.get('tool/tu_1')!.attrs).toMatchObject({
      timing: 'unavailable',
      unavailable: ['execution_ms', 'decision'],
      unavailable_reason: expect.stringMatching(/no OTLP export/),
    });
    expect(a.nodes.get(`session/${S}`)!.attrs).toMatchObject({ telemetry: 'unavailable' });
    expect([...a.unresolved.values()]).toEqual([]);
  });

  test('events that land after the transcript: the next round adds the join, and a refused tool says it never ran', () => {
    const t = new TranscriptBuilder(S, { start: '2026-11-30T10:00:00.000Z' });
    t.prompt('write it', 'p1');
    const call = t.fragment('msg_1', { type: 'tool_use', id: 'tu_w', name: 'Write', input: { file_path: '/x' } }, { stop: 'tool_use' });
    t.result('tu_w', 'refused', 'p1');
    const first = assemble({ session: S, entries: transcriptEntries(1, t) });
    const fold = emptyFold();
    const round1 = diffAssembly(fold, first, 1);
    for (const f of round1) fold.entities.set(f.id, f);
    fold.rounds = 1;
    const late = logEntries(2, [
      event('tool_decision', T0 + 1500, { 'prompt.id': 'p1', tool_use_id: 'tu_w', request_id: 'req_1', decision: 'reject', source: 'config' }),
      event('api_request', T0 + 1600, { 'prompt.id': 'p1', request_id: 'req_1', duration_ms: 210, ttft_ms: 140, cost_usd: 0.00136 }),
      event('assistant_response', T0 + 1601, { 'prompt.id': 'p1', request_id: 'req_1', 'message.uuid': call }),
    ]);
    const second = assemble({ session: S, entries: [...transcriptEntries(1, t), ...late] });
    const round2 = diffAssembly(fold, second, 2);
    const callFrame = round2.find((f) => f.id === 'call/msg_1') as { attrs?: Record<string, unknown> } | undefined;
    expect(callFrame?.attrs).toMatchObject({ request_id: 'req_1', duration_ms: 210, cost_usd: 0.00136 });
    const toolFrame = round2.find((f) => f.id === 'tool/tu_w') as { attrs?: Record<string, unknown> } | undefined;
    expect(toolFrame?.attrs).toMatchObject({
      decision: 'reject',
      decision_source: 'config',
      unavailable: ['execution_ms'],
      unavailable_reason: 'the tool was refused and never ran',
    });
  });

  test('the join is pure: the same entries give the same figures', () => {
    const { t, bashCall, closing } = talk();
    const entries = [...transcriptEntries(1, t), ...logEntries(2, events(bashCall, closing))];
    const a = assemble({ session: S, entries });
    const b = assemble({ session: S, entries });
    expect(JSON.stringify([...b.nodes])).toBe(JSON.stringify([...a.nodes]));
  });
});
