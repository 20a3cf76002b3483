/**
 * Where the time and the money went, read from a view document: one row per provider call, one
 * per tool use, and the conversation's totals. Pure: the rows restate what assembly's telemetry
 * join (stage 9) wrote into the nodes' attrs, and every figure names where it came from.
 */
import type { ContextChange, ViewPrompt, ViewProviderBody } from './prompt.js';
import type { ViewDocument, ViewNode } from './types.js';

export type FigureSource = 'event' | 'span' | 'transcript';

export interface CallRow {
  request_id?: string;
  message_id: string;
  model?: string;
  stream?: string;
  started_at?: string;
  ended_at?: string;
  duration_ms?: number;
  ttft_ms?: number;
  cost_usd?: number;
  speed?: string;
  /** The failed attempts before the call succeeded, each with its status code and where it came from. */
  attempts: {
    attempt?: number;
    status_code?: number;
    /** The failed request's own id (not the answered call's). */
    request_id?: string;
    duration_ms?: number;
    retry_in_ms?: number;
    started_at?: string;
    error?: string;
    from?: FigureSource;
  }[];
  /** Time the failed attempts cost: their durations, or the first attempt's start to the answered one's. */
  attempts_lost_ms?: number;
  usage?: { input?: number; output?: number; cache_read?: number; cache_creation?: number };
  sources: Record<string, FigureSource>;
  unavailable?: string[];
  unavailable_reason?: string;
  /** The bodies the manifest was read from, each with its form, and any copy set aside as a duplicate. */
  provider_bodies?: ViewProviderBody[];
  /** What the call was sent and what came back, from its provider bodies; absent when none is captured. */
  manifest?: ViewPrompt;
  /** What changed in the context since the previous captured call of the same stream. */
  context_change?: ContextChange;
}

export interface ToolRow {
  tool_use_id: string;
  name?: string;
  stream?: string;
  started_at?: string;
  duration_ms?: number;
  success?: boolean;
  decision?: string;
  decision_source?: string;
  result_bytes?: number;
  blocked_on_user_ms?: number;
  mcp_server?: string;
  mcp_tool?: string;
  sources: Record<string, FigureSource>;
  unavailable?: string[];
  unavailable_reason?: string;
}

export interface TelemetrySummary {
  cost_usd?: number;
  api_ms?: number;
  tool_ms?: number;
  api_calls?: number;
  api_errors?: number;
}

const MCP_PREFIX = 'mcp__';
/** A tool row's figure and the attr assembly wrote it under. */
const TOOL_FIGURES: [string, string][] = [
  ['started_at', 'started_at'],
  ['duration_ms', 'execution_ms'],
  ['success', 'success'],
  ['decision', 'decision'],
  ['decision_source', 'decision_source'],
  ['result_bytes', 'result_bytes'],
  ['blocked_on_user_ms', 'blocked_on_user_ms'],
];

/**
 * `mcp__<server>__<tool>` → its server and tool. A name that does not split into exactly one
 * non-empty server and one non-empty tool keeps the whole name as the tool, with no server.
 */
export function splitMcpName(name: string): { mcp_server?: string; mcp_tool: string } | undefined {
  if (!name.startsWith(MCP_PREFIX)) return undefined;
  const rest = name.slice(MCP_PREFIX.length).split('__');
  if (rest.length === 2 && rest[0] && rest[1]) return { mcp_server: rest[0], mcp_tool: rest[1] };
  return { mcp_tool: name };
}

const num = (v: unknown) => (typeof v === 'number' ? v : undefined);
const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
const source = (v: unknown) => (v === 'event' || v === 'span' || v === 'transcript' ? v : undefined);

/** Every node of the document's trees, depth first, in document order. */
function* walk(nodes: ViewNode[]): Generator<ViewNode> {
  for (const n of nodes) {
    yield n;
    if (n.children) yield* walk(n.children);
  }
}

const withoutUndefined = <T extends object>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

