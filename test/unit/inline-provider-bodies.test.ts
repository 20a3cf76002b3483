/**
 * Provider bodies sent inline as OTLP log events (`OTEL_LOG_RAW_API_BODIES=1`), pure: the records go
 * through the real OTLP dialect and the index's own entry builder, then assembly. A request event
 * names only its `request_body_id` and joins its call through the response that shares it; one whose
 * response has not landed is carried with its reason until a later round brings it. A body the
 * runtime cut (`body_truncated`, its `[TRUNCATED - …]` note appended) is read as far as it goes.
 */
import { describe, expect, test } from '@jest/globals';
import { assemble } from '../../src/assemble/assemble.js';
import { otlpLogRecordToSd } from '../../src/adapters/claude-code/otlp-dialect.js';
import { claudeCodeWithheldContent } from '../../src/adapters/claude-code/withheld-content.js';
import { describeRequest } from '../../src/adapters/claude-code/request-manifest.js';
import { bodyText, closeCutJson } from '../../src/formats/session-data/inline-provider-body.js';
import { WITHHOLD_CATEGORIES } from '../../src/formats/view/withhold.js';
import type { IndexEntry } from '../../src/storage/index.js';
import type { PlainLogRecord, PlainObject } from '../../src/otlp/plain-types.js';
import { TranscriptBuilder } from '../helpers/cc.js';
import { ccEventRecord, logEntries, transcriptEntries } from '../helpers/cc-telemetry.js';

const S = '7e1e0000-0000-4000-8000-0000000015c0';
const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const prov = { ord: 1, off: 0, sha: 'x', bytes: 1 };

const request = {
  model: 'claude-x',
  messages: [
    { role: 'user', content: [{ type: 'text', text: 'run it' }] },
    { role: 'assistant', content: [{ type: 'text', text: 'ok' }] },
    { role: 'user', content: [{ type: 'text', text: 'and again, with "quotes", {braces} and [brackets]' }] },
  ],
  system: [{ type: 'text', text: 'You are a lab agent.' }],
  tools: [{ name: 'Bash', input_schema: { type: 'object' } }],
  max_tokens: 1000,
};
const response = (id: string) => ({ id, type: 'message', role: 'assistant', content: [{ type: 'text', text: 'done' }], stop_reason: 'end_turn', usage: {} });

const event = (name: string, timeMs: number, attributes: PlainObject) => ccEventRecord(S, name, timeMs, attributes);

/** As Claude Code 2.1.328 sends them (measured through ../shared/lab). */
const requestBody = (bodyId: string, body: string, extra: PlainObject = {}) =>
  event('api_request_body', T0, { body, body_length: String(body.length), model: 'claude-x', request_body_id: bodyId, ...extra });
const responseBody = (bodyId: string, requestId: string, messageId: string) =>
  event('api_response_body', T0 + 10, {
    body: JSON.stringify(response(messageId)),
    request_id: requestId,
    request_body_id: bodyId,
    'message.id': messageId,
  });

const records = (recs: PlainLogRecord[]) => recs.map((r) => ({ ...prov, ...otlpLogRecordToSd(r).record }));

function talk(): IndexEntry[] {
  const t = new TranscriptBuilder(S, { start: '2026-12-01T10:00:00.000Z' });
  t.prompt('run it', 'p1');
  t.fragment('msg_1', { type: 'text', text: 'ok' }, { stop: 'end_turn' });
  t.prompt('and again', 'p2');
  t.fragment('msg_2', { type: 'text', text: 'done' }, { stop: 'end_turn' });
  return transcriptEntries(1, t);
}

/** What the runtime does to a long attribute value: cut to the limit, its note included. */
function cutAsTheRuntimeDoes(text: string, limit: number): string {
  const note = `\n\n[TRUNCATED - Content exceeds ${limit >= 1024 ? `${Math.floor(limit / 1024)}KB` : `${limit} character`} limit]`;
  return text.slice(0, limit - note.length) + note;
}

