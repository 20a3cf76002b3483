/**
 * Building the export requests from the OTLP messages in proto/ (src/otlp/proto.ts).
 *
 * A log record's body is a file's bytes as a string value. On the wire a string is its UTF-8
 * bytes with a length, so the file's bytes (checked to be UTF-8) are written as they are instead
 * of being decoded into a JavaScript string and encoded back: that round trip was most of the
 * cost of a push. Everything else of a record, and the resource and scope, is encoded by the
 * message types themselves. Field numbers are read from the loaded types, never written here.
 * A test decodes the result with the plain types.
 */
import { otlpTypes, type Type } from '../../otlp/proto.js';
import type { Attr } from '../../otlp/identity.js';
import { nanos } from '../../otlp/values.js';
import { lazy } from '../../util/lazy.js';

export { nanos };

const LEN = 2;

interface Fields {
  requestResourceLogs: number;
  resource: number;
  scopeLogs: number;
  scope: number;
  logRecords: number;
  body: number;
  stringValue: number;
}

function field(t: Type, name: string): number {
  const f = t.fields[name];
  if (!f) throw new Error(`the OTLP type ${t.fullName} has no field ${name}`);
  return f.id;
}

/** The field numbers the encoder writes, looked up in the schema on first use. */
const ids: () => Fields = lazy(() => {
  const t = otlpTypes();
  return {
    requestResourceLogs: field(t.ExportLogsServiceRequest, 'resourceLogs'),
    resource: field(t.ResourceLogs, 'resource'),
    scopeLogs: field(t.ResourceLogs, 'scopeLogs'),
    scope: field(t.ScopeLogs, 'scope'),
    logRecords: field(t.ScopeLogs, 'logRecords'),
    body: field(t.LogRecord, 'body'),
    stringValue: field(t.AnyValue, 'stringValue'),
  };
});

const tag = (id: number) => ((id << 3) | LEN) >>> 0;

export interface LogItem {
  /** UTF-8 bytes, sent as the body's string value. */
  body: Buffer;
  timeNs: bigint | undefined;
  observedNs: bigint;
  attributes: Attr[];
}

export interface ResourceGroup {
  resource: Attr[];
  scope: { name: string; version: string };
  items: LogItem[];
}

const varintLen = (n: number): number => (n < 0x80 ? 1 : n < 0x4000 ? 2 : n < 0x200000 ? 3 : n < 0x10000000 ? 4 : 5);
/** A length-delimited field's size: its tag, its length, its bytes. */
const fieldLen = (id: number, len: number): number => varintLen(tag(id)) + varintLen(len) + len;

function putVarint(buf: Buffer, pos: number, n: number): number {
  while (n >= 0x80) {
    buf[pos++] = (n & 0x7f) | 0x80;
    n >>>= 7;
  }
  buf[pos++] = n;
  return pos;
}

const head = (buf: Buffer, pos: number, id: number, len: number) => putVarint(buf, putVarint(buf, pos, tag(id)), len);

const finished = (u: Uint8Array) => Buffer.from(u.buffer, u.byteOffset, u.byteLength);

/**
 * An ExportLogsServiceRequest: one ResourceLogs per group, one ScopeLogs in each. The small parts
 * are encoded by protobufjs; the request is then laid out in one buffer of its exact size, each
 * body copied once, since a request is megabytes of bodies and growing a buffer for it (and
 * shifting it for every length written in front) cost more than the rest of a push.
 */
export function encodeLogsRequest(groups: ResourceGroup[]): Buffer {
  const t = otlpTypes();
  const f = ids();
  const plan = groups.map((g) => {
    const resource = finished(t.Resource.encode({ attributes: g.resource }).finish());
    const scope = finished(t.InstrumentationScope.encode(g.scope).finish());
    const records = g.items.map((it) => {
      const rec: Record<string, unknown> = { observedTimeUnixNano: nanos(it.observedNs), attributes: it.attributes };
      if (it.timeNs !== undefined) rec.timeUnixNano = nanos(it.timeNs);
      const front = finished(t.LogRecord.encode(rec).finish());
      const any = fieldLen(f.stringValue, it.body.length);
      return { front, body: it.body, any, len: front.length + fieldLen(f.body, any) };
    });
    const scopeLogs = fieldLen(f.scope, scope.length) + records.reduce((n, r) => n + fieldLen(f.logRecords, r.len), 0);
    const len = fieldLen(f.resource, resource.length) + fieldLen(f.scopeLogs, scopeLogs);
    return { resource, scope, records, scopeLogs, len };
  });
  const total = plan.reduce((n, g) => n + fieldLen(f.requestResourceLogs, g.len), 0);
  const buf = Buffer.allocUnsafe(total);
  let pos = 0;
  for (const g of plan) {
    pos = head(buf, pos, f.requestResourceLogs, g.len);
    pos = head(buf, pos, f.resource, g.resource.length);
    pos += g.resource.copy(buf, pos);
    pos = head(buf, pos, f.scopeLogs, g.scopeLogs);
    pos = head(buf, pos, f.scope, g.scope.length);
    pos += g.scope.copy(buf, pos);
    for (const r of g.records) {
      pos = head(buf, pos, f.logRecords, r.len);
      pos += r.front.copy(buf, pos);
      pos = head(buf, pos, f.body, r.any);
      pos = head(buf, pos, f.stringValue, r.body.length);
      pos += r.body.copy(buf, pos);
    }
  }
  if (pos !== total) throw new Error(`encoding the logs request: wrote ${pos} of ${total} bytes`);
  return buf;
}

/** Resource attributes the sender's identity owns: a spooled request's own values of these are replaced. */
const IDENTITY_KEY = /^(service\.name|service\.instance\.id|service\.layer|telemetry\.sdk\.[a-z_]+)$/;

/**
 * A spooled metrics request under the exporter's identity: in every resource, the identity's
 * attributes (service, instance, layer, SDK) first, then the resource's other attributes as they
 * were (the runtime's version, host, OS); scopes, metrics, points and their attributes unchanged.
 * Every OAP rule filters on `service_layer == 'AI_AGENT'` and keys on service and instance, so a
 * request under Claude Code's own resource (`claude-code`, no layer) would be dropped, and the same
 * agent's logs and metrics would sit under two services.
 */
export function withIdentity(request: Buffer, identity: Attr[]): Buffer {
  const T = otlpTypes().ExportMetricsServiceRequest;
  const msg = T.decode(request) as unknown as { resourceMetrics?: { resource?: { attributes?: Attr[] } }[] };
  for (const rm of msg.resourceMetrics ?? []) {
    const kept = (rm.resource?.attributes ?? []).filter((a) => !IDENTITY_KEY.test(a.key) && !identity.some((x) => x.key === a.key));
    rm.resource = { ...rm.resource, attributes: [...identity, ...kept] };
  }
  const out = T.encode(msg as never).finish();
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}