export function callRows(doc: ViewDocument): CallRow[] {
  const rows: CallRow[] = [];
  for (const n of walk([...doc.talks, ...doc.loose])) {
    if (n.kind !== 'llm.call') continue;
    const a = n.attrs ?? {};
    const sources: Record<string, FigureSource> = {};
    for (const k of ['duration_ms', 'ttft_ms', 'cost_usd', 'speed', 'model']) {
      const s = source(a[`${k}_from`]);
      if (s) sources[k] = s;
    }
    const lostFrom = source(a.attempts_lost_from);
    if (lostFrom) sources.attempts_lost_ms = lostFrom;
    const spanFrom = source(a.span_from);
    if (spanFrom) sources.started_at = sources.ended_at = spanFrom;
    // The runtime's event states the usage it billed; the transcript's record is the fallback.
    const ev = a.event_usage as CallRow['usage'] | undefined;
    let usage: CallRow['usage'];
    if (ev) {
      usage = ev;
      sources.usage = 'event';
    } else if (n.usage) {
      usage = withoutUndefined({ input: n.usage.in, output: n.usage.out, cache_read: n.usage.cache_read, cache_creation: n.usage.cache_write });
      sources.usage = 'transcript';
    }
    const attempts = Array.isArray(a.attempts) ? (a.attempts as Record<string, unknown>[]) : [];
    rows.push(
      withoutUndefined({
        request_id: str(a.request_id),
        message_id: n.id.replace(/^call\//, ''),
        model: str(a.model),
        stream: n.stream,
        started_at: str(a.started_at),
        ended_at: str(a.ended_at),
        duration_ms: num(a.duration_ms),
        ttft_ms: num(a.ttft_ms),
        cost_usd: num(a.cost_usd),
        speed: str(a.speed),
        attempts: attempts.map((t) =>
          withoutUndefined({
            attempt: num(t.attempt),
            status_code: num(t.status_code),
            request_id: str(t.request_id),
            duration_ms: num(t.duration_ms),
            retry_in_ms: num(t.retry_in_ms),
            started_at: str(t.started_at),
            error: str(t.error),
            from: source(t.from),
          }),
        ),
        attempts_lost_ms: num(a.attempts_lost_ms),
        usage,
        sources,
        unavailable: Array.isArray(a.unavailable) ? (a.unavailable as string[]) : undefined,
        unavailable_reason: str(a.unavailable_reason),
        provider_bodies: n.provider_bodies,
        manifest: n.prompt,
        context_change: n.context_change,
      }),
    );
  }
  return rows;
}

export function toolRows(doc: ViewDocument): ToolRow[] {
  const rows: ToolRow[] = [];
  for (const n of walk([...doc.talks, ...doc.loose])) {
    if (n.kind !== 'tool' && n.kind !== 'agent.call') continue;
    const a = n.attrs ?? {};
    const name = str(a.name) ?? n.name;
    const sources: Record<string, FigureSource> = {};
    for (const [row, attr] of TOOL_FIGURES) {
      const s = source(a[`${attr}_from`]);
      if (s) sources[row] = s;
    }
    rows.push(
      withoutUndefined({
        tool_use_id: n.id.slice(n.id.lastIndexOf('/') + 1),
        name,
        stream: n.stream,
        started_at: str(a.started_at),
        duration_ms: num(a.execution_ms),
        success: typeof a.success === 'boolean' ? a.success : undefined,
        decision: str(a.decision),
        decision_source: str(a.decision_source),
        result_bytes: num(a.result_bytes),
        blocked_on_user_ms: num(a.blocked_on_user_ms),
        ...(name ? splitMcpName(name) : undefined),
        sources,
        unavailable: Array.isArray(a.unavailable) ? (a.unavailable as string[]).map((k) => TOOL_FIGURES.find(([, attr]) => attr === k)?.[0] ?? k) : undefined,
        unavailable_reason: str(a.unavailable_reason),
      }),
    );
  }
  return rows;
}

/** The conversation's totals as the session node carries them; nothing when the runtime exported nothing. */
export function telemetrySummary(attrs: Record<string, unknown> | undefined): TelemetrySummary {
  if (!attrs || attrs.cost_usd === undefined) return {};
  return withoutUndefined({
    cost_usd: num(attrs.cost_usd),
    api_ms: num(attrs.api_ms),
    tool_ms: num(attrs.tool_ms),
    api_calls: num(attrs.api_calls),
    api_errors: num(attrs.api_errors),
  });
}
