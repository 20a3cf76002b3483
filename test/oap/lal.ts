/**
 * The OAP's path for one OTLP log record under the AI_AGENT layer, from the facts in facts.ts:
 * the OTLP log handler (resource → service, instance, layer; attributes → string tags), the LAL
 * rule's extractor (each `tag("…") as Type` line, the guarded ones only when their guard is
 * present), then the `ConversationFile` builder's checks in its order. A record ends accepted (a
 * row to store), rejected with the `reason` label the OAP counts in
 * ai_agent_conversation_files_rejected, or dropped where the OAP drops it without that count.
 */
import { createHash } from 'node:crypto';
import { LAL_RULE, type LalField, type RejectReason } from './facts.js';

/** A stored row: what the OAP keeps of an accepted file (per service, instance and digest). */
export interface ConversationRow {
  service: string;
  instance: string;
  format: 'sd' | 'sf';
  digest: string;
  body: string;
  /** The extractor's fields, as the builder received them. */
  fields: Record<string, string | number>;
}

export type LalOutcome =
  | { verdict: 'accepted'; row: ConversationRow }
  | { verdict: 'rejected'; reason: RejectReason; detail: string }
  /** Not counted in ai_agent_conversation_files_rejected: the handler or the extractor let go of it first. */
  | { verdict: 'dropped'; stage: 'handler' | 'routing' | 'extractor'; detail: string };

/** An OTLP AnyValue as proto-loader decodes it (oneofs named), or as plain JSON. */
export type AnyValue = { value?: string; stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean; arrayValue?: unknown };
export type KeyValue = { key: string; value?: AnyValue };

/** Java's Double.toString for the values a tag can hold: a whole number keeps its `.0`. */
function javaDouble(d: number): string {
  return Number.isInteger(d) && Math.abs(d) < 1e7 ? `${d}.0` : String(d);
}

/** The handler's buildTagValue: every attribute becomes a string, an unknown kind the empty one. */
export function tagValue(v: AnyValue | undefined): string {
  if (!v) return '';
  const which = v.value ?? Object.keys(v).find((k) => k.endsWith('Value'));
  if (which === 'stringValue') return v.stringValue ?? '';
  if (which === 'intValue') return String(v.intValue ?? '');
  if (which === 'doubleValue') return javaDouble(v.doubleValue ?? 0);
  if (which === 'boolValue') return String(v.boolValue ?? false);
  if (which === 'arrayValue') return JSON.stringify(v.arrayValue);
  return '';
}

export function tagsOf(list: KeyValue[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const kv of list ?? []) out[kv.key] = tagValue(kv.value);
  return out;
}

/** Java's Long.parseLong: an optional sign, decimal digits, inside 64 bits. */
function parseLong(text: string): number | undefined {
  if (!/^[+-]?\d+$/.test(text)) return undefined;
  const n = BigInt(text);
  if (n > 9223372036854775807n || n < -9223372036854775808n) return undefined;
  return Number(n);
}

/**
 * Newline-terminated lines, plus a last line without one: the asz files' own count, which every
 * complete file (each line ends in a newline) gives as its number of newlines.
 */
export function countLines(body: Buffer): number {
  let n = 0;
  for (let i = body.indexOf(10); i !== -1; i = body.indexOf(10, i + 1)) n++;
  return body.length && body[body.length - 1] !== 10 ? n + 1 : n;
}

type Extracted = { ok: true; fields: Record<string, string | number> } | { ok: false; detail: string };

/**
 * The extractor: a `String` line copies the tag (absent reads as ""), a `Long` line converts it,
 * and a value that is not a whole number fails the conversion: LAL hands the builder's primitive
 * setter nothing, the analysis throws, and the OAP logs "Failed to analyze logs" and keeps nothing.
 */
