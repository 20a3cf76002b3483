import { ConfigError } from '../util/errors.js';
import { parseBytes, parseDuration } from '../util/units.js';

/**
 * Small readers for one configuration value each. Every reader takes the exact path of the value
 * and throws a ConfigError that names it and says what is allowed, so a component's `validate`
 * reads like its list of keys. Factories written by others use the same readers.
 */

export type Mapping = Record<string, unknown>;

export function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'object') return 'a mapping';
  return JSON.stringify(v);
}

export const join = (path: string, key: string | number): string => (typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${key}` : key);

/**
 * A mapping whose keys must all be in `allowed`. `null` and absent read as an empty mapping
 * (YAML writes `receivers:\n  claude_code_local:` for "with defaults").
 */
export function mapping(raw: unknown, path: string, allowed?: readonly string[]): Mapping {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(path || '(root)', `must be a mapping, got ${describe(raw)}`);
  const m = raw as Mapping;
  if (allowed) {
    for (const k of Object.keys(m)) {
      if (!allowed.includes(k)) {
        throw new ConfigError(join(path, k), `unknown key; allowed here: ${allowed.length ? allowed.join(', ') : '(none)'}`);
      }
    }
  }
  return m;
}

export function str(v: unknown, path: string, def: string, opts: { nonEmpty?: boolean; oneOf?: readonly string[] } = {}): string {
  if (v === undefined || v === null) {
    if (opts.nonEmpty && !def) throw new ConfigError(path, 'is required');
    return def;
  }
  // A value written as `${env:PORT}` arrives typed (YAML rules); a string key still takes it as text.
  const s = typeof v === 'number' || typeof v === 'boolean' ? String(v) : v;
  if (typeof s !== 'string') throw new ConfigError(path, `must be a string, got ${describe(v)}`);
  if (opts.nonEmpty && s === '') throw new ConfigError(path, 'must not be empty');
  if (opts.oneOf && !opts.oneOf.includes(s)) throw new ConfigError(path, `must be one of ${opts.oneOf.join(', ')}; got ${JSON.stringify(s)}`);
  return s;
}

export function bool(v: unknown, path: string, def: boolean): boolean {
  if (v === undefined || v === null) return def;
  if (typeof v !== 'boolean') throw new ConfigError(path, `must be true or false, got ${describe(v)}`);
  return v;
}

export function int(v: unknown, path: string, def: number, range: { min?: number; max?: number } = {}): number {
  if (v === undefined || v === null) return def;
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new ConfigError(path, `must be an integer, got ${describe(v)}`);
  if (range.min !== undefined && v < range.min) throw new ConfigError(path, `must be at least ${range.min}, got ${v}`);
  if (range.max !== undefined && v > range.max) throw new ConfigError(path, `must be at most ${range.max}, got ${v}`);
  return v;
}

/** A duration in milliseconds: "5s", "1m30s", "250ms", "24h" (a bare number is milliseconds). */
export function duration(v: unknown, path: string, defMs: number, range: { minMs?: number; maxMs?: number } = {}): number {
  if (v === undefined || v === null) return defMs;
  let ms: number;
  try {
    ms = parseDuration(v);
  } catch (err) {
    throw new ConfigError(path, (err as Error).message);
  }
  if (range.minMs !== undefined && ms < range.minMs) throw new ConfigError(path, `must be at least ${range.minMs}ms, got ${JSON.stringify(v)}`);
  if (range.maxMs !== undefined && ms > range.maxMs) throw new ConfigError(path, `must be at most ${range.maxMs}ms, got ${JSON.stringify(v)}`);
  return ms;
}

/** A byte size: "2MiB", "512KiB", "8MB" or an integer count of bytes. */
export function bytes(v: unknown, path: string, def: number, range: { min?: number; max?: number } = {}): number {
  if (v === undefined || v === null) return def;
  let n: number;
  try {
    n = parseBytes(v);
  } catch (err) {
    throw new ConfigError(path, (err as Error).message);
  }
  if (range.min !== undefined && n < range.min) throw new ConfigError(path, `must be at least ${range.min} bytes, got ${JSON.stringify(v)}`);
  if (range.max !== undefined && n > range.max) throw new ConfigError(path, `must be at most ${range.max} bytes, got ${JSON.stringify(v)}`);
  return n;
}

export function strList(v: unknown, path: string, def: string[], opts: { nonEmptyItems?: boolean } = { nonEmptyItems: true }): string[] {
  if (v === undefined || v === null) return def;
  if (!Array.isArray(v)) throw new ConfigError(path, `must be a list of strings, got ${describe(v)}`);
  return v.map((item, i) => {
    if (typeof item !== 'string') throw new ConfigError(join(path, i), `must be a string, got ${describe(item)}`);
    if (opts.nonEmptyItems && item === '') throw new ConfigError(join(path, i), 'must not be empty');
    return item;
  });
}

export interface Endpoint {
  host: string;
  port: number;
}

/**
 * `host:port` as the collector writes listen addresses: `127.0.0.1:4317`, `[::1]:4317`,
 * `localhost:0` (any free port), `:4317` (every interface).
 */
export function parseEndpoint(text: string, path: string): Endpoint {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(text.trim())) {
    throw new ConfigError(path, `${JSON.stringify(text)} is not a listen address: write host:port without a scheme, such as 127.0.0.1:4317`);
  }
  const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([^:\s[\]]*)):(\d{1,5})$/.exec(text);
  if (!m)
    throw new ConfigError(
      path,
      `${JSON.stringify(text)} is not a listen address; write host:port, such as 127.0.0.1:4317 ([::1]:4317 for IPv6, :4317 for every interface)`,
    );
  const port = Number(m[3]);
  if (port > 65535) throw new ConfigError(path, `port ${port} is out of range 0-65535`);
  const host = m[1] ?? (m[2] || '0.0.0.0');
  return { host, port };
}

export function endpoint(v: unknown, path: string, def: string): Endpoint {
  return parseEndpoint(str(v, path, def, { nonEmpty: true }), path);
}

export function formatEndpoint(e: Endpoint): string {
  return e.host.includes(':') ? `[${e.host}]:${e.port}` : `${e.host}:${e.port}`;
}
