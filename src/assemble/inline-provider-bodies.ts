/**
 * Provider body events in the runtime's OTLP export, read from the index figures of landed
 * `otlp_log` records. Measured with Claude Code 2.1.328 through ../shared/lab:
 * `claude_code.api_request_body` names only its `request_body_id`; the matching
 * `claude_code.api_response_body` carries the same `request_body_id` with `request_id` and
 * `message.id`, so a request joins its call through its response. With `OTEL_LOG_RAW_API_BODIES=1`
 * the text is the `body` attribute, cut when long (`body_truncated: "true"`, `body_length` the whole
 * size); with `file:DIR` the same events carry `body_ref`, the dump file's path, instead: they name a
 * body the `file:` form lands, and hold none.
 */
import type { IndexEntry } from '../storage/index.js';
import type { FigureValue } from '../storage/index-figures.js';

const INLINE_BODY_EVENTS: ReadonlyMap<FigureValue, 'request' | 'response'> = new Map([
  ['claude_code.api_request_body', 'request'],
  ['claude_code.api_response_body', 'response'],
]);

export interface InlineBody {
  entry: IndexEntry;
  role: 'request' | 'response';
  /** `inline`: the event holds the body's text; `reference`: it names the dump file (`body_ref`) that holds it. */
  form: 'inline' | 'reference';
  /** The message id of the call, from the response's own event or, for a request, its response's. */
  call?: string;
  request?: string;
  bodyId?: string;
  /** The dump file a `reference` names. */
  file?: string;
  /** The whole body's size, as the runtime states it. */
  length?: number;
  truncated: boolean;
}

/** Whether an event of this name may be a body event (readInlineBody decides). */
export const isBodyEventName = (name: string) => INLINE_BODY_EVENTS.has(name);

const text = (v: FigureValue) => (typeof v === 'string' && v ? v : undefined);

/**
 * The body event an index entry is, or undefined. Most telemetry is not a body: the event name is
 * a log record's first figure, so every other record costs one look.
 */
export function readInlineBody(e: IndexEntry): InlineBody | undefined {
  if (e.fileKind !== 'otlp_log') return undefined;
  const f = e.figures;
  if (!f || f.count === 0 || f.key(0) !== 'event') return undefined;
  const role = INLINE_BODY_EVENTS.get(f.value(0));
  if (!role) return undefined;
  const out: InlineBody = { entry: e, role, form: 'inline', truncated: false };
  for (let i = 1; i < f.count; i++) {
    const v = f.value(i);
    switch (f.key(i)) {
      case 'message.id':
        out.call = text(v) ?? out.call;
        break;
      case 'request_id':
        out.request = text(v) ?? out.request;
        break;
      case 'request_body_id':
        out.bodyId = text(v) ?? out.bodyId;
        break;
      case 'body_ref':
        out.file = text(v) ?? out.file;
        if (out.file) out.form = 'reference';
        break;
      case 'body_length':
        if (Number.isFinite(Number(v))) out.length = Number(v);
        break;
      case 'body_truncated':
        out.truncated = v === true || v === 'true';
        break;
    }
  }
  return out;
}

/** Gives each request the call and request id its response names under the same `request_body_id`. */
export function pairInlineBodies(bodies: readonly InlineBody[]): void {
  const responseOf = new Map<string, InlineBody>();
  for (const b of bodies) if (b.role === 'response' && b.bodyId) responseOf.set(b.bodyId, b);
  if (!responseOf.size) return;
  for (const b of bodies) {
    if (b.role !== 'request' || !b.bodyId) continue;
    const r = responseOf.get(b.bodyId);
    if (r?.call) b.call ??= r.call;
    if (r?.request) b.request ??= r.request;
  }
}

/** Every body event of the entries, paired. */
export function inlineBodies(entries: readonly IndexEntry[]): InlineBody[] {
  const out: InlineBody[] = [];
  for (const e of entries) {
    const b = readInlineBody(e);
    if (b) out.push(b);
  }
  pairInlineBodies(out);
  return out;
}
