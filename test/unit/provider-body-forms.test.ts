/**
 * One body per call and role when the runtime's bodies arrive in more than one form, pure. With
 * `OTEL_LOG_RAW_API_BODIES=file:DIR` and the OTLP export on, Claude Code 2.1.328 writes each body to
 * DIR and also sends its `api_request_body` / `api_response_body` event, carrying `body_ref` (the
 * file's path) instead of the text (read from its code, measured through ../shared/lab). The dump's
 * body is listed, whole; every other landed copy is named under `duplicates` with its form; an event
 * whose file has not landed says where the file is.
 */
import { describe, expect, test } from '@jest/globals';
import { assemble } from '../../src/assemble/assemble.js';
import { bodyParts } from '../../src/formats/session-data/provider-body.js';
import { entryFromRecord, type IndexEntry } from '../../src/storage/index.js';
import type { PlainObject } from '../../src/otlp/plain-types.js';
import { TranscriptBuilder } from '../helpers/cc.js';
import { ccEventRecord, logEntries, transcriptEntries } from '../helpers/cc-telemetry.js';

const S = '7e1e0000-0000-4000-8000-0000000015f0';
const T0 = Date.parse('2026-12-01T10:00:00.000Z');
const DIR = '/home/dev/.claude-bodies';
const request = { model: 'claude-x', max_tokens: 1000, messages: [{ role: 'user', content: 'run it' }] };
const response = { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'text', text: 'ok' }], stop_reason: 'end_turn', usage: {} };

function talk(): IndexEntry[] {
  const t = new TranscriptBuilder(S, { start: '2026-12-01T10:00:00.000Z' });
  t.prompt('run it', 'p1');
  t.fragment('msg_1', { type: 'text', text: 'ok' }, { stop: 'end_turn' });
  return transcriptEntries(1, t);
}

/** The dump's two files for msg_1, landed by the local receiver as file `seq` of kind provider_body. */
function dumped(seq: number): IndexEntry[] {
  const bodies: [Buffer, Parameters<typeof bodyParts>[1]][] = [
    [Buffer.from(JSON.stringify(request)), { role: 'request', src: 'b1.request.json', session: S, call: 'msg_1', request: 'req_1' }],
    [Buffer.from(JSON.stringify(response)), { role: 'response', src: 'req_1.response.json', session: S, call: 'msg_1', request: 'req_1' }],
  ];
  return bodies.map(([bytes, facts], i) =>
    entryFromRecord({ ord: i + 1, off: 0, sha: 'x', bytes: bytes.length, from: 'runtime', parts: bodyParts(bytes, facts) }, seq, i + 1, {
      kind: 'provider_body',
    }),
  );
}

/** The two body events of msg_1 as the runtime sends them: naming the dump's files (`file:`) or carrying the text (`1`). */
function bodyEvents(form: 'reference' | 'inline', extra: PlainObject = {}) {
  const carry = (role: string, body: object): PlainObject =>
    form === 'reference'
      ? { body_ref: `${DIR}/${role === 'request' ? 'b1' : 'req_1'}.${role}.json`, body_length: String(JSON.stringify(body).length) }
      : { body: JSON.stringify(body), body_length: String(JSON.stringify(body).length), ...extra };
  return [
    ccEventRecord(S, 'api_request_body', T0, { ...carry('request', request), model: 'claude-x', query_source: 'repl_main_thread', request_body_id: 'b1' }),
    ccEventRecord(S, 'api_response_body', T0 + 10, {
      ...carry('response', response),
      model: 'claude-x',
      request_id: 'req_1',
      request_body_id: 'b1',
      'message.id': 'msg_1',
      'message.uuid': 'u1',
    }),
  ];
}