describe('inline provider bodies joined to their calls', () => {
  test('a response joins its call by message id; its request, naming only a request_body_id, joins through it; request first', () => {
    const body = JSON.stringify(request);
    const [reqRec, resRec] = records([requestBody('b1', body), responseBody('b1', 'req_x', 'msg_1')]);
    const a = assemble({ session: S, entries: [...talk(), ...logEntries(2, [requestBody('b1', body), responseBody('b1', 'req_x', 'msg_1')])] });
    expect(a.nodes.get('call/msg_1')!.attrs!.provider_bodies).toEqual([
      { role: 'request', ref: { seq: 2, row: 1 }, form: 'inline' },
      { role: 'response', ref: { seq: 2, row: 2 }, form: 'inline' },
    ]);
    expect(a.nodes.get('call/msg_2')!.attrs?.provider_bodies).toBeUndefined();
    expect([...a.unresolved.values()]).toEqual([]);
    // What each landed record reads back as is the body the runtime sent.
    expect(bodyText(reqRec!)).toEqual({ body });
    expect(bodyText(resRec!)).toEqual({ body: JSON.stringify(response('msg_1')) });
  });

  test('a request whose response has not landed says so; the round that brings the response joins it and the entry closes', () => {
    const body = JSON.stringify(request);
    const early = assemble({ session: S, entries: [...talk(), ...logEntries(2, [requestBody('b2', body)])] });
    expect([...early.unresolved.values()].map((u) => u.reason)).toEqual([
      'the inline request body b2 names no call, and no response event with its request_body_id has landed (yet)',
    ]);
    const later = assemble({
      session: S,
      entries: [...talk(), ...logEntries(2, [requestBody('b2', body)]), ...logEntries(3, [responseBody('b2', 'req_y', 'msg_2')])],
    });
    expect(later.nodes.get('call/msg_2')!.attrs!.provider_bodies).toEqual([
      { role: 'request', ref: { seq: 2, row: 1 }, form: 'inline' },
      { role: 'response', ref: { seq: 3, row: 1 }, form: 'inline' },
    ]);
    expect([...later.unresolved.values()]).toEqual([]);
  });

  test('a response naming a message no landed call is stays open with both ids', () => {
    const a = assemble({ session: S, entries: [...talk(), ...logEntries(2, [responseBody('b3', 'req_z', 'msg_elsewhere')])] });
    expect([...a.unresolved.values()].map((u) => u.reason)).toEqual([
      'the inline response body b3 names message msg_elsewhere and request req_z, which no landed call of this session is (yet)',
    ]);
  });

  test('a cut body is listed as truncated, and read from what arrived with the reason', () => {
    const whole = JSON.stringify(request);
    const limit = whole.indexOf('"system"') + 20; // the cut falls inside the system prompt, after the three messages
    const sent = cutAsTheRuntimeDoes(whole, limit);
    const recs = [requestBody('b4', sent, { body_length: String(whole.length), body_truncated: 'true' }), responseBody('b4', 'req_w', 'msg_1')];
    const a = assemble({ session: S, entries: [...talk(), ...logEntries(2, recs)] });
    expect(a.nodes.get('call/msg_1')!.attrs!.provider_bodies).toEqual([
      { role: 'request', ref: { seq: 2, row: 1 }, form: 'inline', truncated: true },
      { role: 'response', ref: { seq: 2, row: 2 }, form: 'inline' },
    ]);
    const text = bodyText(records(recs)[0]!);
    if (!('body' in text)) throw new Error(text.problem);
    expect(text.partial).toBe(
      `the runtime cut this body at ${sent.indexOf('\n\n[TRUNCATED')} of ${whole.length} characters (body_truncated); the manifest reads only what arrived`,
    );
    const m = describeRequest(JSON.parse(text.body))!;
    expect(m.model).toBe('claude-x');
    expect(m.messages.count).toBe(3);
  });
});

describe('closing cut JSON at its last complete element', () => {
  test('every prefix of a body closes to valid JSON: the elements before the cut whole, the one it falls in closed where it stops', () => {
    const whole = JSON.stringify(request);
    let lastCount = 0;
    for (let n = 1; n < whole.length; n++) {
      const closed = closeCutJson(whole.slice(0, n));
      if (closed === undefined) continue;
      const v = JSON.parse(closed) as { messages?: unknown[] };
      const messages = v.messages ?? [];
      // Every message before the last kept is exactly the one sent, and the count never goes back as more arrives.
      messages.slice(0, -1).forEach((m, i) => expect(m).toEqual(request.messages[i]));
      expect(messages.length).toBeGreaterThanOrEqual(lastCount);
      lastCount = messages.length;
    }
    expect(lastCount).toBe(request.messages.length);
    expect(JSON.parse(closeCutJson(whole.slice(0, whole.indexOf(',"system"')))!)).toEqual({ model: request.model, messages: request.messages });
  });

  test('nothing complete arrived: no JSON, and the reason says so', () => {
    const recs = records([requestBody('b5', '"unterminated', { body_truncated: 'true', body_length: '99' })]);
    expect(bodyText(recs[0]!)).toEqual({ problem: expect.stringMatching(/cut this body at 13 of 99 characters .*nothing complete arrived$/) });
  });
});

test('an inline body event is withheld under every category, like a body dump: it holds the whole request', () => {
  const [rec] = records([requestBody('b6', JSON.stringify(request))]);
  expect(claudeCodeWithheldContent(rec!, 'otlp_log')).toEqual([...WITHHOLD_CATEGORIES]);
  const [other] = records([event('api_request', T0, { request_id: 'req_1' })]);
  expect(claudeCodeWithheldContent(other!, 'otlp_log')).toEqual([]);
});
