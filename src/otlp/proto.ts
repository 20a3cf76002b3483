/**
 * The OTLP messages, loaded at run time from the `.proto` files in `proto/` (shipped with the
 * package) into one protobufjs root. protobufjs compiles an encoder and a decoder per type on
 * first use, which is as fast as generated static code, so there is no build step for them.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import protobuf from 'protobufjs';
import { lazy } from '../util/lazy.js';

export type Type = protobuf.Type;
export type Root = protobuf.Root;

/** `proto/` at the package root: three levels above `dist/src/otlp/`, two above `src/otlp/`. */
export function protoDir(): string {
  for (const rel of ['../../../proto/', '../../proto/']) {
    const dir = fileURLToPath(new URL(rel, import.meta.url));
    if (existsSync(join(dir, 'opentelemetry'))) return dir;
  }
  throw new Error('the OTLP .proto files were not found beside the package (proto/opentelemetry/…)');
}

export const PROTO_FILES = [
  'opentelemetry/proto/collector/logs/v1/logs_service.proto',
  'opentelemetry/proto/collector/metrics/v1/metrics_service.proto',
  'opentelemetry/proto/collector/trace/v1/trace_service.proto',
  'google/rpc/status.proto',
];

/** The root with every OTLP message and service; loaded once per thread, on first use. */
export const otlpRoot: () => Root = lazy(loadRoot);

function loadRoot(): Root {
  const dir = protoDir();
  const root = new protobuf.Root();
  // Imports are named from the proto/ directory, as protoc's include path would have them.
  root.resolvePath = (_origin: string, target: string) => (target.startsWith('/') ? target : join(dir, target));
  root.loadSync(
    PROTO_FILES.map((f) => join(dir, f)),
    { keepCase: false },
  );
  root.resolveAll();
  return root;
}

const P = 'opentelemetry.proto.';

/** The message types the receiver and the exporter use, looked up once. */
export interface OtlpTypes {
  ExportLogsServiceRequest: Type;
  ExportLogsServiceResponse: Type;
  ExportMetricsServiceRequest: Type;
  ExportMetricsServiceResponse: Type;
  ExportTraceServiceRequest: Type;
  ExportTraceServiceResponse: Type;
  ResourceLogs: Type;
  ScopeLogs: Type;
  LogRecord: Type;
  ResourceSpans: Type;
  ScopeSpans: Type;
  Span: Type;
  Resource: Type;
  InstrumentationScope: Type;
  AnyValue: Type;
  KeyValue: Type;
  Status: Type;
  RetryInfo: Type;
  Any: Type;
}

/** The types above, looked up in the root on first use. */
export const otlpTypes: () => OtlpTypes = lazy(lookUpTypes);

function lookUpTypes(): OtlpTypes {
  const r = otlpRoot();
  const t = (name: string) => r.lookupType(name);
  return {
    ExportLogsServiceRequest: t(`${P}collector.logs.v1.ExportLogsServiceRequest`),
    ExportLogsServiceResponse: t(`${P}collector.logs.v1.ExportLogsServiceResponse`),
    ExportMetricsServiceRequest: t(`${P}collector.metrics.v1.ExportMetricsServiceRequest`),
    ExportMetricsServiceResponse: t(`${P}collector.metrics.v1.ExportMetricsServiceResponse`),
    ExportTraceServiceRequest: t(`${P}collector.trace.v1.ExportTraceServiceRequest`),
    ExportTraceServiceResponse: t(`${P}collector.trace.v1.ExportTraceServiceResponse`),
    ResourceLogs: t(`${P}logs.v1.ResourceLogs`),
    ScopeLogs: t(`${P}logs.v1.ScopeLogs`),
    LogRecord: t(`${P}logs.v1.LogRecord`),
    ResourceSpans: t(`${P}trace.v1.ResourceSpans`),
    ScopeSpans: t(`${P}trace.v1.ScopeSpans`),
    Span: t(`${P}trace.v1.Span`),
    Resource: t(`${P}resource.v1.Resource`),
    InstrumentationScope: t(`${P}common.v1.InstrumentationScope`),
    AnyValue: t(`${P}common.v1.AnyValue`),
    KeyValue: t(`${P}common.v1.KeyValue`),
    Status: t('google.rpc.Status'),
    RetryInfo: t('google.rpc.RetryInfo'),
    Any: t('google.protobuf.Any'),
  };
}

/** The three signals, with the names each transport uses for them. */
export type Signal = 'logs' | 'metrics' | 'traces';

export const SIGNALS: readonly Signal[] = ['logs', 'metrics', 'traces'];

export const GRPC_SERVICE: Record<Signal, string> = {
  logs: `${P}collector.logs.v1.LogsService`,
  metrics: `${P}collector.metrics.v1.MetricsService`,
  traces: `${P}collector.trace.v1.TraceService`,
};

export const HTTP_PATH: Record<Signal, string> = { logs: '/v1/logs', metrics: '/v1/metrics', traces: '/v1/traces' };

export function requestType(signal: Signal): Type {
  const t = otlpTypes();
  return signal === 'logs' ? t.ExportLogsServiceRequest : signal === 'metrics' ? t.ExportMetricsServiceRequest : t.ExportTraceServiceRequest;
}

export function responseType(signal: Signal): Type {
  const t = otlpTypes();
  return signal === 'logs' ? t.ExportLogsServiceResponse : signal === 'metrics' ? t.ExportMetricsServiceResponse : t.ExportTraceServiceResponse;
}
