import { describe, expect, test } from '@jest/globals';
import protobuf from 'protobufjs';
import { decodeLogRecord, decodeSpan, nanosToRfc3339, resourceHeader, scopeHeader } from '../../src/otlp/plain.js';
import { logsRequestGroups, tracesRequestGroups } from '../../src/otlp/requests.js';
import { otlpTypes } from '../../src/otlp/proto.js';
import { badSessionId, otlpEventName, otlpLogRecordToSd, otlpSessionOf, otlpSpanToSd, OTLP_ADAPTER } from '../../src/adapters/claude-code/otlp-dialect.js';
import { apiRequestAttrs, ccLogRecord, ccLogsRequest, ccResource, logsRequest, toolResultAttrs } from '../helpers/otlp.js';

const Long = protobuf.util.Long as unknown as { fromString(s: string, u?: boolean): object };

function one(record: object, resource: object = ccResource()) {
  const g = logsRequestGroups(logsRequest([record], resource));
  return { rec: g[0]!.scopes[0]!.items[0]!.message, group: g[0]! };
}

describe('plain decoding of log records', () => {
  test('matches what protobufjs decodes, value for value', () => {
    const T = otlpTypes().LogRecord;
    const record = {
      timeUnixNano: Long.fromString('1796015652148123456', true),
      observedTimeUnixNano: Long.fromString('1796015652149000000', true),
      severityNumber: 9,
      severityText: 'INFO',
      flags: 1,
      droppedAttributesCount: 2,
      eventName: 'claude_code.api_request',
      traceId: Buffer.from('5b8efff798038103d269b633813fc60c', 'hex'),
      spanId: Buffer.from('eee19b7ec3c1b174', 'hex'),
      body: { kvlistValue: { values: [{ key: 'a', value: { arrayValue: { values: [{ intValue: -5 }, { doubleValue: 1.5 }, { boolValue: true }, {}] } } }] } },
      attributes: [
        { key: 'neg', value: { intValue: Long.fromString('-9223372036854775808') } },
        { key: 'big', value: { intValue: Long.fromString('9007199254740993') } },
        { key: 'safe', value: { intValue: Long.fromString('-9007199254740991') } },
        { key: 'small', value: { intValue: 300 } },
        { key: 'nan', value: { doubleValue: NaN } },
        { key: 'bytes', value: { bytesValue: Buffer.from([0, 1, 2, 255]) } },
        { key: 'dup', value: { stringValue: 'first' } },
        { key: 'dup', value: { stringValue: 'second' } },
        { key: 'empty', value: {} },
        { key: 'unicode', value: { stringValue: 'é✓😀' } },
      ],
    };
    const { rec } = one(record);
    const viaProtobufjs = T.toObject(T.decode(T.encode(T.fromObject(record)).finish()), { longs: String });
    expect(rec.timeNs).toBe(BigInt(viaProtobufjs.timeUnixNano as string));
    expect(rec.observedNs).toBe(BigInt(viaProtobufjs.observedTimeUnixNano as string));
    expect([rec.severityNumber, rec.severityText, rec.flags, rec.droppedAttributes, rec.eventName]).toEqual([9, 'INFO', 1, 2, 'claude_code.api_request']);
    expect([rec.traceId, rec.spanId]).toEqual(['5b8efff798038103d269b633813fc60c', 'eee19b7ec3c1b174']);
    expect(rec.body).toEqual({ a: [-5, 1.5, true, null] });
    expect(rec.attributes).toEqual({
      neg: '-9223372036854775808',
      big: '9007199254740993',
      safe: -9007199254740991,
      small: 300,
      nan: 'NaN',
      bytes: { base64: 'AAEC/w==' },
      dup: 'first',
      empty: null,
      unicode: 'é✓😀',
    });
  });

  test('any key is an attribute like any other: __proto__, constructor, toString; the first of a repeated key wins', () => {
    const attributes = ['__proto__', 'constructor', 'toString', 'hasOwnProperty', '__proto__'].map((key, i) => ({ key, value: { stringValue: `v${i}` } }));
    const { rec } = one({ timeUnixNano: 1, attributes });
    expect(JSON.parse(JSON.stringify(rec.attributes))).toEqual(JSON.parse('{"__proto__":"v0","constructor":"v1","toString":"v2","hasOwnProperty":"v3"}'));
    expect(Object.getPrototypeOf(rec.attributes)).toBe(Object.prototype);
    expect(otlpLogRecordToSd(rec).dataJson).toContain('"attributes":{"__proto__":"v0","constructor":"v1","toString":"v2","hasOwnProperty":"v3"}');
  });

  test('strings decoded again from the cache of short strings are the same strings, and a lookalike is not taken for one', () => {
    // Same length, same first, middle and last byte: the cache's hash cannot tell them apart; the byte check must.
    const values = ['axxxxmxxxxz', 'ayyyymyyyyz', 'axxxxmxxxxz', 'ayyyymyyyyz', 'é-cache-é', 'é-cache-é'];
    const { rec } = one({ timeUnixNano: 1, attributes: values.map((v, i) => ({ key: `k${i}`, value: { stringValue: v } })) });
    expect(Object.values(rec.attributes)).toEqual(values);
  });

  test('times are RFC 3339 with nanoseconds; 0 means unknown', () => {
    expect(nanosToRfc3339(1796015652148123456n)).toBe('2026-11-30T05:14:12.148123456Z');
    expect(nanosToRfc3339(1796015652000000000n)).toBe('2026-11-30T05:14:12Z');
    expect(nanosToRfc3339(1796015652100000000n)).toBe('2026-11-30T05:14:12.1Z');
    expect(nanosToRfc3339(0n)).toBeUndefined();
    expect(nanosToRfc3339(2n ** 64n - 1n)).toBe('2554-07-21T23:34:33.709551615Z');
  });
});

