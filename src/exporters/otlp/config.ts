/**
 * The `otlp` exporter's configuration: its keys, defaults and validation, every error at its
 * exact path (`exporters.otlp/oap.endpoint: …`).
 *
 * ```yaml
 * exporters:
 *   otlp/oap:
 *     protocol: grpc               # or http: POST <endpoint>/v1/logs and /v1/metrics, protobuf; unset: http for an http(s):// endpoint, else grpc
 *     endpoint: 127.0.0.1:11800    # grpc: host:port; http: a base URL such as http://127.0.0.1:12800
 *     tls: false                   # grpc only; http takes TLS from the URL's scheme
 *     ca_file: ""                  # PEM roots to trust instead of the system's (TLS only)
 *     headers: {}                  # sent with every request, as gRPC metadata or HTTP headers
 *     compression: none            # or gzip
 *     timeout: 30s                 # per request
 *     logs: true                   # landed files and rounds, in a sessions pipeline
 *     metrics: true                # the _metrics/ spool, in a metrics pipeline
 *     batch_bytes: 8MiB            # file bytes per request; a larger file goes alone
 *     max_bytes_per_minute: 0      # a token bucket on encoded request bytes; 0 is no limit
 *     service_name: ""             # "" names each session's runtime: Claude Code (metrics are always Claude Code's)
 *     instance_id: ""              # "" is user@host of the pushing machine
 *     layer: AI_AGENT
 *     retry_on_failure: { initial_interval: 5s, max_interval: 5m }
 *     spool_retention:             # _metrics/ spool files once sent (spool-retention.ts)
 *       enabled: true              # false: never remove one
 *       keep: 0s                   # how long a sent file stays after it was spooled: 90m, 24h, 7d
 *       ignore_receivers: []       # receivers push.state names that no longer take metrics from this root
 *     hide: []                     # content kept off the wire (withhold-file.ts); absent: what extensions.view hides
 * ```
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../../util/errors.js';
import { bool, bytes, duration, join, mapping, parseEndpoint, str, strList, type Endpoint } from '../../config/reader.js';
import { parseDurationOrDays } from '../../util/units.js';
import { distinctNames } from '../../config/name-list.js';
import { WITHHOLD_CATEGORIES, type WithholdCategory } from '../../formats/view/withhold.js';

export type Protocol = 'grpc' | 'http';
export type Compression = 'none' | 'gzip';

export interface OtlpExporterConfig {
  protocol: Protocol;
  /** grpc: host and port; http: the base URL (no trailing slash). */
  grpc?: Endpoint;
  url?: URL;
  tls: boolean;
  /** PEM text of the roots to trust; undefined: the system's. */
  ca?: Buffer;
  caFile: string;
  headers: Record<string, string>;
  compression: Compression;
  timeoutMs: number;
  logs: boolean;
  metrics: boolean;
  batchBytes: number;
  maxBytesPerMinute: number;
  serviceName: string;
  instanceId: string;
  layer: string;
  retryInitialMs: number;
  retryMaxMs: number;
  spoolRetention: SpoolRetentionConfig;
  /**
   * The content categories taken out of every landed file before it is sent. Undefined when the
   * exporter names none: the service then takes the view's `hide` (service/export-withholding.ts).
   */
  hide?: WithholdCategory[];
  /** Where an inherited `hide` came from (`extensions.view`), for the log; absent when the exporter set it. */
  hideFrom?: string;
}

/** What becomes of a `_metrics/` spool file once every consumer took it. */
export interface SpoolRetentionConfig {
  /** false: this exporter never lets a spool file go (and so none goes while it sends metrics). */
  enabled: boolean;
  /** How long a sent file stays after it was written into the spool (ms). */
  keepMs: number;
  /** Receivers (as push.state names them) whose records of metrics sent no longer hold anything back. */
  ignoreReceivers: string[];
}

export const DEFAULT_BATCH_BYTES = 8 * 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_LAYER = 'AI_AGENT';

const KEYS = [
  'protocol',
  'endpoint',
  'tls',
  'ca_file',
  'headers',
  'compression',
  'timeout',
  'logs',
  'metrics',
  'batch_bytes',
  'max_bytes_per_minute',
  'service_name',
  'instance_id',
  'layer',
  'retry_on_failure',
  'spool_retention',
  'hide',
] as const;

/** A header name as HTTP allows it (a token); gRPC metadata keys are the lower-case form. */
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

