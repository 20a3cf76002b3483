/**
 * The landing thread writes each pushed record's line directly (record-line.ts); the general
 * Session Data encoder must give the same bytes for every record the OTLP dialect makes.
 */
import { describe, expect, test } from '@jest/globals';
import { logsRequestGroups, tracesRequestGroups } from '../../src/otlp/requests.js';
import { otlpLogRecordToSd, otlpSpanToSd } from '../../src/adapters/claude-code/otlp-dialect.js';
import { recordTail, recordTailFast, recordTailGeneral } from '../../src/receivers/claude-code-otlp/record-line.js';
import { shortSha } from '../../src/formats/session-data/encode.js';
import { requestType } from '../../src/otlp/proto.js';
import { ccLogsRequest } from '../helpers/otlp.js';
import { rng } from '../helpers/rng.js';

const pick = <T>(r: () => number, xs: T[]): T => xs[Math.floor(r() * xs.length)]!;

function value(r: () => number): object {
  return pick(r, [
    { stringValue: pick(r, ['x', '', 'ünïcödé "quoted" \\ back', 'line\nbreak', '\u2028', 'toolu_1']) },
    { intValue: pick(r, [0, 7, -3, '9007199254740993']) },
    { doubleValue: pick(r, [1.5, 0, -0.25, 1e300]) },
    { boolValue: r() < 0.5 },
    { bytesValue: Buffer.from([1, 2, 255]) },
    { arrayValue: { values: [{ stringValue: 'a' }, { intValue: 2 }] } },
    { kvlistValue: { values: [{ key: 'k', value: { stringValue: 'v' } }] } },
    {},
  ]);
}

function attributes(r: () => number): object[] {
  const out: object[] = [{ key: 'session.id', value: { stringValue: 'S' } }];
  if (r() < 0.5) out.push({ key: 'tool_use_id', value: pick(r, [{ stringValue: 'toolu_9' }, { stringValue: '' }, { intValue: 4 }]) });
  if (r() < 0.5) out.push({ key: 'event.name', value: { stringValue: pick(r, ['tool_result', 'api_request', 'claude_code.user_prompt']) } });
  for (let i = 0; i < Math.floor(r() * 4); i++) out.push({ key: `a${i}`, value: value(r) });
  return out;
}

describe('a pushed record written directly', () => {
  test('is byte for byte what the general encoder writes, for 600 generated log records and spans, and the direct path takes every one', () => {
    const r = rng(17);
    const L = requestType('logs');
    const T = requestType('traces');
    let n = 0;
    for (let i = 0; i < 300; i++) {
      const rec = {
        timeUnixNano: pick(r, [0, 1_796_015_652_148_000_000]),
        observedTimeUnixNano: pick(r, [0, 1_796_015_652_149_000_000]),
        severityNumber: pick(r, [0, 9]),
        severityText: pick(r, ['', 'INFO']),
        body: r() < 0.7 ? value(r) : undefined,
        attributes: attributes(r),
        eventName: pick(r, ['', 'claude_code.tool_result']),
        traceId: r() < 0.3 ? Buffer.alloc(16, 3) : undefined,
        spanId: r() < 0.3 ? Buffer.alloc(8, 4) : undefined,
        flags: pick(r, [0, 1]),
      };
      const logs = Buffer.from(L.encode(L.fromObject({ resourceLogs: [{ scopeLogs: [{ logRecords: [rec] }] }] })).finish());
      const span = {
        traceId: Buffer.alloc(16, 1),
        spanId: Buffer.alloc(8, 2),
        name: pick(r, ['claude_code.tool', '', 'x"y']),
        kind: pick(r, [0, 1, 3]),
        startTimeUnixNano: pick(r, [0, 1_796_015_652_148_000_000]),
        endTimeUnixNano: pick(r, [0, 1_796_015_652_150_000_000]),
        attributes: attributes(r),
        events: r() < 0.3 ? [{ name: 'e', timeUnixNano: 5, attributes: attributes(r) }] : [],
        status: r() < 0.3 ? { code: 2, message: 'bad' } : undefined,
      };
      const traces = Buffer.from(T.encode(T.fromObject({ resourceSpans: [{ scopeSpans: [{ spans: [span] }] }] })).finish());
      for (const [item, converted] of [
        ...logsRequestGroups(logs).flatMap((g) => g.scopes.flatMap((s) => s.items.map((it) => [it.bytes, otlpLogRecordToSd(it.message)] as const))),
        ...tracesRequestGroups(traces).flatMap((g) => g.scopes.flatMap((s) => s.items.map((it) => [it.bytes, otlpSpanToSd(it.message)] as const))),
      ]) {
        expect(recordTailFast(shortSha(item), item.length, converted)).toBe(recordTailGeneral(item, converted));
        n++;
      }
    }
    expect(n).toBe(600);
  });

  test('a shape it does not know goes to the general encoder', () => {
    const req = ccLogsRequest('S', 0);
    const it = logsRequestGroups(req)[0]!.scopes[0]!.items[0]!;
    const c = otlpLogRecordToSd(it.message);
    const odd = { ...c, record: { ...c.record, model: 'claude' } } as typeof c;
    expect(recordTailFast(shortSha(it.bytes), it.bytes.length, odd)).toBeUndefined();
    expect(recordTail(it.bytes, odd)).toBe(recordTailGeneral(it.bytes, odd));
    expect(recordTail(it.bytes, odd)).toContain('"model":"claude"');
  });
});