describe('a call whose bodies arrive in more than one form lists one of each role', () => {
  test('file: with the OTLP export on: the dump is listed, each event naming its file set aside as a reference, each body counted once', () => {
    const a = assemble({ session: S, entries: [...talk(), ...dumped(2), ...logEntries(3, bodyEvents('reference'))] });
    expect(a.nodes.get('call/msg_1')!.attrs!.provider_bodies).toEqual([
      { role: 'request', ref: { seq: 2, row: 1 }, form: 'file', duplicates: [{ form: 'reference', ref: { seq: 3, row: 1 } }] },
      { role: 'response', ref: { seq: 2, row: 2 }, form: 'file', duplicates: [{ form: 'reference', ref: { seq: 3, row: 2 } }] },
    ]);
    expect(a.nodes.get(`session/${S}`)!.attrs).toMatchObject({ provider_bodies_landed: 2, provider_body_duplicates: 2 });
    expect([...a.unresolved.values()]).toEqual([]);
  });

  test('a body dumped whole and also sent inline, cut: the whole one is listed, not marked truncated, and the cut copy is named', () => {
    const a = assemble({
      session: S,
      entries: [...talk(), ...logEntries(2, bodyEvents('inline', { body_truncated: 'true' })), ...dumped(3)],
    });
    expect(a.nodes.get('call/msg_1')!.attrs!.provider_bodies).toEqual([
      { role: 'request', ref: { seq: 3, row: 1 }, form: 'file', duplicates: [{ form: 'inline', ref: { seq: 2, row: 1 } }] },
      { role: 'response', ref: { seq: 3, row: 2 }, form: 'file', duplicates: [{ form: 'inline', ref: { seq: 2, row: 2 } }] },
    ]);
    expect(a.nodes.get(`session/${S}`)!.attrs).toMatchObject({ provider_bodies_landed: 2, provider_body_duplicates: 2 });
  });

  test('events naming dump files that have not landed: no body is listed, and each says where its file is', () => {
    const a = assemble({ session: S, entries: [...talk(), ...logEntries(2, bodyEvents('reference'))] });
    expect(a.nodes.get('call/msg_1')!.attrs?.provider_bodies).toBeUndefined();
    expect(a.nodes.get(`session/${S}`)!.attrs?.provider_bodies_landed).toBeUndefined();
    expect([...a.unresolved.values()].map((u) => [u.ref, u.reason])).toEqual([
      [
        'record/2/1',
        `the runtime wrote the request body of call/msg_1 to ${DIR}/b1.request.json (OTEL_LOG_RAW_API_BODIES=file:), and no landed provider body holds it (yet): the local receiver's provider_bodies names the directory it collects`,
      ],
      [
        'record/2/2',
        `the runtime wrote the response body of call/msg_1 to ${DIR}/req_1.response.json (OTEL_LOG_RAW_API_BODIES=file:), and no landed provider body holds it (yet): the local receiver's provider_bodies names the directory it collects`,
      ],
    ]);
    // The round that brings the dump closes both.
    const later = assemble({ session: S, entries: [...talk(), ...logEntries(2, bodyEvents('reference')), ...dumped(3)] });
    expect([...later.unresolved.values()]).toEqual([]);
    expect((later.nodes.get('call/msg_1')!.attrs!.provider_bodies as unknown[]).length).toBe(2);
  });

  test('inline only: the events are the bodies, said to be inline, with nothing set aside', () => {
    const a = assemble({ session: S, entries: [...talk(), ...logEntries(2, bodyEvents('inline'))] });
    expect(a.nodes.get('call/msg_1')!.attrs!.provider_bodies).toEqual([
      { role: 'request', ref: { seq: 2, row: 1 }, form: 'inline' },
      { role: 'response', ref: { seq: 2, row: 2 }, form: 'inline' },
    ]);
    expect(a.nodes.get(`session/${S}`)!.attrs).toMatchObject({ provider_bodies_landed: 2 });
    expect(a.nodes.get(`session/${S}`)!.attrs!.provider_body_duplicates).toBeUndefined();
  });

  test('the dump alone keeps asz 0.6 shape: {role, ref}, no form', () => {
    const a = assemble({ session: S, entries: [...talk(), ...dumped(2)] });
    expect(a.nodes.get('call/msg_1')!.attrs!.provider_bodies).toEqual([
      { role: 'request', ref: { seq: 2, row: 1 } },
      { role: 'response', ref: { seq: 2, row: 2 } },
    ]);
  });
});
