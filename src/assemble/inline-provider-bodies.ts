/**
 * Provider bodies the runtime sent inline as OTLP log events (`OTEL_LOG_RAW_API_BODIES=1`), read
 * from the index figures of landed `otlp_log` records. Measured with Claude Code 2.1.328 through
 * ../shared/lab: `claude_code.api_request_body` names only its `request_body_id`; the matching
 * `claude_code.api_response_body` carries the same `request_body_id` with `request_id` and
 * `message.id`, so a request joins its call through its response. The text is the `body`
 * attribute, cut by the runtime when long (`body_truncated: "true"`, `body_length` the whole size).
 */
import type { IndexEntry } from '../storage/index.js';
import type { FigureValue } from '../storage/index-figures.js';

const INLINE_BODY_EVENTS: Readonly<Record<string, 'request' | 'response'>> = {
  'claude_code.api_request_body': 'request',
  'claude_code.api_response_body': 'response',
};

export interface InlineBody {
  entry: IndexEntry;
  role: 'request' | 'response';
  /** The message id of the call, from the response's own event or, for a request, its response's. */
  call?: string;
  request?: string;
  bodyId?: string;
  /** The whole body's size in characters, as the runtime states it. */
  length?: number;
  truncated: boolean;
}

const text = (v: FigureValue | undefined) => (typeof v === 'string' && v ? v : undefined);

function readInline(e: IndexEntry): InlineBody | undefined {
  const f = e.figures;
  if (!f) return undefined;
  // Most events are not bodies: look at the event name (an own figure, first) before reading the rest.
  let role: 'request' | 'response' | undefined;
  for (let i = 0; i < f.count && f.own(i); i++) if (f.key(i) === 'event') role = INLINE_BODY_EVENTS[String(f.value(i))];
  if (!role) return undefined;
  const out: InlineBody = { entry: e, role, truncated: false };
  for (let i = 0; i < f.count; i++) {
    const v = f.value(i);
    switch (f.key(i)) {
      case 'message.id':
        if (text(v)) out.call = text(v);
        break;
      case 'request_id':
        if (text(v)) out.request = text(v);
        break;
      case 'request_body_id':
        if (text(v)) out.bodyId = text(v);
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

/** Every inline body event of the live entries, each request given the call and request id its response names under the same `request_body_id`. */
export function inlineBodies(live: readonly IndexEntry[]): InlineBody[] {
  const out: InlineBody[] = [];
  const responseOf = new Map<string, InlineBody>();
  for (const e of live) {
    if (e.fileKind !== 'otlp_log') continue;
    const b = readInline(e);
    if (!b) continue;
    out.push(b);
    if (b.role === 'response' && b.bodyId) responseOf.set(b.bodyId, b);
  }
  for (const b of out) {
    if (b.role !== 'request' || !b.bodyId) continue;
    const r = responseOf.get(b.bodyId);
    if (r?.call) b.call ??= r.call;
    if (r?.request) b.request ??= r.request;
  }
  return out;
}
