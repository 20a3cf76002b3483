/**
 * The columnar telemetry join (stage 9) against the straightforward one it replaced
 * (test/helpers/reference-telemetry-join.ts: one observation object per event, arrays per id), on
 * randomized sessions: events shuffled, landed before and after the transcript, sent twice, naming
 * requests, tool uses, spans and sessions that are not there, a request tied to two calls, the
 * runtime's own side calls, spans with failed attempts and waits for the user. Both joins run on
 * the same stages 1–8; every node, relation and unresolved entry must come out the same, read from
 * entries built in memory, from the same entries saved and loaded as the index's columns (ids
 * joined by the index's string numbers), and from a mix of the two (ids numbered as met).
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { joinTelemetry } from '../../src/assemble/stage9-telemetry.js';
import type { PlainLogRecord, PlainObject, PlainSpan } from '../../src/otlp/plain-types.js';
import { loadIndex, saveIndex, type IndexEntry } from '../../src/storage/index.js';
import { TranscriptBuilder } from '../helpers/cc.js';
import { ccEventRecord, logEntries, spanEntries, transcriptEntries } from '../helpers/cc-telemetry.js';
import { referenceJoinTelemetry } from '../helpers/reference-telemetry-join.js';
import { assembleWith, entities } from '../helpers/assemble-stages.js';

const S = '7e1e0000-0000-4000-8000-00000000f00d';
const OTHER_SESSION = '7e1e0000-0000-4000-8000-00000000beef';
const T0 = Date.parse('2026-11-30T10:00:00.000Z');

/** A small seeded generator (mulberry32), so a failing seed can be run again. */
function random(seed: number) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    chance: (p: number) => next() < p,
    int: (n: number) => Math.floor(next() * n),
    pick: <T>(xs: readonly T[]) => xs[Math.floor(next() * xs.length)]!,
    shuffle: <T>(xs: T[]) => {
      for (let i = xs.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [xs[i], xs[j]] = [xs[j]!, xs[i]!];
      }
      return xs;
    },
  };
}

function span(name: string, startMs: number, ms: number, attributes: PlainObject, ids: { spanId: string; parentSpanId?: string }, events: unknown[] = []) {
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
    events,
    links: [],
    status: undefined,
  } as unknown as PlainSpan;
}