function extract(tags: Record<string, string>): Extracted {
  const fields: Record<string, string | number> = {};
  const read = (lines: readonly LalField[]): string | undefined => {
    for (const l of lines) {
      if (l.guard !== undefined && (tags[l.guard] ?? '') === '') continue;
      const raw = tags[l.tag] ?? '';
      if (l.as === 'String') {
        fields[l.field] = raw;
        continue;
      }
      // An unguarded Long line whose tag is absent leaves the builder's "not set" (-1): its own check rejects it.
      if (raw === '' && l.guard === undefined) continue;
      const n = parseLong(raw);
      if (n === undefined) return `${l.tag} = ${JSON.stringify(raw)} is not a number: \`tag("${l.tag}") as Long\` fails`;
      fields[l.field] = n;
    }
    return undefined;
  };
  const failed = read(LAL_RULE.every);
  if (failed) return { ok: false, detail: failed };
  const format = tags['asz.format'];
  const byFormat = format === 'sd' || format === 'sf' ? LAL_RULE.byFormat[format] : [];
  const failedHere = read(byFormat);
  if (failedHere) return { ok: false, detail: failedHere };
  return { ok: true, fields };
}

const num = (f: Record<string, string | number>, k: string): number => (typeof f[k] === 'number' ? f[k] : -1);
const str = (f: Record<string, string | number>, k: string): string => (typeof f[k] === 'string' ? f[k] : '');

/**
 * One log record through the OAP. `resource` and `attributes` are OTLP key-values; `body` is the
 * record's body value (the handler takes only a string body; anything else reads as "").
 */
export function applyConversationRule(resource: KeyValue[] | undefined, attributes: KeyValue[] | undefined, body: AnyValue | undefined): LalOutcome {
  const res = tagsOf(resource);
  const service = res['service.name'] ?? '';
  if (!service) return { verdict: 'dropped', stage: 'handler', detail: 'no service.name on the resource: the OTLP log handler discards the record' };
  const layer = res['service.layer'] ?? '';
  if (layer !== LAL_RULE.layer)
    return {
      verdict: 'dropped',
      stage: 'routing',
      detail: `service.layer is ${JSON.stringify(layer)}, not ${LAL_RULE.layer}: the rule ${LAL_RULE.name} never sees it`,
    };
  const instance = res['service.instance.id'] || 'unknown';
  const tags = tagsOf(attributes);
  const x = extract(tags);
  if (!x.ok) return { verdict: 'dropped', stage: 'extractor', detail: x.detail };
  const f = x.fields;
  const text = body && (body.value === 'stringValue' || (body.value === undefined && typeof body.stringValue === 'string')) ? (body.stringValue ?? '') : '';
  const bytes = Buffer.from(text, 'utf8');
  const format = str(f, 'format'),
    digest = str(f, 'digest'),
    lines = num(f, 'lines');
  if (!format || !digest || lines < 0)
    return { verdict: 'rejected', reason: 'attributes', detail: 'a required attribute is missing (asz.format, asz.file.digest or asz.lines)' };
  const actual = createHash('sha256').update(bytes).digest('hex');
  if (actual !== digest) return { verdict: 'rejected', reason: 'digest', detail: `the body digests to ${actual}, the record declares ${digest}` };
  const counted = countLines(bytes);
  if (counted !== lines) return { verdict: 'rejected', reason: 'lines', detail: `the body has ${counted} lines, the record declares ${lines}` };
  if (format === 'sd' && (!str(f, 'session') || num(f, 'seq') < 0))
    return { verdict: 'rejected', reason: 'attributes', detail: 'a Session Data record without asz.session or asz.seq' };
  if (format === 'sf' && (!str(f, 'conversation') || num(f, 'round') < 0))
    return { verdict: 'rejected', reason: 'attributes', detail: 'a Session Flow record without asz.conversation or asz.round' };
  if (format !== 'sd' && format !== 'sf') return { verdict: 'rejected', reason: 'attributes', detail: `unknown asz.format ${format}` };
  return { verdict: 'accepted', row: { service, instance, format, digest, body: text, fields: f } };
}
