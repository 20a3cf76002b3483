/**
 * The `prometheus` exporter's configuration.
 *
 * ```yaml
 * exporters:
 *   prometheus:
 *     endpoint: 127.0.0.1:9464   # where GET <path> answers in Prometheus text format
 *     path: /metrics
 *     allowed_hosts: []           # Host names answered beyond IP literals, localhost and the bound host
 * ```
 */
import { ConfigError } from '../../util/errors.js';
import { endpoint, join, mapping, str, type Endpoint } from '../../config/reader.js';
import { allowedHosts } from '../../component/http.js';

export interface PrometheusExporterConfig {
  endpoint: Endpoint;
  path: string;
  /** Host names answered beyond IP literals, localhost and the bound host (component/http.ts). */
  allowedHosts: string[];
}

export const PROMETHEUS_DEFAULT_ENDPOINT = '127.0.0.1:9464';

export function validatePrometheusExporterConfig(raw: unknown, path: string): PrometheusExporterConfig {
  const m = mapping(raw, path, ['endpoint', 'path', 'allowed_hosts']);
  const p = str(m.path, join(path, 'path'), '/metrics', { nonEmpty: true });
  if (!p.startsWith('/')) throw new ConfigError(join(path, 'path'), `must start with "/", got ${JSON.stringify(p)}`);
  return { endpoint: endpoint(m.endpoint, join(path, 'endpoint'), PROMETHEUS_DEFAULT_ENDPOINT), path: p, allowedHosts: allowedHosts(m.allowed_hosts, path) };
}
