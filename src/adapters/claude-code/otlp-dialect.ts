/**
 * The `claude-code/1` dialect of Claude Code's own OpenTelemetry export: which session a log
 * record or span belongs to, and one OTLP log record or span → one Session Data record.
 * Claude Code's attribute names stop here, as its transcript field names stop in dialect.ts.
 *
 * What Claude Code 2.1.328 sends (measured through ../shared/lab): log records on scope
 * `com.anthropic.claude_code.events` whose body is the event's full name
 * (`claude_code.api_request`), with attributes `event.name` (`api_request`), `event.sequence`,
 * `event.timestamp`, `session.id`, `prompt.id`, and per event the join keys `request_id`
 * (api_request, assistant_response, tool_decision, tool_result) and `tool_use_id`
 * (tool_decision, tool_result). The record keeps every attribute; only `tool` is lifted out,
 * because it is the exact join of a tool result to its tool call.
 */
import type { Part, SdRecord } from '../../formats/session-data/types.js';
import {
  anyValuePlain, attributesPlain, nanosToRfc3339, stringAttribute, toBigInt,
  type AnyValueMsg, type KeyValueMsg, type LongLike, type Plain,
} from '../../otlp/values.js';

export { DIALECT } from './dialect.js';
export const OTLP_ADAPTER = 'claude-code-otlp/0.1.0';
/** What a landed file's header says it came from. */
export const OTLP_LOGS_SRC = 'otlp/logs';
export const OTLP_TRACES_SRC = 'otlp/traces';

/** The attribute that names the session, on the record or else on its resource. */
export const SESSION_ATTRIBUTE = 'session.id';
const EVENT_NAME_ATTRIBUTE = 'event.name';
const EVENT_PREFIX = 'claude_code.';
const TOOL_RESULT_EVENT = 'claude_code.tool_result';
const TOOL_USE_ID_ATTRIBUTE = 'tool_use_id';

/** A converted record without its provenance (`ord`, `off`, `sha`, `bytes`), which the receiver adds. */
export type OtlpConverted = Omit<SdRecord, 'ord' | 'off' | 'sha' | 'bytes'>;

export interface LogRecordMsg {
  timeUnixNano?: number | LongLike;
  observedTimeUnixNano?: number | LongLike;
  severityNumber?: number;
  severityText?: string;
  body?: AnyValueMsg | null;
  attributes?: KeyValueMsg[];
  droppedAttributesCount?: number;
  flags?: number;
  traceId?: Uint8Array;
  spanId?: Uint8Array;
  eventName?: string;
}

export interface SpanMsg {
  traceId?: Uint8Array;
  spanId?: Uint8Array;
  traceState?: string;
  parentSpanId?: Uint8Array;
  flags?: number;
  name?: string;
  kind?: number;
  startTimeUnixNano?: number | LongLike;
  endTimeUnixNano?: number | LongLike;
  attributes?: KeyValueMsg[];
  droppedAttributesCount?: number;
  events?: { timeUnixNano?: number | LongLike; name?: string; attributes?: KeyValueMsg[] }[];
  links?: { traceId?: Uint8Array; spanId?: Uint8Array; attributes?: KeyValueMsg[] }[];
  status?: { message?: string; code?: number } | null;
}

/** Why a session id cannot name a directory under the storage root; undefined when it can. */
export function badSessionId(id: string): string | undefined {
  if (id.length > 200) return 'longer than 200 characters';
  if (id === '.' || id === '..') return 'a relative directory name';
  if (id.startsWith('_') || id.startsWith('.')) return 'starts with "_" or ".", which the storage root keeps for itself';
  // eslint-disable-next-line no-control-regex
  if (/[/\\\x00-\x1f\x7f]/.test(id)) return 'contains a path separator or a control character';
  return undefined;
}

/** The session an item belongs to: its own `session.id`, else its resource's. Byte-exact, never case-folded. */
export function otlpSessionOf(item: KeyValueMsg[] | undefined, resource: KeyValueMsg[] | undefined): string | undefined {
  return stringAttribute(item, SESSION_ATTRIBUTE) ?? stringAttribute(resource, SESSION_ATTRIBUTE);
}

