import type { FigureValue } from '../../storage/index-figures.js';

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
  /** A provider call's attempts as its span timed them (`gen_ai.request.attempt` events): number and start. */
  attemptStarts?: { attempt: number; at: string }[];
}

export const EVENT_KINDS: Record<string, ObservationKind> = {
  'claude_code.api_request': 'call',
  'claude_code.api_error': 'call_error',
  'claude_code.assistant_response': 'call_response',
  'claude_code.tool_decision': 'tool_decision',
  'claude_code.tool_result': 'tool_result',
  'claude_code.user_prompt': 'prompt',
};

export const SPAN_KINDS: Record<string, ObservationKind> = {
  'claude_code.llm_request': 'call_span',
  'claude_code.tool': 'tool_span',
  'claude_code.tool.execution': 'tool_execution_span',
  'claude_code.tool.blocked_on_user': 'tool_blocked_span',
  'claude_code.interaction': 'interaction_span',
};

export const str = (v: FigureValue): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
export const num = (v: FigureValue): number | undefined => {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  return Number.isFinite(n) ? n : undefined;
};
export const bool = (v: FigureValue): boolean | undefined => (v === true || v === 'true' ? true : v === false || v === 'false' ? false : undefined);

export type Settable = Exclude<keyof Observation, 'kind' | 'name' | 'attemptStarts'>;
/** Each attribute a join reads: the observation's field it fills and how its value reads. */
export const ATTRIBUTES: Record<string, [Settable, (v: FigureValue) => string | number | boolean | undefined]> = {
  'session.id': ['session', str],
  'prompt.id': ['prompt', str],
  request_id: ['request', str],
  tool_use_id: ['toolUse', str],
  'message.uuid': ['record', str],
  duration_ms: ['durationMs', num],
  ttft_ms: ['ttftMs', num],
  cost_usd: ['costUsd', num],
  speed: ['speed', str],
  model: ['model', str],
  input_tokens: ['inputTokens', num],
  output_tokens: ['outputTokens', num],
  cache_read_tokens: ['cacheReadTokens', num],
  cache_creation_tokens: ['cacheCreationTokens', num],
  status_code: ['statusCode', num],
  attempt: ['attempt', num],
  error: ['error', str],
  success: ['success', bool],
  decision: ['decision', str],
  source: ['decisionSource', str],
  tool_result_size_bytes: ['resultBytes', num],
  tool_name: ['toolName', str],
  'anthropic.mcp.server.name': ['mcpServer', str],
  query_source: ['querySource', str],
};

/** The `gen_ai.request.attempt` events of an `llm_request` span: each attempt's number and start. */
export function attemptStarts(eventsJson: string): { attempt: number; at: string }[] | undefined {
  let events: unknown;
  try {
    events = JSON.parse(eventsJson);
  } catch {
    return undefined;
  }
  if (!Array.isArray(events)) return undefined;
  const out: { attempt: number; at: string }[] = [];
  for (const e of events as { name?: unknown; time?: unknown; attributes?: Record<string, FigureValue> }[]) {
    const attempt = e.attributes?.attempt !== undefined ? num(e.attributes.attempt) : undefined;
    if (e.name === 'gen_ai.request.attempt' && attempt !== undefined && typeof e.time === 'string') out.push({ attempt, at: e.time });
  }
  return out.length ? out : undefined;
}
