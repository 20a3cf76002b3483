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
 * (tool_decision, tool_result). The record keeps every attribute in its data part; only `tool`
 * is lifted out, because it is the exact join of a tool result to its tool call.
 */
import type { Part, SdRecord } from '../../formats/session-data/types.js';
import { entryNameProblem } from '../../storage/entry-names.js';
import { nanosToRfc3339, type Plain, type PlainLogRecord, type PlainObject, type PlainSpan } from '../../otlp/plain.js';

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

/**
 * A converted record without its provenance (`ord`, `off`, `sha`, `bytes`), which the receiver
 * adds, and with its one data part's JSON already made (`dataJson`): the part's `bytes` needs it,
 * and the receiver splices it into the record's line instead of serializing the data twice.
 */
export interface OtlpConverted {
  record: Omit<SdRecord, 'ord' | 'off' | 'sha' | 'bytes'>;
  dataJson: string;
}

/** Why a session id cannot name a directory under the storage root; undefined when it can. The root's one rule for names. */
export function badSessionId(id: string): string | undefined {
  return entryNameProblem(id);
}

const nonEmptyString = (v: Plain | undefined): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);

/** The session an item belongs to: its own `session.id`, else its resource's. Byte-exact, never case-folded. */
export function otlpSessionOf(item: PlainObject, resource: PlainObject | undefined): string | undefined {
  return nonEmptyString(item[SESSION_ATTRIBUTE]) ?? nonEmptyString(resource?.[SESSION_ATTRIBUTE]);
}

/** The event's full name: the record's event_name, else a body naming a Claude Code event, else `claude_code.` + `event.name`. */
export function otlpEventName(rec: PlainLogRecord): string {
  if (rec.eventName) return rec.eventName;
  const body = typeof rec.body === 'string' ? rec.body : undefined;
  if (body && body.startsWith(EVENT_PREFIX)) return body;
  const short = nonEmptyString(rec.attributes[EVENT_NAME_ATTRIBUTE]);
  if (short) return short.startsWith(EVENT_PREFIX) ? short : EVENT_PREFIX + short;
  return body ?? '';
}

function dataPart(name: string, data: PlainObject): { part: Part; dataJson: string } {
  const dataJson = JSON.stringify(data);
  return { part: { k: 'data', state: 'available', bytes: Buffer.byteLength(dataJson, 'utf8'), name, data }, dataJson };
}

/**
 * One log record → one record: `from: runtime`, its time, and one `data` part holding the event
 * name, every attribute (join keys included), the body and whatever else the record set.
 */
export function otlpLogRecordToSd(rec: PlainLogRecord): OtlpConverted {
  const event = otlpEventName(rec);
  const data: PlainObject = { event, attributes: rec.attributes };
  if (rec.body !== undefined) data.body = rec.body;
  if (rec.severityNumber) data.severity_number = rec.severityNumber;
  if (rec.severityText) data.severity_text = rec.severityText;
  if (rec.traceId) data.trace_id = rec.traceId;
  if (rec.spanId) data.span_id = rec.spanId;
  if (rec.flags) data.flags = rec.flags;
  if (rec.droppedAttributes) data.dropped_attributes_count = rec.droppedAttributes;
  const time = nanosToRfc3339(rec.timeNs);
  const observed = nanosToRfc3339(rec.observedNs);
  if (observed && observed !== time) data.observed_time = observed;
  const { part, dataJson } = dataPart(event, data);
  const record: OtlpConverted['record'] = { from: 'runtime', time: time ?? observed, parts: [part] };
  if (event === TOOL_RESULT_EVENT) {
    const tool = nonEmptyString(rec.attributes[TOOL_USE_ID_ATTRIBUTE]);
    if (tool) record.tool = tool;
  }
  return { record, dataJson };
}

/** One span → one record at its start time, its whole content in one `data` part. */
export function otlpSpanToSd(span: PlainSpan): OtlpConverted {
  const data: PlainObject = { name: span.name, attributes: span.attributes };
  if (span.traceId) data.trace_id = span.traceId;
  if (span.spanId) data.span_id = span.spanId;
  if (span.parentSpanId) data.parent_span_id = span.parentSpanId;
  if (span.kind) data.kind = span.kind;
  const start = nanosToRfc3339(span.startNs),
    end = nanosToRfc3339(span.endNs);
  if (start) data.start = start;
  if (end) data.end = end;
  if (span.startNs > 0n && span.endNs >= span.startNs) {
    const d = span.endNs - span.startNs;
    data.duration_ns = d <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(d) : d.toString();
  }
  if (span.status && (span.status.code || span.status.message)) data.status = { code: span.status.code, message: span.status.message };
  if (span.events.length) data.events = span.events.map((ev) => ({ name: ev.name, time: nanosToRfc3339(ev.timeNs) ?? null, attributes: ev.attributes }));
  if (span.links.length) data.links = span.links.map((l) => ({ trace_id: l.traceId, span_id: l.spanId, attributes: l.attributes }));
  if (span.traceState) data.trace_state = span.traceState;
  if (span.flags) data.flags = span.flags;
  if (span.droppedAttributes) data.dropped_attributes_count = span.droppedAttributes;
  const { part, dataJson } = dataPart(span.name, data);
  const record: OtlpConverted['record'] = { from: 'runtime', time: start, parts: [part] };
  const tool = nonEmptyString(span.attributes[TOOL_USE_ID_ATTRIBUTE]);
  if (tool) record.tool = tool;
  return { record, dataJson };
}