/** A randomized session: its transcript and the runtime's events and spans, as index entries in landed order. */
function session(seed: number): IndexEntry[] {
  const rnd = random(seed);
  const t = new TranscriptBuilder(S, { start: '2026-11-30T10:00:00.000Z' });
  const logs: PlainLogRecord[] = [];
  const spans: PlainSpan[] = [];
  const calls: { msg: string; record: string; request: string; tools: string[]; prompt: string }[] = [];
  const ev = (name: string, at: number, attributes: PlainObject) => logs.push(ccEventRecord(rnd.chance(0.03) ? OTHER_SESSION : S, name, at, attributes));
  // Numbers arrive as numbers or as strings, as the runtime sends some of them.
  const n = (v: number) => (rnd.chance(0.3) ? String(v) : v);
  let spanNo = 0;
  const nextSpan = () => `s${(++spanNo).toString(16).padStart(15, '0')}`;
  for (let talk = 0; talk < 2 + rnd.int(3); talk++) {
    const prompt = `p${talk}`;
    t.prompt(`task ${talk}`, prompt);
    ev('user_prompt', T0 + talk * 1000, { 'prompt.id': prompt, prompt_length: '6' });
    for (let c = 0; c < 1 + rnd.int(4); c++) {
      const msg = `msg_${talk}_${c}`;
      const tools = Array.from({ length: rnd.int(3) }, (_, k) => `tu_${talk}_${c}_${k}`);
      let record = '';
      if (!tools.length) record = t.fragment(msg, { type: 'text', text: 'done' });
      for (const tool of tools)
        record ||= t.fragment(msg, { type: 'tool_use', id: tool, name: rnd.pick(['Bash', 'Read', 'mcp__srv__echo']), input: {} }, { stop: 'tool_use' });
      for (const tool of tools) t.result(tool, 'ok', prompt);
      calls.push({ msg, record, request: `req_${talk}_${c}`, tools, prompt });
    }
  }
  for (const call of calls) {
    const at = T0 + 5000 + rnd.int(100_000);
    const p: PlainObject = rnd.chance(0.9) ? { 'prompt.id': call.prompt } : {};
    if (rnd.chance(0.8)) {
      const attrs: PlainObject = { ...p, request_id: call.request };
      if (rnd.chance(0.9)) attrs.duration_ms = n(100 + rnd.int(900));
      if (rnd.chance(0.8)) attrs.ttft_ms = n(50 + rnd.int(50));
      if (rnd.chance(0.9)) attrs.cost_usd = n((1 + rnd.int(5000)) / 1e6);
      if (rnd.chance(0.5)) attrs.speed = 'normal';
      if (rnd.chance(0.5)) attrs.model = 'claude-opus-5-5';
      if (rnd.chance(0.5)) Object.assign(attrs, { input_tokens: n(rnd.int(900)), output_tokens: rnd.int(90), cache_read_tokens: 7, cache_creation_tokens: 1 });
      if (rnd.chance(0.05)) attrs.query_source = 'main';
      ev('api_request', at, attrs);
    }
    if (rnd.chance(0.3))
      ev('api_error', at - 300, {
        ...p,
        request_id: call.request,
        status_code: n(529),
        attempt: 1,
        ...(rnd.chance(0.7) ? { duration_ms: 40 } : {}),
        error: 'overloaded',
      } as PlainObject);
    if (rnd.chance(0.7)) ev('assistant_response', at + 1, { ...p, request_id: call.request, 'message.uuid': call.record });
    if (rnd.chance(0.4)) {
      const ok = rnd.chance(0.8);
      const marks = rnd.chance(0.5)
        ? [
            { name: 'gen_ai.request.attempt', timeNs: BigInt(at - 900) * 1_000_000n, attributes: { attempt: 1 } },
            { name: 'gen_ai.request.attempt', timeNs: BigInt(at - 600) * 1_000_000n, attributes: { attempt: 2 } },
          ]
        : [];
      spans.push(
        span(
          'claude_code.llm_request',
          at - 900,
          880,
          { request_id: call.request, success: ok, ttft_ms: 70, attempt: 1, model: 'm' },
          { spanId: nextSpan() },
          marks,
        ),
      );
    }
    for (const tool of call.tools) {
      const bridgeRequest: PlainObject = rnd.chance(0.7) ? { request_id: call.request } : {};
      if (rnd.chance(0.6))
        ev('tool_decision', at + 2, {
          ...p,
          ...bridgeRequest,
          tool_use_id: tool,
          decision: rnd.pick(['accept', 'reject']),
          source: rnd.pick(['config', 'user', 'hook']),
        });
      if (rnd.chance(0.7))
        ev('tool_result', at + 600, {
          ...p,
          ...bridgeRequest,
          tool_use_id: tool,
          success: rnd.pick(['true', 'false', true]),
          duration_ms: n(rnd.int(800)),
          tool_result_size_bytes: n(rnd.int(99)),
          ...(rnd.chance(0.3) ? { error: 'exit 1' } : {}),
        } as PlainObject);
      if (rnd.chance(0.3)) {
        const toolSpan = nextSpan();
        spans.push(span('claude_code.tool', at + 3, 590, { tool_use_id: tool, tool_name: 'Bash' }, { spanId: toolSpan }));
        if (rnd.chance(0.6))
          spans.push(
            span(
              'claude_code.tool.blocked_on_user',
              at + 3,
              19 + rnd.int(50),
              { decision: 'accept', source: 'user' },
              { spanId: nextSpan(), parentSpanId: toolSpan },
            ),
          );
        if (rnd.chance(0.6))
          spans.push(
            span('claude_code.tool.execution', at + 30, 500, { tool_use_id: tool, success: rnd.chance(0.8) }, { spanId: nextSpan(), parentSpanId: toolSpan }),
          );
      }
    }
  }
  // What joins nothing: an unknown request and tool use, the runtime's own side call, a wait
  // under no tool span, an event no join reads, and a request the runtime ties to two calls.
  ev('api_request', T0 + 9, { request_id: 'req_stray', duration_ms: 5, cost_usd: 0.5 });
  ev('api_request', T0 + 9, { request_id: 'req_aux', query_source: 'auxiliary', duration_ms: 7, cost_usd: 0.25, model: 'haiku' });
  ev('tool_result', T0 + 9, { tool_use_id: 'tu_stray', success: 'false', duration_ms: '3' });
  ev('hook_execution_start', T0 + 9, { hook_name: 'x' });
  spans.push(span('claude_code.tool.blocked_on_user', T0 + 9, 5, { decision: 'reject', source: 'user' }, { spanId: nextSpan(), parentSpanId: 'f'.repeat(16) }));
  if (calls.length > 1) ev('assistant_response', T0 + 9, { request_id: calls[0]!.request, 'message.uuid': calls[1]!.record });
  // The export repeats itself, and its batches land in any order around the transcript.
  for (let k = rnd.int(3); k > 0; k--) logs.push(rnd.pick(logs));
  rnd.shuffle(logs);
  rnd.shuffle(spans);
  const cut = rnd.int(logs.length + 1);
  return [...logEntries(1, logs.slice(0, cut)), ...transcriptEntries(2, t), ...logEntries(3, logs.slice(cut)), ...spanEntries(4, spans)];
}

describe('the columnar telemetry join gives what the straightforward join gives', () => {
  const dir = mkdtempSync(join(tmpdir(), 'aszcol-telemetry-reference-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  test.each(Array.from({ length: 24 }, (_, i) => 1000 + i))('randomized session, seed %i', (seed) => {
    const entries = session(seed);
    const expected = entities(assembleWith(S, entries, referenceJoinTelemetry));
    // The inputs reach the joins at all: figures joined, and evidence left open.
    expect(Object.values(expected).some((n) => n.includes('"duration_ms_from"'))).toBe(true);
    expect(Object.keys(expected).some((id) => id.startsWith('unres/telemetry'))).toBe(true);
    expect(entities(assembleWith(S, entries, joinTelemetry))).toEqual(expected);

    // The same entries as the index holds them on disk: figures read from its columns.
    const root = join(dir, String(seed));
    saveIndex(root, { session: S, indexedSeq: 4, files: [], entries });
    const loaded = loadIndex(root, S)!.entries;
    expect(loaded).toHaveLength(entries.length);
    expect(entities(assembleWith(S, loaded, joinTelemetry))).toEqual(expected);

    // Loaded, the join keys ids by the index's string numbers; a record built in memory, or the
    // telemetry and the transcript read from two loads, share no table, and every id is numbered as met.
    const half = Math.floor(entries.length / 2);
    expect(entities(assembleWith(S, [...loaded.slice(0, half), entries[half]!, ...loaded.slice(half + 1)], joinTelemetry))).toEqual(expected);
    const again = loadIndex(root, S)!.entries;
    expect(entities(assembleWith(S, [...loaded.slice(0, half), ...again.slice(half)], joinTelemetry))).toEqual(expected);
  });
});
