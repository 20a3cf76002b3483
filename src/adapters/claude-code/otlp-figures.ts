/**
 * Claude Code's telemetry figures → a runtime-neutral observation assembly can join. Only the
 * names measured from Claude Code 2.1.328 through ../shared/lab are read (see the README's
 * "Claude Code's own events and spans"). The runtime sends some numbers as strings
 * (`tool_result`'s `duration_ms`, `success`), so every figure is read leniently and a value that
 * does not read is left out, never guessed.
 */

/** What one event or span says, in assembly's words. */
export type ObservationKind =
  | 'call' // api_request: one finished provider call
  | 'call_error' // api_error: one failed attempt
  | 'call_response' // assistant_response: the bridge from a request id to the transcript record
  | 'call_span' // span claude_code.llm_request
  | 'tool_decision'
  | 'tool_result'
  | 'tool_span' // span claude_code.tool
  | 'tool_execution_span' // span claude_code.tool.execution
  | 'tool_blocked_span' // span claude_code.tool.blocked_on_user, under its tool span
  | 'interaction_span'
  | 'prompt' // user_prompt
  | 'other';

export interface Observation {
  kind: ObservationKind;
  /** The event's or span's own name, as sent. */
  name: string;
  session?: string;
  prompt?: string;
  request?: string;
  toolUse?: string;
  /** The transcript record the event names (`message.uuid`). */
  record?: string;
  spanId?: string;
  parentSpanId?: string;
  start?: string;
  end?: string;
  durationMs?: number;
  ttftMs?: number;
  costUsd?: number;
  speed?: string;
  model?: string;
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheCreationTokens?: number;
  statusCode?: number;
  attempt?: number;
  error?: string;
  success?: boolean;
  decision?: string;
  decisionSource?: string;
  resultBytes?: number;
  toolName?: string;
  mcpServer?: string;
  /** `main`, `subagent` or `auxiliary` (the runtime's own side calls, which no transcript holds). */
  querySource?: string;
}

const EVENT_KINDS: Record<string, ObservationKind> = {
  'claude_code.api_request': 'call',
  'claude_code.api_error': 'call_error',
  'claude_code.assistant_response': 'call_response',
  'claude_code.tool_decision': 'tool_decision',
  'claude_code.tool_result': 'tool_result',
  'claude_code.user_prompt': 'prompt',
};

const SPAN_KINDS: Record<string, ObservationKind> = {
  'claude_code.llm_request': 'call_span',
  'claude_code.tool': 'tool_span',
  'claude_code.tool.execution': 'tool_execution_span',
  'claude_code.tool.blocked_on_user': 'tool_blocked_span',
  'claude_code.interaction': 'interaction_span',
};

const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : undefined;
};
const bool = (v: unknown): boolean | undefined => (v === true || v === 'true' ? true : v === false || v === 'false' ? false : undefined);

/** Reads one index entry's figures (see storage/index.ts); undefined when they are not an event or span of this runtime's. */
export function readObservation(figures: string): Observation | undefined {
  // The index writes the name first: an event or span no join reads is named without parsing the rest.
  const named = /^\{"(event|name)":"([^"\\]+)"/.exec(figures);
  if (named && named[1] === 'event' && !EVENT_KINDS[named[2]!]) return { kind: 'other', name: named[2]! };
  if (named && named[1] === 'name' && !SPAN_KINDS[named[2]!]) return { kind: 'other', name: named[2]! };
  let d: {
    event?: unknown;
    name?: unknown;
    span_id?: unknown;
    parent_span_id?: unknown;
    duration_ns?: unknown;
    start?: unknown;
    end?: unknown;
    attributes?: unknown;
  };
  try {
    d = JSON.parse(figures) as typeof d;
  } catch {
    return undefined;
  }
  const a = (d.attributes && typeof d.attributes === 'object' ? d.attributes : {}) as Record<string, unknown>;
  const event = str(d.event);
  const span = event ? undefined : str(d.name);
  const name = event ?? span;
  if (!name) return undefined;
  const o: Observation = { kind: (event ? EVENT_KINDS[event] : SPAN_KINDS[name]) ?? 'other', name };
  const set = <K extends keyof Observation>(k: K, v: Observation[K] | undefined) => {
    if (v !== undefined) o[k] = v;
  };
  set('session', str(a['session.id']));
  set('prompt', str(a['prompt.id']));
  set('request', str(a.request_id));
  set('toolUse', str(a.tool_use_id));
  set('record', str(a['message.uuid']));
  set('spanId', str(d.span_id));
  set('parentSpanId', str(d.parent_span_id));
  set('start', str(d.start));
  set('end', str(d.end));
  // A span's own duration attribute is what the runtime measured; its start and end bound it.
  const spanMs = num(d.duration_ns) !== undefined ? num(d.duration_ns)! / 1e6 : undefined;
  set('durationMs', num(a.duration_ms) ?? spanMs);
  set('ttftMs', num(a.ttft_ms));
  set('costUsd', num(a.cost_usd));
  set('speed', str(a.speed));
  set('model', str(a.model));
  set('inputTokens', num(a.input_tokens));
  set('outputTokens', num(a.output_tokens));
  set('cacheReadTokens', num(a.cache_read_tokens));
  set('cacheCreationTokens', num(a.cache_creation_tokens));
  set('statusCode', num(a.status_code));
  set('attempt', num(a.attempt));
  set('error', str(a.error) ?? str(a.error_type));
  set('success', bool(a.success));
  set('decision', str(a.decision));
  set('decisionSource', str(a.source));
  set('resultBytes', num(a.tool_result_size_bytes));
  set('toolName', str(a.tool_name));
  set('mcpServer', str(a['anthropic.mcp.server.name']));
  set('querySource', str(a.query_source));
  return o;
}
