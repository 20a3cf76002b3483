import { describe, expect, test } from '@jest/globals';
import { decodeLogRecord, PlainReader, type PlainObject } from '../../src/otlp/plain.js';
import { lengthDelimitedFields, validateMessage, WireError, WireWalker } from '../../src/otlp/wire.js';
import { logsRequestGroups } from '../../src/otlp/requests.js';
import { otlpTypes } from '../../src/otlp/proto.js';
import { apiRequestAttrs, ccLogRecord, ccLogsRequest, logsRequest, toolResultAttrs } from '../helpers/otlp.js';

/** The byte range of the first log record of a one-record logs request. */
function onlyRecord(buf: Buffer): { start: number; end: number } {
  const g = logsRequestGroups(buf);
  const item = g[0]!.scopes[0]!.items[0]!;
  const start = item.bytes.byteOffset - buf.byteOffset;
  return { start, end: start + item.bytes.length };
}

/** One step of a hand-driven decode: the next field of a log record, its attribute added to `into`. */
function stepAttribute(r: PlainReader, into: PlainObject): void {
  const tag = r.varint();
  if (tag >>> 3 === 6 && (tag & 7) === 2) {
    const e = r.payloadEnd();
    r.keyValue(e, into);
    r.at = e;
  } else r.skip(tag & 7);
}

describe('each decode keeps its own read position', () => {
  // Two records of different shapes and lengths, so their fields never line up byte for byte.
  const a = logsRequest([ccLogRecord('session-a', { name: 'api_request', seq: 1, timeMs: 1_796_015_652_000, attrs: apiRequestAttrs('p-a', 'req-a') })]);
  const b = logsRequest([
    ccLogRecord('session-bbbbbbbbbbbbbbbbbbbbbbbb', {
      name: 'tool_result',
      seq: 22,
      timeMs: 1_796_015_653_000,
      attrs: toolResultAttrs('p-b', 'toolu-b', 'req-b'),
    }),
  ]);

  test('two plain readers alive at once, stepped in turn, each read their own record exactly', () => {
    const ra = onlyRecord(a),
      rb = onlyRecord(b);
    const readerA = new PlainReader(a, ra.start),
      readerB = new PlainReader(b, rb.start);
    const gotA: PlainObject = {},
      gotB: PlainObject = {};
    while (readerA.at < ra.end || readerB.at < rb.end) {
      if (readerA.at < ra.end) stepAttribute(readerA, gotA);
      if (readerB.at < rb.end) stepAttribute(readerB, gotB);
    }
    expect(readerA.at).toBe(ra.end);
    expect(readerB.at).toBe(rb.end);
    expect(gotA).toEqual(decodeLogRecord(a, ra.start, ra.end).attributes);
    expect(gotB).toEqual(decodeLogRecord(b, rb.start, rb.end).attributes);
    expect(gotA['session.id']).toBe('session-a');
    expect(gotA.request_id).toBe('req-a');
    expect(gotB['session.id']).toBe('session-bbbbbbbbbbbbbbbbbbbbbbbb');
    expect(gotB.tool_use_id).toBe('toolu-b');
  });

  test('a whole decode of another buffer in the middle of one does not move it', () => {
    const ra = onlyRecord(a),
      rb = onlyRecord(b);
    const readerA = new PlainReader(a, ra.start);
    const gotA: PlainObject = {};
    stepAttribute(readerA, gotA);
    stepAttribute(readerA, gotA);
    const middle = readerA.at;
    const other = decodeLogRecord(b, rb.start, rb.end);
    expect(readerA.at).toBe(middle);
    while (readerA.at < ra.end) stepAttribute(readerA, gotA);
    expect(gotA).toEqual(decodeLogRecord(a, ra.start, ra.end).attributes);
    expect(other.attributes['event.name']).toBe('tool_result');
  });

  test('two wire walkers alive at once, stepped in turn, find the same fields as each alone', () => {
    const x = ccLogsRequest('s1'),
      y = ccLogsRequest('another-session', 7);
    const top = (buf: Buffer) => lengthDelimitedFields(buf)[0]!;
    const tx = top(x),
      ty = top(y);
    const wx = new WireWalker(x, false, [], new Int16Array(0)),
      wy = new WireWalker(y, false, [], new Int16Array(0));
    wx.at = tx.start;
    wy.at = ty.start;
    const seen = { x: [] as { id: number; start: number; end: number }[], y: [] as { id: number; start: number; end: number }[] };
    const step = (w: WireWalker, end: number, into: { id: number; start: number; end: number }[]) => {
      const tag = w.varint(end, 0);
      const n = w.varint(end, 0); // every field of ResourceLogs is length-delimited
      into.push({ id: tag >>> 3, start: w.at, end: w.at + n });
      w.at += n;
    };
    while (wx.at < tx.end || wy.at < ty.end) {
      if (wx.at < tx.end) step(wx, tx.end, seen.x);
      if (wy.at < ty.end) step(wy, ty.end, seen.y);
    }
    expect(seen.x).toEqual(lengthDelimitedFields(x, tx.start, tx.end));
    expect(seen.y).toEqual(lengthDelimitedFields(y, ty.start, ty.end));
  });

  test('a walk that fails midway leaves nothing behind for the next one', () => {
    const T = otlpTypes();
    const good = ccLogsRequest('s1');
    const before = validateMessage(good, T.ExportLogsServiceRequest, [T.LogRecord], 0, good.length, { envelope: true }).counts;
    expect(() => validateMessage(good.subarray(0, good.length - 5), T.ExportLogsServiceRequest, [T.LogRecord], 0, good.length - 5, { envelope: true })).toThrow(
      WireError,
    );
    // An unknown top-level field is refused only in an envelope: the failed walk's envelope flag must not linger.
    const extra = Buffer.concat([good, Buffer.from([0x10, 0x01])]);
    expect(() => validateMessage(extra, T.ExportLogsServiceRequest, [], 0, extra.length, { envelope: true })).toThrow(/not part of an OTLP export request/);
    expect(validateMessage(extra, T.ExportLogsServiceRequest, [T.LogRecord]).counts).toEqual([5]);
    expect(validateMessage(good, T.ExportLogsServiceRequest, [T.LogRecord], 0, good.length, { envelope: true }).counts).toEqual(before);
    expect(before).toEqual([5]);
  });
});
