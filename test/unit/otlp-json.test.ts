import { describe, expect, test } from '@jest/globals';
import { LoggerProvider, InMemoryLogRecordExporter, SimpleLogRecordProcessor } from '@opentelemetry/sdk-logs';
import { MeterProvider, InMemoryMetricExporter, PeriodicExportingMetricReader, AggregationTemporality } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import {
  JsonLogsSerializer,
  ProtobufLogsSerializer,
  JsonMetricsSerializer,
  ProtobufMetricsSerializer,
  JsonTraceSerializer,
  ProtobufTraceSerializer,
} from '@opentelemetry/otlp-transformer';
import { otlpJsonToProtobuf, protobufToOtlpJson, OtlpJsonError, toOtlpJson } from '../../src/otlp/json.js';
import { checkedRequest, type OtlpRequestError } from '../../src/otlp/codec.js';
import { otlpTypes, requestType, type Signal } from '../../src/otlp/proto.js';
import { ccLogsRequest, ccMetricsRequest } from '../helpers/otlp.js';

const decoded = (signal: Signal, bytes: Uint8Array) =>
  requestType(signal).toObject(requestType(signal).decode(bytes), { longs: String, bytes: String, enums: Number });
const resource = resourceFromAttributes({ 'service.name': 'claude-code', 'service.version': '2.1.328' });

/** Log records made by the OpenTelemetry JS SDK itself, with every kind of attribute value. */
async function sdkLogRecords() {
  const exporter = new InMemoryLogRecordExporter();
  const provider = new LoggerProvider({ resource, processors: [new SimpleLogRecordProcessor({ exporter } as never)] });
  const logger = provider.getLogger('com.anthropic.claude_code.events', '2.1.328');
  logger.emit({
    body: 'claude_code.api_request',
    severityNumber: 9,
    severityText: 'INFO',
    timestamp: new Date('2026-11-30T05:14:12.498Z'),
    attributes: { 'session.id': 'S-1', request_id: 'req_1', input_tokens: 100, cost_usd: 0.00136, ok: true, list: ['a', 'b'], nested: { deep: 1 } as never },
  });
  logger.emit({ body: { kv: 'map', n: 3 } as never, attributes: { 'session.id': 'S-1', big: 2 ** 60 } });
  await provider.forceFlush();
  return exporter.getFinishedLogRecords();
}

async function sdkMetrics() {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.DELTA);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
  const provider = new MeterProvider({ resource, readers: [reader] });
  const meter = provider.getMeter('com.anthropic.claude_code', '2.1.328');
  const tokens = meter.createCounter('claude_code.token.usage', { unit: 'tokens' });
  tokens.add(200, { type: 'input', 'session.id': 'S-1' });
  tokens.add(80, { type: 'output', 'session.id': 'S-1' });
  meter.createHistogram('claude_code.latency', { unit: 'ms' }).record(12.5, { 'session.id': 'S-1' });
  meter.createUpDownCounter('claude_code.active').add(-3);
  await reader.forceFlush();
  return exporter.getMetrics()[0]!;
}

async function sdkSpans() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = provider.getTracer('com.anthropic.claude_code', '2.1.328');
  const parent = tracer.startSpan('claude_code.interaction', { attributes: { 'session.id': 'S-1' } });
  parent.addEvent('started', { n: 1 });
  parent.setStatus({ code: 2, message: 'boom' });
  parent.end();
  await provider.forceFlush();
  return exporter.getFinishedSpans();
}

