/**
 * The OpenTelemetry JS SDK's own exporters as clients of the receiver: OTLP/HTTP with JSON,
 * OTLP/HTTP with protobuf, and OTLP/gRPC, for logs, metrics and traces. What they send is
 * encoded by their code, not ours, so this checks the receiver against an independent client.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LoggerProvider, SimpleLogRecordProcessor, type LogRecordExporter } from '@opentelemetry/sdk-logs';
import { MeterProvider, PeriodicExportingMetricReader, AggregationTemporality, type PushMetricExporter } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { OTLPLogExporter as LogsJson } from '@opentelemetry/exporter-logs-otlp-http';
import { OTLPLogExporter as LogsProto } from '@opentelemetry/exporter-logs-otlp-proto';
import { OTLPLogExporter as LogsGrpc } from '@opentelemetry/exporter-logs-otlp-grpc';
import { OTLPMetricExporter as MetricsJson } from '@opentelemetry/exporter-metrics-otlp-http';
import { OTLPMetricExporter as MetricsProto } from '@opentelemetry/exporter-metrics-otlp-proto';
import { OTLPMetricExporter as MetricsGrpc } from '@opentelemetry/exporter-metrics-otlp-grpc';
import { OTLPTraceExporter as TraceProto } from '@opentelemetry/exporter-trace-otlp-proto';
import { OtlpReceiver, validateOtlpReceiverConfig } from '../../src/receivers/claude-code-otlp/index.js';
import { verifyRoot } from '../../src/storage/verify.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { landedFiles } from '../helpers/root.js';
import { tokenSums } from '../helpers/otlp.js';

afterAll(cleanupTemp);

const resource = resourceFromAttributes({ 'service.name': 'claude-code', 'service.version': '2.1.328' });

async function emitLogs(exporter: LogRecordExporter, session: string, n: number): Promise<void> {
  const provider = new LoggerProvider({ resource, processors: [new SimpleLogRecordProcessor({ exporter } as never)] });
  const logger = provider.getLogger('com.anthropic.claude_code.events', '2.1.328');
  for (let i = 0; i < n; i++) {
    logger.emit({
      body: 'claude_code.tool_result',
      timestamp: Date.UTC(2026, 10, 30, 5, 14, 12, i),
      attributes: { 'session.id': session, 'event.name': 'tool_result', 'event.sequence': i, tool_use_id: `toolu_${i}`, success: 'true', duration_ms: 10 + i },
    });
  }
  await provider.forceFlush();
  await provider.shutdown();
}

async function emitTokens(exporter: PushMetricExporter, session: string, counts: Record<string, number>): Promise<void> {
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 60_000 });
  const provider = new MeterProvider({ resource, readers: [reader] });
  const counter = provider.getMeter('com.anthropic.claude_code', '2.1.328').createCounter('claude_code.token.usage', { unit: 'tokens' });
  for (const [type, n] of Object.entries(counts)) counter.add(n, { type, 'session.id': session, model: 'claude-opus-5-5' });
  await reader.forceFlush();
  await provider.shutdown();
}

const spool = (root: string) =>
  readdirSync(join(root, '_metrics'))
    .filter((n) => n.endsWith('-otlp.pb'))
    .sort()
    .map((n) => readFileSync(join(root, '_metrics', n)));

describe('the OpenTelemetry JS SDK exporters as clients', () => {
  const root = tempDir('aszcol-otlp-sdk-');
  let r: OtlpReceiver;
  let http = '';
  let grpcAt = '';

  test('logs over OTLP/HTTP JSON, OTLP/HTTP protobuf and OTLP/gRPC land, every record once', async () => {
    r = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: { grpc: { endpoint: '127.0.0.1:0' }, http: { endpoint: '127.0.0.1:0' } } }), {
      storageRoot: root,
    });
    await r.start();
    ({ http, grpc: grpcAt } = r.addresses() as { http: string; grpc: string });
    await emitLogs(new LogsJson({ url: `http://${http}/v1/logs` }), 'sdk-json', 7);
    await emitLogs(new LogsProto({ url: `http://${http}/v1/logs` }), 'sdk-proto', 7);
    await emitLogs(new LogsGrpc({ url: `http://${grpcAt}` }), 'sdk-grpc', 7);
    expect(await r.landed(10_000)).toBe(true);
    for (const s of ['sdk-json', 'sdk-proto', 'sdk-grpc']) {
      const recs = landedFiles(root, s).flatMap((f) => f.records);
      expect(recs.map((x) => x.ord)).toEqual([1, 2, 3, 4, 5, 6, 7]);
      expect(recs.map((x) => x.tool)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => `toolu_${i}`));
      expect(recs.map((x) => x.time)).toEqual([0, 1, 2, 3, 4, 5, 6].map((i) => (i ? `2026-11-30T05:14:12.00${i}Z` : '2026-11-30T05:14:12Z')));
      expect((recs[3]!.parts[0]!.data as { attributes: Record<string, unknown> }).attributes).toMatchObject({
        'session.id': s,
        'event.sequence': 3,
        duration_ms: 13,
      });
      expect(landedFiles(root, s)[0]!.header.resource).toEqual({ attributes: expect.objectContaining({ 'service.name': 'claude-code' }) });
    }
    expect(r.stats().accepted.log_records).toBe(21);
  });

  test('token counters over the three transports land in the spool with their exact counts', async () => {
    const counts = { input: 200, output: 80, cacheRead: 600, cacheCreation: 40 };
    await emitTokens(new MetricsJson({ url: `http://${http}/v1/metrics`, temporalityPreference: AggregationTemporality.DELTA }), 'sdk-m', counts);
    await emitTokens(new MetricsProto({ url: `http://${http}/v1/metrics`, temporalityPreference: AggregationTemporality.DELTA }), 'sdk-m', counts);
    await emitTokens(new MetricsGrpc({ url: `http://${grpcAt}`, temporalityPreference: AggregationTemporality.DELTA }), 'sdk-m', counts);
    expect(await r.landed(10_000)).toBe(true);
    const files = spool(root);
    expect(files.length).toBeGreaterThanOrEqual(3);
    expect(tokenSums(files)).toEqual({ input: 600, output: 240, cacheRead: 1800, cacheCreation: 120 });
  });

  test('spans over OTLP/HTTP protobuf land as otlp_span', async () => {
    const provider = new BasicTracerProvider({ resource, spanProcessors: [new SimpleSpanProcessor(new TraceProto({ url: `http://${http}/v1/traces` }))] });
    const tracer = provider.getTracer('com.anthropic.claude_code');
    const s = tracer.startSpan('claude_code.tool', { attributes: { 'session.id': 'sdk-span', tool_use_id: 'toolu_9' } });
    s.end();
    await provider.forceFlush();
    await provider.shutdown();
    expect(await r.landed(10_000)).toBe(true);
    const f = landedFiles(root, 'sdk-span');
    expect(f.map((x) => x.header.kind)).toEqual(['otlp_span']);
    expect(f[0]!.records[0]).toMatchObject({ ord: 1, off: 0, tool: 'toolu_9' });
    await r.shutdown();
    expect(verifyRoot(root).problems).toEqual([]);
    expect(r.stats().refused_requests).toEqual({});
  });
});
