/**
 * Stage 9 names the log records that may be provider body events, and the bodies' join then reads
 * only those instead of every telemetry record's figures again. What it finds must be what a full
 * walk finds: the same bodies listed on the same calls, the same unresolved evidence — for body
 * events in both forms, a body event of another session, a record with no event name whose first
 * attribute is called `event`, and events that are no bodies at all.
 */
import { describe, expect, test } from '@jest/globals';
import { joinProviderBodies } from '../../src/assemble/provider-bodies.js';
import { joinTelemetry } from '../../src/assemble/stage9-telemetry.js';
import type { PlainLogRecord } from '../../src/otlp/plain-types.js';
import type { IndexEntry } from '../../src/storage/index.js';
import { TranscriptBuilder } from '../helpers/cc.js';
import { ccEventRecord, logEntries, transcriptEntries } from '../helpers/cc-telemetry.js';
import { assembleWith, entities } from '../helpers/assemble-stages.js';

const S = '7e1e0000-0000-4000-8000-0000000015f1';
const OTHER = '7e1e0000-0000-4000-8000-0000000015f2';
const T0 = Date.parse('2026-12-01T10:00:00.000Z');

function session(): IndexEntry[] {
  const t = new TranscriptBuilder(S, { start: '2026-12-01T10:00:00.000Z' });
  t.prompt('run it', 'p1');
  t.fragment('msg_1', { type: 'text', text: 'one' }, { stop: 'end_turn' });
  t.prompt('again', 'p2');
  t.fragment('msg_2', { type: 'text', text: 'two' }, { stop: 'end_turn' });
  const body = (role: 'request' | 'response', id: string, extra: Record<string, string>) =>
    ccEventRecord(S, `api_${role}_body`, T0, { body: `{"role":"${role}"}`, request_body_id: id, ...extra });
  const noName: PlainLogRecord = { ...ccEventRecord(S, 'api_request', T0, {}), body: '' };
  noName.attributes = { event: 'claude_code.api_request_body', 'session.id': S, request_body_id: 'b9' };
  const logs: PlainLogRecord[] = [
    ccEventRecord(S, 'api_request', T0, { request_id: 'req_1', duration_ms: 800, cost_usd: 0.01 }),
    body('request', 'b1', {}),
    body('response', 'b1', { request_id: 'req_1', 'message.id': 'msg_1' }),
    body('response', 'b2', { body_ref: '/dump/req_2.response.json', 'message.id': 'msg_2' }),
    body('response', 'b3', { 'message.id': 'msg_gone' }),
    ccEventRecord(OTHER, 'api_response_body', T0, { body: '{}', 'message.id': 'msg_1', request_body_id: 'b4' }),
    noName,
    ccEventRecord(S, 'tool_result', T0, { tool_use_id: 'tu_none', success: 'true' }),
  ];
  return [...transcriptEntries(1, t), ...logEntries(2, logs)];
}

describe('the bodies join reads only the records stage 9 named', () => {
  test('it finds what a walk over every telemetry record finds', () => {
    const entries = session();
    const named = assembleWith(S, entries, (ctx, uses) => {
      joinTelemetry(ctx, uses);
      expect(ctx.bodyEvents!.length).toBeLessThan(ctx.telemetry.length); // the join has fewer records to read
      joinProviderBodies(ctx);
    });
    const walked = assembleWith(S, entries, (ctx, uses) => {
      joinTelemetry(ctx, uses);
      delete ctx.bodyEvents;
      joinProviderBodies(ctx);
    });
    expect(entities(named)).toEqual(entities(walked));
    // The inputs reached the join: msg_1's two bodies listed (the join itself does not ask which session an event names, so
    // the other session's copy is listed too, either way), and the one naming no landed call kept as evidence.
    expect((named.nodes.get('call/msg_1')!.attrs!.provider_bodies as unknown[]).length).toBeGreaterThanOrEqual(2);
    expect([...named.unresolved.values()].some((u) => u.reason.includes('msg_gone'))).toBe(true);
  });
});
