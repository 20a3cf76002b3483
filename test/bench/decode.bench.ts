/**
 * `node dist/test/bench/decode.bench.js [iterations]`: the OTLP decoders alone, without the
 * network — the strict walk (`checkedRequest`, wire.ts) and the plain decode of what a receiver
 * lands (`logsRequestGroups`/`tracesRequestGroups`, plain.ts) — over a Claude-Code-sized logs
 * request and a small traces request, each run `iterations` times (default 100k). Prints JSON:
 * nanoseconds per request for each step, the best of five rounds.
 */
import { checkedRequest } from '../../src/otlp/codec.js';
import { otlpTypes, requestType } from '../../src/otlp/proto.js';
import { protobufToOtlpJson } from '../../src/otlp/json.js';
import { logsRequestGroups, tracesRequestGroups } from '../../src/otlp/requests.js';
import { ccLogsRequest } from '../helpers/otlp.js';

const N = Number(process.argv[2] ?? 100_000);
const ROUNDS = 5;

function tracesRequest(): Buffer {
  const T = otlpTypes().ExportTraceServiceRequest;
  const id = (n: number, len: number) => Buffer.alloc(len, n);
  const span = (i: number) => ({
    traceId: id(1, 16),
    spanId: id(i + 2, 8),
    parentSpanId: id(1, 8),
    name: `tool.call.${i}`,
    kind: 1,
    startTimeUnixNano: 1_780_000_000_000_000_000,
    endTimeUnixNano: 1_780_000_000_500_000_000,
    attributes: [
      { key: 'session.id', value: { stringValue: 'b3f1c1de-8f55-4a38-9a57-6f2f5ad0d9a3' } },
      { key: 'n', value: { intValue: i } },
    ],
    events: [{ timeUnixNano: 1_780_000_000_100_000_000, name: 'start', attributes: [{ key: 'ok', value: { boolValue: true } }] }],
    status: { code: 1, message: '' },
  });
  const msg = T.fromObject({
    resourceSpans: [
      {
        resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] },
        scopeSpans: [{ scope: { name: 's' }, spans: [0, 1, 2, 3].map(span) }],
      },
    ],
  });
  return Buffer.from(T.encode(msg).finish());
}

function time(fn: () => void): number {
  let best = Infinity;
  for (let r = 0; r < ROUNDS; r++) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < N; i++) fn();
    best = Math.min(best, Number(process.hrtime.bigint() - t0) / N);
  }
  return +best.toFixed(1);
}

const logs = ccLogsRequest('b3f1c1de-8f55-4a38-9a57-6f2f5ad0d9a3');
const traces = tracesRequest();
const logsJson = Buffer.from(protobufToOtlpJson(requestType('logs'), logs));
let sink = 0;
const result = {
  iterations: N,
  logs_bytes: logs.length,
  logs_json_bytes: logsJson.length,
  traces_bytes: traces.length,
  ns_per_request: {
    logs_validate: time(() => {
      sink += checkedRequest('logs', logs, 'protobuf').items;
    }),
    logs_json_validate: time(() => {
      sink += checkedRequest('logs', logsJson, 'json').items;
    }),
    logs_plain: time(() => {
      sink += logsRequestGroups(logs)[0]!.scopes[0]!.items.length;
    }),
    traces_validate: time(() => {
      sink += checkedRequest('traces', traces, 'protobuf').items;
    }),
    traces_plain: time(() => {
      sink += tracesRequestGroups(traces)[0]!.scopes[0]!.items.length;
    }),
  },
};
if (sink < 0) console.log(sink);
console.log(JSON.stringify(result, null, 2));
