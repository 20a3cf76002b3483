import { describe, expect, test } from '@jest/globals';
import protobuf from 'protobufjs';
import { lengthDelimitedFields, validateMessage, WireError, MAX_DEPTH } from '../../src/otlp/wire.js';
import { checkedRequest, OtlpRequestError } from '../../src/otlp/codec.js';
import { otlpTypes, requestType } from '../../src/otlp/proto.js';
import { ccLogsRequest, ccMetricsRequest, logsRequest, ccLogRecord } from '../helpers/otlp.js';
import { rng } from '../helpers/rng.js';

/** A deterministic generator, so a failure reproduces. */

const tag = (field: number, wt: number) => len(field * 8 + wt);
function len(n: number): Buffer {
  const out: number[] = [];
  do {
    let b = n & 0x7f;
    n = Math.floor(n / 128);
    if (n) b |= 0x80;
    out.push(b);
  } while (n);
  return Buffer.from(out);
}
const ld = (field: number, payload: Buffer) => Buffer.concat([tag(field, 2), len(payload.length), payload]);

describe('strict protobuf reading', () => {
  test('Claude-Code-shaped requests pass and their items are counted', () => {
    expect(checkedRequest('logs', ccLogsRequest('s1'), 'protobuf').items).toBe(5);
    // session.count, cost.usage and four token.usage points (input, output, cacheRead, cacheCreation)
    expect(checkedRequest('metrics', ccMetricsRequest('s1', { input: 1, output: 2, cacheRead: 3, cacheCreation: 4 }), 'protobuf').items).toBe(6);
    expect(checkedRequest('metrics', ccMetricsRequest('s1', { input: 1, output: 2, cacheRead: 3, cacheCreation: 4 }, Date.now(), 10), 'protobuf').items).toBe(
      16,
    );
    expect(checkedRequest('logs', Buffer.alloc(0), 'protobuf').items).toBe(0);
  });

  test('every cut inside a request is refused, with where it broke', () => {
    const full = ccLogsRequest('s1');
    // The request is one resource_logs field whose length covers the rest: any cut breaks it.
    for (let n = 1; n < full.length; n++) {
      expect(() => validateMessage(full.subarray(0, n), requestType('logs'))).toThrow(WireError);
    }
    try {
      validateMessage(full.subarray(0, full.length - 3), requestType('logs'));
    } catch (e) {
      expect((e as Error).message).toMatch(/^resourceLogs: length \d+ runs past the end/);
    }
  });

  test('a wire type that does not fit the field is refused with the field path', () => {
    const bad = Buffer.concat([tag(1, 0), Buffer.from([5])]); // resource_logs as a varint
    expect(() => validateMessage(bad, requestType('logs'))).toThrow(/resourceLogs: wire type varint does not fit a message field/);
    const rec = Buffer.concat([tag(1, 0), Buffer.from([1])]); // LogRecord.time_unix_nano (fixed64) as varint
    const req = ld(1, ld(2, ld(2, rec)));
    expect(() => validateMessage(req, requestType('logs'))).toThrow(/resourceLogs\.scopeLogs\.logRecords\.timeUnixNano: wire type varint/);
  });

  test('an export request is an envelope: a field it does not define is refused at its top only', () => {
    expect(() => checkedRequest('metrics', Buffer.concat([ld(4, Buffer.from('xyz'))]), 'protobuf')).toThrow(
      /#4: field 4 is not part of an OTLP export request/,
    );
    expect(checkedRequest('metrics', ld(1, ld(4, Buffer.from('xyz'))), 'protobuf').items).toBe(0);
  });

  test('groups, undefined wire types and field number 0 are refused', () => {
    expect(() => validateMessage(Buffer.from([(9 << 3) | 3]), requestType('logs'))).toThrow(/groups are not part of OTLP/);
    expect(() => validateMessage(Buffer.from([(9 << 3) | 6]), requestType('logs'))).toThrow(/wire type 6 does not exist/);
    expect(() => validateMessage(Buffer.from([(9 << 3) | 7]), requestType('logs'))).toThrow(/wire type 7 does not exist/);
    expect(() => validateMessage(Buffer.from([0x02, 0x00]), requestType('logs'))).toThrow(/field number 0/);
  });

  test('strings must be UTF-8; bytes need not be', () => {
    const kv = Buffer.concat([ld(1, Buffer.from([0x61, 0xff, 0x62]))]); // KeyValue.key = "a\xffb"
    const req = ld(1, ld(2, ld(2, ld(6, kv))));
    expect(() => validateMessage(req, requestType('logs'))).toThrow(/resourceLogs\.scopeLogs\.logRecords\.attributes\.key: string is not valid UTF-8/);
    const long = Buffer.concat([Buffer.from('x'.repeat(100)), Buffer.from([0xc3])]);
    expect(() => validateMessage(ld(1, ld(2, ld(2, ld(6, ld(1, long))))), requestType('logs'))).toThrow(/not valid UTF-8/);
    const traceId = ld(9, Buffer.from([0xff, 0xfe, 0x00, 0x01]));
    expect(() => validateMessage(ld(1, ld(2, ld(2, traceId))), requestType('logs'))).not.toThrow();
  });

  test('unknown fields with a real wire type are kept for forward compatibility', () => {
    const rec = Buffer.concat([tag(99, 0), Buffer.from([1]), ld(98, Buffer.from('future')), tag(97, 5), Buffer.alloc(4), tag(96, 1), Buffer.alloc(8)]);
    expect(validateMessage(ld(1, ld(2, ld(2, rec))), requestType('logs'), [otlpTypes().LogRecord]).counts).toEqual([1]);
  });

  test(`nesting deeper than ${MAX_DEPTH} messages is refused`, () => {
    let v = ld(1, Buffer.from('leaf')); // AnyValue { string_value }
    for (let i = 0; i < 80; i++) v = ld(5, ld(1, v)); // AnyValue { array_value { values: v } }
    const kv = Buffer.concat([ld(1, Buffer.from('k')), ld(2, v)]);
    expect(() => validateMessage(ld(1, ld(2, ld(2, ld(6, kv)))), requestType('logs'))).toThrow(/nested deeper than 64/);
  });

  test('packed repeated values must divide evenly', () => {
    const T = otlpTypes().ExportMetricsServiceRequest;
    const ok = Buffer.from(
      T.encode(
        T.fromObject({
          resourceMetrics: [
            { scopeMetrics: [{ metrics: [{ name: 'h', histogram: { dataPoints: [{ count: 3, bucketCounts: [1, 2], explicitBounds: [1.5] }] } }] }] },
          ],
        }),
      ).finish(),
    );
    expect(checkedRequest('metrics', ok, 'protobuf').items).toBe(1);
    // HistogramDataPoint.bucket_counts (fixed64, packed) with 7 bytes.
    const point = ld(6, Buffer.alloc(7));
    const req = ld(1, ld(2, ld(2, ld(9, ld(1, point)))));
    expect(() => validateMessage(req, requestType('metrics'))).toThrow(/bucketCounts: packed i64 values of 7 bytes/);
  });

  test('random bytes are refused (10,000 bodies of 64 bytes and more)', () => {
    const r = rng(42);
    let refused = 0;
    for (let i = 0; i < 10_000; i++) {
      const b = Buffer.alloc(64 + Math.floor(r() * 512));
      for (let j = 0; j < b.length; j++) b[j] = Math.floor(r() * 256);
      try {
        checkedRequest(i % 2 ? 'logs' : 'metrics', b, 'protobuf');
      } catch (e) {
        expect(e).toBeInstanceOf(OtlpRequestError);
        expect((e as OtlpRequestError).reason).toBe('bad_protobuf');
        refused++;
      }
    }
    expect(refused).toBe(10_000);
  });

  test('protobufjs decodes whatever the walker accepts, to the same item count', () => {
    const big = logsRequest([ccLogRecord('s', { name: 'tool_result', seq: 0, timeMs: 1 }, 'é'.repeat(70_000))]);
    const T = requestType('logs');
    const decoded = T.toObject(T.decode(big)) as { resourceLogs: { scopeLogs: { logRecords: unknown[] }[] }[] };
    expect(decoded.resourceLogs[0]!.scopeLogs[0]!.logRecords).toHaveLength(checkedRequest('logs', big, 'protobuf').items);
  });

  test('length-delimited fields are found with their byte ranges', () => {
    const a = Buffer.from('abc');
    const msg = Buffer.concat([tag(3, 0), Buffer.from([7]), ld(1, a), tag(4, 1), Buffer.alloc(8), ld(2, Buffer.alloc(200))]);
    const f = lengthDelimitedFields(msg);
    expect(f.map((x) => x.id)).toEqual([1, 2]);
    expect(msg.subarray(f[0]!.start, f[0]!.end).toString()).toBe('abc');
    expect(f[1]!.end - f[1]!.start).toBe(200);
    expect(protobuf).toBeDefined();
  });
});