const jsonLen = (v: unknown) => Buffer.byteLength(JSON.stringify(v) ?? '', 'utf8');
const hex = (b: Uint8Array | undefined) => (b && b.length ? Buffer.from(b).toString('hex') : undefined);

/** The event's full name: the record's event_name, else a body naming a Claude Code event, else `claude_code.` + `event.name`. */
export function otlpEventName(rec: LogRecordMsg): string {
  if (rec.eventName) return rec.eventName;
  const body = rec.body && rec.body.value === 'stringValue' ? rec.body.stringValue : undefined;
  if (body && body.startsWith(EVENT_PREFIX)) return body;
  const short = stringAttribute(rec.attributes, EVENT_NAME_ATTRIBUTE);
  if (short) return short.startsWith(EVENT_PREFIX) ? short : EVENT_PREFIX + short;
  return body ?? '';
}

/**
 * One log record → one record: `from: runtime`, its time, and one `data` part holding the event
 * name, every attribute (join keys included), the body and whatever else the record set.
 */
export function otlpLogRecordToSd(rec: LogRecordMsg): OtlpConverted {
  const event = otlpEventName(rec);
  const data: { [k: string]: Plain } = { event, attributes: attributesPlain(rec.attributes) };
  if (rec.body) data.body = anyValuePlain(rec.body);
  if (rec.severityNumber) data.severity_number = rec.severityNumber;
  if (rec.severityText) data.severity_text = rec.severityText;
  const traceId = hex(rec.traceId), spanId = hex(rec.spanId);
  if (traceId) data.trace_id = traceId;
  if (spanId) data.span_id = spanId;
  if (rec.flags) data.flags = rec.flags;
  if (rec.droppedAttributesCount) data.dropped_attributes_count = rec.droppedAttributesCount;
  const time = nanosToRfc3339(toBigInt(rec.timeUnixNano, true));
  const observed = nanosToRfc3339(toBigInt(rec.observedTimeUnixNano, true));
  if (observed && observed !== time) data.observed_time = observed;
  const part: Part = { k: 'data', state: 'available', bytes: jsonLen(data), name: event, data };
  const out: OtlpConverted = { from: 'runtime', time: time ?? observed, parts: [part] };
  if (event === TOOL_RESULT_EVENT) {
    const tool = stringAttribute(rec.attributes, TOOL_USE_ID_ATTRIBUTE);
    if (tool) out.tool = tool;
  }
  return out;
}

/** One span → one record at its start time, its whole content in one `data` part. */
export function otlpSpanToSd(span: SpanMsg): OtlpConverted {
  const start = toBigInt(span.startTimeUnixNano, true);
  const end = toBigInt(span.endTimeUnixNano, true);
  const data: { [k: string]: Plain } = { name: span.name ?? '', attributes: attributesPlain(span.attributes) };
  const ids: [string, Uint8Array | undefined][] = [['trace_id', span.traceId], ['span_id', span.spanId], ['parent_span_id', span.parentSpanId]];
  for (const [k, v] of ids) if (hex(v)) data[k] = hex(v)!;
  if (span.kind) data.kind = span.kind;
  const s = nanosToRfc3339(start), e = nanosToRfc3339(end);
  if (s) data.start = s;
  if (e) data.end = e;
  if (start > 0n && end >= start) data.duration_ns = end - start <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(end - start) : String(end - start);
  if (span.status && (span.status.code || span.status.message)) data.status = { code: span.status.code ?? 0, message: span.status.message ?? '' };
  if (span.events?.length) {
    data.events = span.events.map((ev) => ({ name: ev.name ?? '', time: nanosToRfc3339(toBigInt(ev.timeUnixNano, true)) ?? null, attributes: attributesPlain(ev.attributes) }));
  }
  if (span.links?.length) {
    data.links = span.links.map((l) => ({ trace_id: hex(l.traceId) ?? '', span_id: hex(l.spanId) ?? '', attributes: attributesPlain(l.attributes) }));
  }
  if (span.traceState) data.trace_state = span.traceState;
  const part: Part = { k: 'data', state: 'available', bytes: jsonLen(data), name: span.name ?? '', data };
  const out: OtlpConverted = { from: 'runtime', time: s, parts: [part] };
  const tool = stringAttribute(span.attributes, TOOL_USE_ID_ATTRIBUTE);
  if (tool) out.tool = tool;
  return out;
}