describe('the claude-code/1 dialect of OTLP', () => {
  test('a tool result: the event name, every attribute in one data part, the tool join lifted out', () => {
    const { rec } = one(
      ccLogRecord('S-1', { name: 'tool_result', seq: 9, timeMs: Date.UTC(2026, 10, 30, 5, 14, 12, 812), attrs: toolResultAttrs('p1', 'toolu_1', 'req_1') }),
    );
    const { record, dataJson } = otlpLogRecordToSd(rec);
    expect(record).toMatchObject({ from: 'runtime', time: '2026-11-30T05:14:12.812Z', tool: 'toolu_1' });
    expect(record.parts).toHaveLength(1);
    const p = record.parts[0]!;
    expect(p).toMatchObject({ k: 'data', state: 'available', name: 'claude_code.tool_result' });
    expect(p.bytes).toBe(Buffer.byteLength(dataJson));
    expect(JSON.parse(dataJson)).toEqual(p.data);
    expect(p.data).toMatchObject({
      event: 'claude_code.tool_result',
      body: 'claude_code.tool_result',
      attributes: {
        'session.id': 'S-1',
        'prompt.id': 'p1',
        tool_use_id: 'toolu_1',
        request_id: 'req_1',
        'event.sequence': 9,
        duration_ms: 340,
        success: 'true',
      },
    });
  });

  test('an API request keeps request_id in its data and names no tool', () => {
    const { rec } = one(ccLogRecord('S-1', { name: 'api_request', seq: 7, timeMs: 1, attrs: apiRequestAttrs('p1', 'req_9') }));
    const { record } = otlpLogRecordToSd(rec);
    expect(record.tool).toBeUndefined();
    expect((record.parts[0]!.data as { attributes: Record<string, unknown> }).attributes).toMatchObject({
      request_id: 'req_9',
      input_tokens: 100,
      cost_usd: 0.00136,
    });
  });

  test('the event name: event_name, else a Claude Code body, else claude_code. + event.name', () => {
    const base = { timeNs: 0n, observedNs: 0n, severityNumber: 0, severityText: '', droppedAttributes: 0, flags: 0, traceId: '', spanId: '' };
    expect(otlpEventName({ ...base, eventName: 'x.y', body: 'claude_code.a', attributes: {} })).toBe('x.y');
    expect(otlpEventName({ ...base, eventName: '', body: 'claude_code.a', attributes: { 'event.name': 'b' } })).toBe('claude_code.a');
    expect(otlpEventName({ ...base, eventName: '', body: 'hello', attributes: { 'event.name': 'b' } })).toBe('claude_code.b');
    expect(otlpEventName({ ...base, eventName: '', body: 'hello', attributes: {} })).toBe('hello');
  });

  test("the session: the record's session.id, else the resource's; byte-exact", () => {
    expect(otlpSessionOf({ 'session.id': 'AbC' }, { 'session.id': 'other' })).toBe('AbC');
    expect(otlpSessionOf({}, { 'session.id': 'R' })).toBe('R');
    expect(otlpSessionOf({ 'session.id': '' }, {})).toBeUndefined();
    expect(otlpSessionOf({ 'session.id': 5 }, {})).toBeUndefined();
    const { rec, group } = one(ccLogRecord(undefined, { name: 'user_prompt', seq: 0, timeMs: 1 }), {
      attributes: [{ key: 'session.id', value: { stringValue: 'from-resource' } }],
    });
    expect(otlpSessionOf(rec.attributes, group.resource?.attributes)).toBe('from-resource');
  });

  test('session ids that cannot name a directory are told apart', () => {
    for (const ok of ['e29b7cdd-32c6-4521-907b-30ef9a1399f6', 'E29B7CDD', 'a b']) expect(badSessionId(ok)).toBeUndefined();
    for (const bad of ['..', '.', '_metrics', '.hidden', 'a/b', 'a\\b', 'a\u0000b', 'x'.repeat(201), 'é'.repeat(128), 'push.state', 'session.state'])
      expect(badSessionId(bad)).toBeDefined();
  });

  test('resource and scope as the header carries them', () => {
    const g = logsRequestGroups(ccLogsRequest('S'));
    expect(resourceHeader(g[0]!.resource)).toEqual({
      attributes: { 'host.arch': 'amd64', 'os.type': 'linux', 'service.name': 'claude-code', 'service.version': '2.1.328' },
    });
    expect(scopeHeader(g[0]!.scopes[0]!.scope)).toEqual({ name: 'com.anthropic.claude_code.events', version: '2.1.328' });
    expect(OTLP_ADAPTER).toBe('claude-code-otlp/0.1.0');
  });

  test('a span: one record at its start, with ids, duration, events and status', () => {
    const T = otlpTypes().ExportTraceServiceRequest;
    const bytes = Buffer.from(
      T.encode(
        T.fromObject({
          resourceSpans: [
            {
              scopeSpans: [
                {
                  spans: [
                    {
                      traceId: Buffer.alloc(16, 1),
                      spanId: Buffer.alloc(8, 2),
                      parentSpanId: Buffer.alloc(8, 3),
                      name: 'claude_code.tool',
                      kind: 1,
                      startTimeUnixNano: Long.fromString('1796015652148000000', true),
                      endTimeUnixNano: Long.fromString('1796015652488000000', true),
                      attributes: [
                        { key: 'tool_use_id', value: { stringValue: 'toolu_7' } },
                        { key: 'session.id', value: { stringValue: 'S' } },
                      ],
                      events: [{ name: 'e', timeUnixNano: Long.fromString('1796015652200000000', true) }],
                      status: { code: 2, message: 'failed' },
                    },
                  ],
                },
              ],
            },
          ],
        }),
      ).finish(),
    );
    const span = tracesRequestGroups(bytes)[0]!.scopes[0]!.items[0]!.message;
    expect(decodeSpan).toBeDefined();
    const { record } = otlpSpanToSd(span);
    expect(record).toMatchObject({ from: 'runtime', time: '2026-11-30T05:14:12.148Z', tool: 'toolu_7' });
    expect(record.parts[0]!.data).toMatchObject({
      name: 'claude_code.tool',
      trace_id: '01'.repeat(16),
      span_id: '02'.repeat(8),
      parent_span_id: '03'.repeat(8),
      kind: 1,
      duration_ns: 340_000_000,
      status: { code: 2, message: 'failed' },
      events: [{ name: 'e', time: '2026-11-30T05:14:12.2Z', attributes: {} }],
    });
    expect(decodeLogRecord).toBeDefined();
  });
});