describe('OTLP/JSON', () => {
  test("the SDK's own JSON, converted, equals the SDK's own protobuf (logs, metrics, traces)", async () => {
    const logs = await sdkLogRecords();
    const metrics = await sdkMetrics();
    const spans = await sdkSpans();
    const cases: [Signal, Uint8Array, Uint8Array][] = [
      ['logs', JsonLogsSerializer.serializeRequest(logs)!, ProtobufLogsSerializer.serializeRequest(logs)!],
      ['metrics', JsonMetricsSerializer.serializeRequest(metrics)!, ProtobufMetricsSerializer.serializeRequest(metrics)!],
      ['traces', JsonTraceSerializer.serializeRequest(spans)!, ProtobufTraceSerializer.serializeRequest(spans)!],
    ];
    for (const [signal, json, pb] of cases) {
      const ours = otlpJsonToProtobuf(requestType(signal), JSON.parse(Buffer.from(json).toString('utf8')));
      expect(decoded(signal, ours)).toEqual(decoded(signal, pb));
      // And the checked path counts the same items either way.
      expect(checkedRequest(signal, Buffer.from(json), 'json').items).toBe(checkedRequest(signal, Buffer.from(pb), 'protobuf').items);
    }
  });

  test('protobuf → JSON → protobuf keeps every field (Claude-Code-shaped requests)', () => {
    for (const [signal, pb] of [
      ['logs', ccLogsRequest('S-1')],
      ['metrics', ccMetricsRequest('S-1', { input: 1, output: 2, cacheRead: 3, cacheCreation: 4 })],
    ] as const) {
      const T = requestType(signal);
      const json = protobufToOtlpJson(T, pb);
      expect(Buffer.from(otlpJsonToProtobuf(T, JSON.parse(json))).equals(pb)).toBe(true);
    }
  });

  test('ids are hex, 64-bit integers decimal strings, enums integers; snake_case keys and enum names are accepted', () => {
    const T = requestType('logs');
    const req = {
      resource_logs: [
        {
          scopeLogs: [
            {
              log_records: [
                {
                  timeUnixNano: '1796015652148000000',
                  observed_time_unix_nano: 1796015652148,
                  severityNumber: 'SEVERITY_NUMBER_WARN',
                  traceId: '5B8EFFF798038103D269B633813FC60C',
                  spanId: 'eee19b7ec3c1b174',
                  body: { bytesValue: 'AAEC' },
                  extra_unknown: { ignored: true },
                },
              ],
            },
          ],
        },
      ],
    };
    const back = toOtlpJson(T, T.decode(otlpJsonToProtobuf(T, req))) as { resourceLogs: { scopeLogs: { logRecords: Record<string, unknown>[] }[] }[] };
    const r = back.resourceLogs[0]!.scopeLogs[0]!.logRecords[0]!;
    expect(r).toEqual({
      timeUnixNano: '1796015652148000000',
      observedTimeUnixNano: '1796015652148',
      severityNumber: 13,
      traceId: '5b8efff798038103d269b633813fc60c',
      spanId: 'eee19b7ec3c1b174',
      body: { bytesValue: 'AAEC' },
    });
  });

  test('a value that does not fit is refused with its exact path', () => {
    const T = requestType('logs');
    const bad = (rec: object) => () => otlpJsonToProtobuf(T, { resourceLogs: [{ scopeLogs: [{ logRecords: [{}, rec] }] }] });
    const at = 'resourceLogs[0].scopeLogs[0].logRecords[1]';
    expect(bad({ timeUnixNano: 'soon' })).toThrow(`${at}.timeUnixNano: expected a 64-bit integer`);
    expect(bad({ timeUnixNano: '18446744073709551616' })).toThrow(`${at}.timeUnixNano: "18446744073709551616" is out of range for fixed64`);
    expect(bad({ timeUnixNano: -1 })).toThrow(`${at}.timeUnixNano: expected an unsigned integer`);
    expect(bad({ traceId: 'not-hex' })).toThrow(`${at}.traceId: expected a hex-encoded id`);
    expect(bad({ severityNumber: 'LOUD' })).toThrow(`${at}.severityNumber: expected an enum value of SeverityNumber`);
    expect(bad({ attributes: {} })).toThrow(`${at}.attributes: expected an array`);
    expect(bad({ attributes: [{ key: 'k', value: { stringValue: 'a', intValue: '1' } }] })).toThrow(
      `${at}.attributes[0].value.intValue: only one of value may be set`,
    );
    expect(bad({ body: { stringValue: 5 } })).toThrow(`${at}.body.stringValue: expected a string, got number 5`);
    expect(bad({ flags: 2 ** 33 })).toThrow(`${at}.flags: 8589934592 is out of range for fixed32`);
    expect(() => otlpJsonToProtobuf(T, [1, 2])).toThrow(OtlpJsonError);
    expect(() => otlpJsonToProtobuf(T, [1, 2])).toThrow('(request): expected an object (ExportLogsServiceRequest), got an array');
  });

  test('the checked path names the refusal: not JSON, not OTLP', () => {
    const reason = (body: string) => {
      try {
        checkedRequest('metrics', Buffer.from(body), 'json');
      } catch (e) {
        return [(e as OtlpRequestError).reason, (e as Error).message];
      }
      return undefined;
    };
    expect(reason('{"resourceMetrics": [')).toEqual(['bad_json', expect.stringMatching(/^the body is not JSON/)]);
    expect(reason('{"resourceMetrics": [{"scopeMetrics": [{"metrics": [{"name": 7}]}]}]}')).toEqual([
      'bad_json',
      'not an OTLP metrics request: resourceMetrics[0].scopeMetrics[0].metrics[0].name: expected a string, got number 7',
    ]);
    expect(reason('{}')).toBeUndefined();
    expect(otlpTypes().Status).toBeDefined();
  });
});
