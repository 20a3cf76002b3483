/**
 * The `claude_code_otlp` receiver's configuration: its keys, defaults and validation. Every
 * error is a ConfigError naming the exact path, such as
 * `receivers.claude_code_otlp.protocols.grpc.endpoint: …`, and what is allowed there.
 *
 * ```yaml
 * receivers:
 *   claude_code_otlp:
 *     protocols:
 *       grpc: { endpoint: 127.0.0.1:4317 }
 *       http: { endpoint: 127.0.0.1:4318 }
 *     # or, instead of protocols, one port serving gRPC and HTTP/1.1 (asz's `listen`):
 *     # endpoint: 127.0.0.1:4317
 *     max_request_bytes: 16MiB     # largest body accepted, on the wire and after decompression
 *     max_spool_bytes: 1GiB        # the _metrics/ spool size past which metrics are refused (0: no limit)
 *     max_journal_bytes: 512MiB    # accepted but not yet landed, past which requests are refused as retryable
 *     unconsumed_spool:            # when a metrics pipeline keeps received metrics but no exporter sends or reads them:
 *       max_age: 168h              #   spool files older than this are removed (0: no age limit)
 *       max_bytes: 256MiB          #   then the oldest, until the rest fits (0: no size limit)
 *     lock_wait: 5s                # how long landing waits for a session lock held elsewhere before it warns
 *     durability: process          # answer once written to the journal (survives aszcol crashing), or
 *                                  # `machine`: once synced to the disk (survives the machine crashing)
 * ```
 */
import { bytes as readBytes, describe, duration, endpoint, formatEndpoint, join, mapping, parseEndpoint, type Endpoint } from '../../config/reader.js';
import { ConfigError } from '../../util/errors.js';
import { parseBytes, parseDuration } from '../../util/units.js';
import type { Durability } from './journal.js';

export { formatEndpoint, parseEndpoint, type Endpoint };

export const DURABILITIES: readonly Durability[] = ['process', 'machine'];

export interface OtlpReceiverConfig {
  /** gRPC on its own port; undefined when gRPC is not configured or `endpoint` serves both. */
  grpc?: Endpoint;
  /** OTLP/HTTP on its own port; undefined when HTTP is not configured or `endpoint` serves both. */
  http?: Endpoint;
  /** One port serving gRPC (HTTP/2) and OTLP/HTTP (HTTP/1.1), told apart by the first bytes. */
  endpoint?: Endpoint;
  maxRequestBytes: number;
  /** 0: no limit. */
  maxSpoolBytes: number;
  /** Bytes accepted into the journal and not yet landed, past which requests are refused as retryable. */
  maxJournalBytes: number;
  /** How long a session's records wait for its lock (held by another collector) before a warning says so. */
  lockWaitMs: number;
  /** `process`: answered once written to the journal; `machine`: once the journal is synced (journal.ts). */
  durability: Durability;
  /** The bound on a spool that no exporter sends or reads (0: that limit is off). */
  unconsumedSpool: { maxAgeMs: number; maxBytes: number };
}

export const DEFAULT_GRPC_ENDPOINT = '127.0.0.1:4317';
export const DEFAULT_HTTP_ENDPOINT = '127.0.0.1:4318';
/**
 * 16 MiB: four times gRPC's customary 4 MiB so a 4 MB request still fits with room to spare;
 * Claude Code's own requests are a few kilobytes. A body is held whole while it is checked.
 */
export const DEFAULT_MAX_REQUEST_BYTES = 16 * 1024 * 1024;
/** 1 GiB: months of one busy user's metrics (a request is a few KB a second while a session runs). */
export const DEFAULT_MAX_SPOOL_BYTES = 1024 * 1024 * 1024;
export const DEFAULT_LOCK_WAIT_MS = 5000;
/** A week of metrics nobody sends anywhere, and at most a quarter of max_spool_bytes, so the receiver never refuses for a spool nothing empties. */
export const DEFAULT_UNCONSUMED_SPOOL = { maxAgeMs: 7 * 24 * 3_600_000, maxBytes: 256 * 1024 * 1024 };
/**
 * 512 MiB: minutes of the heaviest load this receiver can take, so a burst or a slow disk is
 * absorbed; past it the client is told to come back (429 / RESOURCE_EXHAUSTED with a retry hint).
 */
export const DEFAULT_MAX_JOURNAL_BYTES = 512 * 1024 * 1024;
/** The largest body the gRPC transport can hand over (its limit is a 32-bit signed length). */
const MAX_REQUEST_LIMIT = 1024 * 1024 * 1024;

export function defaultOtlpReceiverConfig(): OtlpReceiverConfig {
  return {
    grpc: parseEndpoint(DEFAULT_GRPC_ENDPOINT, 'default'),
    http: parseEndpoint(DEFAULT_HTTP_ENDPOINT, 'default'),
    maxRequestBytes: DEFAULT_MAX_REQUEST_BYTES,
    maxSpoolBytes: DEFAULT_MAX_SPOOL_BYTES,
    maxJournalBytes: DEFAULT_MAX_JOURNAL_BYTES,
    lockWaitMs: DEFAULT_LOCK_WAIT_MS,
    durability: 'process',
    unconsumedSpool: { ...DEFAULT_UNCONSUMED_SPOOL },
  };
}

function protocolEndpoint(raw: unknown, path: string, fallback: string): Endpoint {
  if (raw === null || raw === undefined) return parseEndpoint(fallback, path);
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(path, `must be a mapping such as { endpoint: ${fallback} }, got ${describe(raw)}`);
  const m = mapping(raw, path, ['endpoint']);
  return endpoint(m.endpoint, join(path, 'endpoint'), fallback);
}

