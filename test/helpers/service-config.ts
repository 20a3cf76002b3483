/**
 * A service configuration file written from an object, for tests that start the real service.
 * Every test service listens on loopback ports the kernel picks, its self-metrics included.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';

/** A loopback endpoint on a port the kernel picks. */
export const ANY_LOOPBACK_PORT = '127.0.0.1:0';

export interface ServicePipeline {
  receivers: string[];
  processors?: string[];
  exporters?: string[];
}

export interface ServiceConfigParts {
  root: string;
  receivers: Record<string, unknown>;
  processors?: Record<string, unknown>;
  exporters?: Record<string, unknown>;
  /** Each extension is also switched on in `service.extensions`. */
  extensions?: Record<string, unknown>;
  pipelines: Record<string, ServicePipeline>;
  shutdownTimeout?: string;
  logLevel?: string;
}

/** The configuration's YAML text. */
export function serviceConfigYaml(parts: ServiceConfigParts): string {
  const extensions = parts.extensions ?? {};
  const telemetry: Record<string, unknown> = { metrics: { address: ANY_LOOPBACK_PORT } };
  if (parts.logLevel) telemetry.logs = { level: parts.logLevel };
  const service: Record<string, unknown> = { extensions: Object.keys(extensions) };
  if (parts.shutdownTimeout) service.shutdown_timeout = parts.shutdownTimeout;
  service.pipelines = parts.pipelines;
  service.telemetry = telemetry;
  const doc: Record<string, unknown> = { storage: { root: parts.root }, receivers: parts.receivers };
  if (parts.processors) doc.processors = parts.processors;
  if (parts.exporters) doc.exporters = parts.exporters;
  doc.extensions = extensions;
  doc.service = service;
  return stringify(doc);
}

/** Writes `aszcol.yaml` into `dir` and returns its path. */
export function writeServiceConfig(dir: string, parts: ServiceConfigParts): string {
  const path = join(dir, 'aszcol.yaml');
  writeFileSync(path, serviceConfigYaml(parts));
  return path;
}

/** The OTLP receiver alone, over HTTP, with the health check: what the journal tests start. */
export function otlpHttpOnly(root: string, opts: { shutdownTimeout: string; logLevel?: string }): ServiceConfigParts {
  return {
    root,
    receivers: { claude_code_otlp: { protocols: { http: { endpoint: ANY_LOOPBACK_PORT } } } },
    extensions: { health_check: { endpoint: ANY_LOOPBACK_PORT } },
    pipelines: { sessions: { receivers: ['claude_code_otlp'] } },
    ...opts,
  };
}
