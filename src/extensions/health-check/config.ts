import { ConfigError } from '../../util/errors.js';
import { endpoint, join, mapping, str, type Endpoint } from '../../config/reader.js';
import { allowedHosts } from '../../component/http.js';

export interface HealthCheckConfig {
  endpoint: Endpoint;
  /** The path that answers; every other path is 404. */
  path: string;
  /** Host names answered beyond IP literals, localhost and the bound host (component/http.ts). */
  allowedHosts: string[];
}

export const HEALTH_CHECK_DEFAULT_ENDPOINT = '127.0.0.1:13133';

export function validateHealthCheckConfig(raw: unknown, path: string): HealthCheckConfig {
  const m = mapping(raw, path, ['endpoint', 'path', 'allowed_hosts']);
  const p = str(m.path, join(path, 'path'), '/', { nonEmpty: true });
  if (!p.startsWith('/')) throw new ConfigError(join(path, 'path'), `must start with "/", got ${JSON.stringify(p)}`);
  return { endpoint: endpoint(m.endpoint, join(path, 'endpoint'), HEALTH_CHECK_DEFAULT_ENDPOINT), path: p, allowedHosts: allowedHosts(m.allowed_hosts, path) };
}