/**
 * Checks the receiver's section (the value under `receivers.claude_code_otlp`, or null for all
 * defaults) and returns it with defaults applied. `path` is where the section sits, for errors.
 */
export function validateOtlpReceiverConfig(raw: unknown, path = 'receivers.claude_code_otlp'): OtlpReceiverConfig {
  if (raw === null || raw === undefined) return defaultOtlpReceiverConfig();
  const m = mapping(raw, path, [
    'protocols',
    'endpoint',
    'max_request_bytes',
    'max_spool_bytes',
    'max_journal_bytes',
    'lock_wait',
    'durability',
    'unconsumed_spool',
  ]);
  const cfg = defaultOtlpReceiverConfig();

  if (m.endpoint !== undefined && m.endpoint !== null) {
    if (m.protocols !== undefined && m.protocols !== null) {
      throw new ConfigError(`${path}.endpoint`, 'serves gRPC and HTTP on one port, so it cannot be combined with protocols; set one or the other');
    }
    cfg.endpoint = endpoint(m.endpoint, `${path}.endpoint`, DEFAULT_GRPC_ENDPOINT);
    cfg.grpc = undefined;
    cfg.http = undefined;
  } else if (m.protocols !== undefined && m.protocols !== null) {
    const pp = `${path}.protocols`;
    if (typeof m.protocols !== 'object' || Array.isArray(m.protocols))
      throw new ConfigError(pp, `must be a mapping with grpc and/or http, got ${describe(m.protocols)}`);
    const p = mapping(m.protocols, pp, ['grpc', 'http']);
    if (!('grpc' in p) && !('http' in p)) throw new ConfigError(pp, 'must name at least one of grpc and http');
    cfg.grpc = 'grpc' in p ? protocolEndpoint(p.grpc, `${pp}.grpc`, DEFAULT_GRPC_ENDPOINT) : undefined;
    cfg.http = 'http' in p ? protocolEndpoint(p.http, `${pp}.http`, DEFAULT_HTTP_ENDPOINT) : undefined;
    if (cfg.grpc && cfg.http && cfg.grpc.port !== 0 && cfg.grpc.port === cfg.http.port && cfg.grpc.host === cfg.http.host) {
      throw new ConfigError(
        `${pp}.http.endpoint`,
        `is the same address as grpc (${formatEndpoint(cfg.grpc)}); to serve both on one port, set ${path}.endpoint instead of protocols`,
      );
    }
  }

  const bytes = (key: string, min: number, max: number, allowZero: boolean): number | undefined => {
    if (m[key] === undefined || m[key] === null) return undefined;
    let n: number;
    try {
      n = parseBytes(m[key]);
    } catch (err) {
      throw new ConfigError(`${path}.${key}`, (err as Error).message);
    }
    if (allowZero && n === 0) return 0;
    if (n < min || n > max) throw new ConfigError(`${path}.${key}`, `must be from ${min} to ${max} bytes${allowZero ? ', or 0 for no limit' : ''}, got ${n}`);
    return n;
  };
  cfg.maxRequestBytes = bytes('max_request_bytes', 1024, MAX_REQUEST_LIMIT, false) ?? cfg.maxRequestBytes;
  cfg.maxSpoolBytes = bytes('max_spool_bytes', 1024, Number.MAX_SAFE_INTEGER, true) ?? cfg.maxSpoolBytes;
  const journal = bytes('max_journal_bytes', 1024, Number.MAX_SAFE_INTEGER, false);
  // Unset, it grows with the largest request so that a few of them always fit.
  cfg.maxJournalBytes = journal ?? Math.max(DEFAULT_MAX_JOURNAL_BYTES, 4 * cfg.maxRequestBytes);
  if (cfg.maxJournalBytes < cfg.maxRequestBytes) {
    throw new ConfigError(
      `${path}.max_journal_bytes`,
      `must be at least max_request_bytes (${cfg.maxRequestBytes}), or the largest accepted request could never be taken; got ${cfg.maxJournalBytes}`,
    );
  }
  if (m.unconsumed_spool !== undefined && m.unconsumed_spool !== null) {
    const up = `${path}.unconsumed_spool`;
    const u = mapping(m.unconsumed_spool, up, ['max_age', 'max_bytes']);
    cfg.unconsumedSpool = {
      maxAgeMs: duration(u.max_age, `${up}.max_age`, DEFAULT_UNCONSUMED_SPOOL.maxAgeMs),
      maxBytes: readBytes(u.max_bytes, `${up}.max_bytes`, DEFAULT_UNCONSUMED_SPOOL.maxBytes),
    };
  }
  if (m.lock_wait !== undefined && m.lock_wait !== null) {
    try {
      cfg.lockWaitMs = parseDuration(m.lock_wait);
    } catch (err) {
      throw new ConfigError(`${path}.lock_wait`, (err as Error).message);
    }
    if (cfg.lockWaitMs > 3_600_000) throw new ConfigError(`${path}.lock_wait`, 'must be at most 1h');
  }
  if (m.durability !== undefined && m.durability !== null) {
    if (!DURABILITIES.includes(m.durability as Durability)) {
      throw new ConfigError(
        `${path}.durability`,
        `must be one of ${DURABILITIES.join(', ')} (process: answered once in the journal file, kept if aszcol crashes; machine: answered once synced to the disk, kept if the machine crashes), got ${JSON.stringify(m.durability)}`,
      );
    }
    cfg.durability = m.durability as Durability;
  }
  return cfg;
}
