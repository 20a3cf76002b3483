import { endpoint, formatEndpoint, join, mapping } from '../../config/reader.js';
import { allowedHosts } from '../../component/http.js';

export interface ViewConfig {
  /** `host:port`, as the collector writes listen addresses; port 0 takes any free port. */
  endpoint: string;
  /** Host names answered beyond IP literals, localhost and the bound host (component/http.ts). */
  allowedHosts: string[];
}

export const VIEW_DEFAULT_ENDPOINT = '127.0.0.1:8787';

export function defaultViewConfig(): ViewConfig {
  return { endpoint: VIEW_DEFAULT_ENDPOINT, allowedHosts: [] };
}

/**
 * `extensions.view`: `endpoint` and `allowed_hosts`. Absent or null means the default. Throws ConfigError at the
 * exact path of the value that is wrong.
 */
export function validateViewConfig(raw: unknown, path: string): ViewConfig {
  const m = mapping(raw, path, ['endpoint', 'allowed_hosts']);
  return { endpoint: formatEndpoint(endpoint(m.endpoint, join(path, 'endpoint'), VIEW_DEFAULT_ENDPOINT)), allowedHosts: allowedHosts(m.allowed_hosts, path) };
}