export function validateOtlpExporterConfig(raw: unknown, path: string): OtlpExporterConfig {
  const m = mapping(raw, path, KEYS);
  const endpointPath = join(path, 'endpoint');
  const endpointText = str(m.endpoint, endpointPath, '', { nonEmpty: true }).trim();
  // Unset, the endpoint says it: a URL is OTLP/HTTP (the OAP's core port 12800), host:port is gRPC (11800).
  const protocol = str(m.protocol, join(path, 'protocol'), /^https?:\/\//i.test(endpointText) ? 'http' : 'grpc', { oneOf: ['grpc', 'http'] }) as Protocol;
  let grpc: Endpoint | undefined;
  let url: URL | undefined;
  if (protocol === 'grpc') {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(endpointText)) {
      throw new ConfigError(
        endpointPath,
        `with protocol grpc, write host:port such as 127.0.0.1:11800 (set tls: true for TLS); got ${JSON.stringify(endpointText)}`,
      );
    }
    try {
      grpc = parseEndpoint(endpointText, endpointPath);
    } catch {
      throw new ConfigError(
        endpointPath,
        `must be host:port, the receiver's address such as 127.0.0.1:11800 ([::1]:11800 for IPv6); got ${JSON.stringify(endpointText)}`,
      );
    }
    if (grpc.port === 0) throw new ConfigError(endpointPath, "port 0 cannot be sent to; name the receiver's port");
    if (grpc.host === '0.0.0.0' && !/^0\.0\.0\.0:/.test(endpointText)) {
      throw new ConfigError(endpointPath, `names no host; write host:port such as 127.0.0.1:11800, got ${JSON.stringify(endpointText)}`);
    }
  } else {
    try {
      url = new URL(endpointText);
    } catch {
      throw new ConfigError(
        endpointPath,
        `with protocol http, write the receiver's base URL such as http://127.0.0.1:12800 (/v1/logs is appended); got ${JSON.stringify(endpointText)}`,
      );
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:')
      throw new ConfigError(endpointPath, `must be an http:// or https:// base URL such as http://127.0.0.1:12800, got ${JSON.stringify(endpointText)}`);
    if (url.search || url.hash) throw new ConfigError(endpointPath, 'must be a base URL without a query or fragment');
    if (/\/v1\/(logs|metrics)\/?$/.test(url.pathname)) {
      throw new ConfigError(endpointPath, `is the base URL; /v1/logs and /v1/metrics are appended, so leave them out (got ${JSON.stringify(endpointText)})`);
    }
  }
  const tls = bool(m.tls, join(path, 'tls'), false);
  if (tls && protocol === 'http') throw new ConfigError(join(path, 'tls'), 'applies to protocol grpc only; with http, write an https:// endpoint');
  const caFile = str(m.ca_file, join(path, 'ca_file'), '');
  let ca: Buffer | undefined;
  if (caFile) {
    const usesTls = protocol === 'grpc' ? tls : url!.protocol === 'https:';
    if (!usesTls) throw new ConfigError(join(path, 'ca_file'), 'is used only over TLS (tls: true with grpc, an https:// endpoint with http)');
    try {
      ca = readFileSync(caFile);
    } catch (err) {
      throw new ConfigError(join(path, 'ca_file'), `cannot be read: ${(err as Error).message}`);
    }
  }
  const headers: Record<string, string> = {};
  const hm = mapping(m.headers, join(path, 'headers'));
  for (const [k, v] of Object.entries(hm)) {
    const hp = join(join(path, 'headers'), k);
    if (!HEADER_NAME.test(k)) throw new ConfigError(hp, 'is not a valid header name');
    const lower = k.toLowerCase();
    if (lower.startsWith('grpc-') || ['content-type', 'content-length', 'content-encoding', 'te', 'host', 'connection'].includes(lower)) {
      throw new ConfigError(hp, 'is set by the transport itself and cannot be configured');
    }
    const value = str(v, hp, '');
    if (/[\r\n\0]/.test(value)) throw new ConfigError(hp, 'must not contain line breaks');
    headers[lower] = value;
  }
  const compression = str(m.compression, join(path, 'compression'), 'none', { oneOf: ['none', 'gzip'] }) as Compression;
  const timeoutMs = duration(m.timeout, join(path, 'timeout'), DEFAULT_TIMEOUT_MS, { minMs: 1, maxMs: 3_600_000 });
  const logs = bool(m.logs, join(path, 'logs'), true);
  const metrics = bool(m.metrics, join(path, 'metrics'), true);
  if (!logs && !metrics)
    throw new ConfigError(join(path, 'logs'), 'logs and metrics are both false: the exporter would send nothing; turn one on or remove the exporter');
  const batchBytes = bytes(m.batch_bytes, join(path, 'batch_bytes'), DEFAULT_BATCH_BYTES, { min: 1, max: 1024 ** 3 });
  const maxBytesPerMinute = bytes(m.max_bytes_per_minute, join(path, 'max_bytes_per_minute'), 0);
  const serviceName = identityName(m.service_name, join(path, 'service_name'), 'the service every record and metric is listed under');
  const instanceId = identityName(m.instance_id, join(path, 'instance_id'), 'who is pushing (the OAP lists it as the instance)');
  const layer = str(m.layer, join(path, 'layer'), DEFAULT_LAYER, { nonEmpty: true });
  if (!/^[A-Z][A-Z0-9_]*$/.test(layer))
    throw new ConfigError(join(path, 'layer'), `a layer name is upper case with underscores, such as AI_AGENT; got ${JSON.stringify(layer)}`);
  const rp = join(path, 'retry_on_failure');
  const rm = mapping(m.retry_on_failure, rp, ['initial_interval', 'max_interval']);
  const retryInitialMs = duration(rm.initial_interval, join(rp, 'initial_interval'), 5000, { minMs: 1 });
  const retryMaxMs = duration(rm.max_interval, join(rp, 'max_interval'), 300_000, { minMs: 1 });
  if (retryMaxMs < retryInitialMs) throw new ConfigError(join(rp, 'max_interval'), `must be at least initial_interval (${retryInitialMs}ms)`);
  const spoolRetention = validateSpoolRetention(m.spool_retention, join(path, 'spool_retention'));
  // Absent (or null) is "not said here", which inherits; `[]` is "send everything", which does not.
  const hide =
    m.hide === undefined || m.hide === null ? undefined : distinctNames(m.hide, join(path, 'hide'), WITHHOLD_CATEGORIES, 'a category that can be withheld');
  const c: OtlpExporterConfig = {
    protocol,
    grpc,
    url,
    tls,
    ca,
    caFile,
    headers,
    compression,
    timeoutMs,
    logs,
    metrics,
    batchBytes,
    maxBytesPerMinute,
    serviceName,
    instanceId,
    layer,
    retryInitialMs,
    retryMaxMs,
    spoolRetention,
    ...(hide ? { hide } : {}),
  };
  const own = endpointKey(c);
  const i = spoolRetention.ignoreReceivers.indexOf(own);
  if (i >= 0)
    throw new ConfigError(
      join(join(join(path, 'spool_retention'), 'ignore_receivers'), i),
      `is this exporter's own receiver (${own}); the receivers an exporter sends to are always waited for`,
    );
  return c;
}

/** A name the receiver lists as a service or an instance: one line of printable text, or "" for the default. */
function identityName(v: unknown, path: string, what: string): string {
  const text = str(v, path, '');
  if (text === '') return '';
  if (text.trim() === '') throw new ConfigError(path, `is ${what}; it is only white space: leave it out (or "") for the default, or name it`);
  if (text !== text.trim())
    throw new ConfigError(path, `is ${what}; it starts or ends with white space (${JSON.stringify(text)}), which a receiver keeps as part of the name`);
  if (/\p{Cc}/u.test(text)) throw new ConfigError(path, `is ${what}; it must not contain control characters or line breaks: ${JSON.stringify(text)}`);
  if (text.length > 255) throw new ConfigError(path, `is ${what}; ${text.length} characters is too long for a receiver's name (at most 255)`);
  return text;
}

/** `90m`, `24h`, `7d` (whole days, as token_metrics' lookback reads them), `0`. */
function keepDuration(v: unknown, path: string): number {
  if (v === undefined || v === null) return 0;
  try {
    return parseDurationOrDays(v);
  } catch {
    throw new ConfigError(path, `must be a duration such as 0s, 90m, 24h or 7d; got ${JSON.stringify(v)}`);
  }
}

/** A receiver as push.state names it: grpc://host:port, grpcs://host:port, an http(s) base URL, or `unknown` (an older writer's). */
const RECEIVER_NAME = /^(?:unknown|grpcs?:\/\/\S+:\d{1,5}|https?:\/\/\S+)$/;

export function validateSpoolRetention(raw: unknown, path: string): SpoolRetentionConfig {
  const m = mapping(raw, path, ['enabled', 'keep', 'ignore_receivers']);
  const enabled = bool(m.enabled, join(path, 'enabled'), true);
  const keepMs = keepDuration(m.keep, join(path, 'keep'));
  const ip = join(path, 'ignore_receivers');
  const ignoreReceivers = strList(m.ignore_receivers, ip, []);
  ignoreReceivers.forEach((r, i) => {
    if (!RECEIVER_NAME.test(r)) {
      throw new ConfigError(
        join(ip, i),
        `must name a receiver as push.state does: grpc://host:port, grpcs://host:port, an http:// or https:// base URL, or unknown; got ${JSON.stringify(r)}`,
      );
    }
    if (/^https?:/.test(r) && r.endsWith('/'))
      throw new ConfigError(join(ip, i), `push.state names an HTTP receiver without the trailing slash: ${JSON.stringify(r.replace(/\/+$/, ''))}`);
    if (ignoreReceivers.indexOf(r) !== i) throw new ConfigError(join(ip, i), `${JSON.stringify(r)} is listed twice`);
  });
  return { enabled, keepMs, ignoreReceivers };
}

/**
 * How push.state names the receiver: `grpc://host:port`, `grpcs://host:port` with TLS, or the
 * HTTP base URL. A different name is a different receiver, which is sent everything.
 */
export function endpointKey(c: OtlpExporterConfig): string {
  if (c.protocol === 'grpc') {
    const h = c.grpc!.host.includes(':') ? `[${c.grpc!.host}]` : c.grpc!.host;
    return `${c.tls ? 'grpcs' : 'grpc'}://${h}:${c.grpc!.port}`;
  }
  return c.url!.href.replace(/\/+$/, '');
}
