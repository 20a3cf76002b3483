/**
 * The text of a provider body sent inline as an OTLP log event (`claude_code.api_request_body` /
 * `claude_code.api_response_body`, landed as an `otlp_log` record): its `body` attribute. The
 * runtime cuts a long body (`body_truncated: "true"`, at 60 KB unless CLAUDE_CODE_OTEL_CONTENT_MAX_LENGTH
 * says otherwise) and appends a `[TRUNCATED - …]` note; what arrived, without the note, is closed into
 * valid JSON at its last complete element, so a manifest can still be read from it, and the reason says so.
 */
import { rebuildBody } from './provider-body.js';
import type { SdRecord } from './types.js';

export const INLINE_BODY_EVENT_NAMES: ReadonlySet<string> = new Set(['claude_code.api_request_body', 'claude_code.api_response_body']);

/** The note the runtime (2.1.328) appends to a cut attribute value. */
const TRUNCATION_NOTE = /\n\n\[TRUNCATED - Content exceeds [^\]\n]* limit\]$/;

export type BodyText = { body: string; partial?: string } | { problem: string };

/** The inline body event's data part, or undefined when the record is not one. */
function inlineEvent(r: Pick<SdRecord, 'parts'>): Record<string, unknown> | undefined {
  for (const p of r.parts) {
    const d = p.k === 'data' && p.data && typeof p.data === 'object' ? (p.data as Record<string, unknown>) : undefined;
    if (d && typeof d.event === 'string' && INLINE_BODY_EVENT_NAMES.has(d.event)) return (d.attributes ?? {}) as Record<string, unknown>;
  }
  return undefined;
}

/**
 * The longest prefix of cut JSON that ends on a complete element, with its open containers closed:
 * cut before the last comma, or just after the last bracket, outside a string.
 */
export function closeCutJson(text: string): string | undefined {
  const stack: string[] = [];
  let cut: { at: number; closers: string } | undefined;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (inString) {
      if (c === '\\') i++;
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') inString = true;
    else if (c === '{' || c === '[') {
      stack.push(c === '{' ? '}' : ']');
      cut = { at: i + 1, closers: [...stack].reverse().join('') };
    } else if (c === '}' || c === ']') {
      stack.pop();
      cut = { at: i + 1, closers: [...stack].reverse().join('') };
    } else if (c === ',') cut = { at: i, closers: [...stack].reverse().join('') };
  }
  return cut ? text.slice(0, cut.at) + cut.closers : undefined;
}

/** A body's text from its landed record, of either form: a `provider_body/1` manifest, or an inline body event. */
export function bodyText(r: Pick<SdRecord, 'parts'>): BodyText {
  const attrs = inlineEvent(r);
  if (!attrs) return rebuildBody(r);
  const body = attrs.body;
  if (typeof body !== 'string') return { problem: 'the inline body event carries no body text' };
  const truncated = attrs.body_truncated === true || attrs.body_truncated === 'true';
  if (!truncated) {
    try {
      JSON.parse(body);
      return { body };
    } catch (err) {
      return { problem: `the inline body is not one JSON value (${(err as Error).message})` };
    }
  }
  const whole = attrs.body_length !== undefined ? ` of ${String(attrs.body_length)}` : '';
  const arrived = body.replace(TRUNCATION_NOTE, '');
  const closed = closeCutJson(arrived);
  const reason = `the runtime cut this body at ${arrived.length}${whole} characters (body_truncated); the manifest reads only what arrived`;
  if (closed === undefined) return { problem: `${reason}, and nothing complete arrived` };
  try {
    JSON.parse(closed);
  } catch (err) {
    return { problem: `${reason}, and what arrived could not be closed into JSON (${(err as Error).message})` };
  }
  return { body: closed, partial: reason };
}
