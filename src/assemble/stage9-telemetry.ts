import { readObservation, type Observation } from '../adapters/claude-code/otlp-figures.js';
import { entityId, type Ref } from '../formats/session-flow/types.js';
import { addUnresolved, refOf, type AssemblyContext } from './context.js';
import type { ToolUse } from './stage4-tools.js';
import { emitAuxiliaryStream } from './auxiliary-stream.js';

interface Seen extends Observation {
  at: Ref;
  /** The record's own time (an event's timestamp, a span's start), ms since the epoch. */
  time?: number;
}

const NO_EXPORT = 'no OTLP export from the runtime has landed for this session';
const NOT_YET = 'no event or span naming it has landed (yet); a later round adds it';

const push = <K, V>(m: Map<K, V[]>, k: K | undefined, v: V) => {
  if (k !== undefined) (m.get(k) ?? m.set(k, []).get(k)!).push(v);
};
const sum = (xs: (number | undefined)[]) => xs.reduce<number>((a, x) => a + (x ?? 0), 0);
const round3 = (n: number) => Math.round(n * 1000) / 1000;
const iso = (ms: number | undefined) => (ms === undefined || Number.isNaN(ms) ? undefined : new Date(ms).toISOString());
/** Span times come with up to nanoseconds; the document speaks milliseconds, like the transcript. */
const isoOf = (rfc3339: string | undefined) => (rfc3339 === undefined ? undefined : iso(Date.parse(rfc3339)));

/**
 * Stage 9. The runtime's own events and spans, joined to the calls, tools and talks they describe
 * by identifiers only — request id, tool use id, prompt id, span parent — never by nearness in
 * time. A request id reaches its call through a bridge the runtime states: `assistant_response`
 * names the transcript record (`message.uuid`), and a tool event names both the request and a tool
 * use the call holds. What joins nothing is an open `telemetry` unresolved entry with its reason; a
 * step with no event says which figures are unavailable and why. Events that land after the
 * transcript join in the next round, since assembly runs over everything landed so far.
 */
export function joinTelemetry(ctx: AssemblyContext, uses: Map<string, ToolUse>): void {
  const seen: Seen[] = [];
  for (const e of ctx.live) {
    const figures = e.figures;
    if (!figures || (e.fileKind !== 'otlp_log' && e.fileKind !== 'otlp_span')) continue;
    const o = readObservation(figures);
    if (!o) continue;
    if (o.session !== undefined && o.session !== ctx.session) {
      addUnresolved(ctx, 'telemetry', `record/${e.seq}/${e.row}`, `the ${o.name} record names session ${o.session}, not ${ctx.session}`);
      continue;
    }
    // The observation is fresh: give it its place instead of copying it.
    const placed = o as Seen;
    placed.at = refOf(e);
    if (e.time !== undefined) placed.time = e.time;
    seen.push(placed);
  }
  const exported = seen.length > 0;

  // The bridges from a request id to the call (message id) that carries it.
  const callOfRecord = new Map<string, string>();
  for (const s of ctx.streams.values()) for (const e of s.records) if (e.id && e.call) callOfRecord.set(e.id, e.call);
  const callOfRequest = new Map<string, string>();
  const bridge = (request: string | undefined, call: string | undefined) => {
    if (!request || !call) return;
    const prev = callOfRequest.get(request);
    if (prev === undefined) callOfRequest.set(request, call);
    else if (prev !== call) addUnresolved(ctx, 'telemetry', `request/${request}`, `the runtime ties request ${request} to two calls, ${prev} and ${call}`);
  };
  const byRequest = new Map<string, Seen[]>();
  const byToolUse = new Map<string, Seen[]>();
  const byPrompt = new Map<string, Seen[]>();
  const byParentSpan = new Map<string, Seen[]>();
  for (const o of seen) {
    if (o.kind === 'call_response' && o.record) bridge(o.request, callOfRecord.get(o.record));
    if ((o.kind === 'tool_decision' || o.kind === 'tool_result') && o.toolUse) bridge(o.request, uses.get(o.toolUse)?.entry.call);
    if (o.kind === 'call' || o.kind === 'call_span' || o.kind === 'call_error') push(byRequest, o.request, o);
    if (o.kind === 'tool_decision' || o.kind === 'tool_result' || o.kind === 'tool_span' || o.kind === 'tool_execution_span') push(byToolUse, o.toolUse, o);
    if (o.kind === 'tool_blocked_span') push(byParentSpan, o.parentSpanId, o);
    push(byPrompt, o.prompt, o);
  }

  const requestOfCall = new Map<string, string>();
  for (const [request, call] of callOfRequest) requestOfCall.set(call, request);
  for (const [id, node] of ctx.out.nodes) {
    if (node.kind !== 'llm.call') continue;
    const call = id.slice('call/'.length);
    const request = requestOfCall.get(call);
    // Each node owns its attrs object (stages 3 and 4 make one per node): adding in place, not copying.
    Object.assign((node.attrs ??= {}), callFigures(request, request ? (byRequest.get(request) ?? []) : [], exported));
  }
  // The runtime's own side calls join no call by design: they are the auxiliary stream, not a gap.
  const auxiliary = emitAuxiliaryStream(ctx, new Map([...byRequest].filter(([request]) => !callOfRequest.has(request))));
  for (const [request, obs] of byRequest) {
    if (callOfRequest.has(request) || auxiliary.has(request)) continue;
    const names = [...new Set(obs.map((o) => o.name))].join(', ');
    addUnresolved(
      ctx,
      'telemetry',
      `request/${request}`,
      `${names} names request ${request}, and no landed call is tied to it by an assistant_response or tool event`,
    );
  }

  for (const u of uses.values()) {
    const node = ctx.out.nodes.get(entityId('tool', u.id));
    if (!node) continue;
    const obs = byToolUse.get(u.id) ?? [];
    const toolSpans = obs.filter((o) => o.kind === 'tool_span' && o.spanId);
    const blocked = toolSpans.flatMap((t) => byParentSpan.get(t.spanId!) ?? []);
    Object.assign((node.attrs ??= {}), toolFigures(obs, blocked, exported));
  }
  const toolSpanIds = new Set(seen.filter((o) => o.kind === 'tool_span' && o.spanId).map((o) => o.spanId!));
  for (const [toolUse, obs] of byToolUse) {
    if (uses.has(toolUse)) continue;
    addUnresolved(
      ctx,
      'telemetry',
      `tool_use/${toolUse}`,
      `${[...new Set(obs.map((o) => o.name))].join(', ')} names tool use ${toolUse}, which no landed call holds`,
    );
  }
  for (const [parent, obs] of byParentSpan) {
    if (toolSpanIds.has(parent)) continue;
    addUnresolved(ctx, 'telemetry', `span/${parent}`, `${obs.length} ${obs[0]!.name} span(s) hang under span ${parent}, which is no landed tool span`);
  }

  for (const t of ctx.talks) {
    const node = ctx.out.nodes.get(t.id);
    if (!node) continue;
    const prompts = [...new Set(t.runs.map((r) => r.cycle))];
    const obs = prompts.flatMap((p) => byPrompt.get(p) ?? []);
    Object.assign((node.attrs ??= {}), totals(obs, exported, prompts));
  }
  const session = ctx.out.nodes.get(entityId('session', ctx.session));
  if (session) Object.assign((session.attrs ??= {}), totals(seen, exported), { telemetry_records: seen.length });
}

/** A provider call's figures, each with where it came from. */
function callFigures(request: string | undefined, obs: Seen[], exported: boolean): Record<string, unknown> {
  const event = obs.find((o) => o.kind === 'call');
  const span = obs.find((o) => o.kind === 'call_span' && o.success !== false);
  const out: Record<string, unknown> = {};
  if (request) out.request_id = request;
  const figure = (key: string, fromEvent: unknown, fromSpan: unknown) => {
    if (fromEvent !== undefined) {
      out[key] = fromEvent;
      out[`${key}_from`] = 'event';
    } else if (fromSpan !== undefined) {
      out[key] = fromSpan;
      out[`${key}_from`] = 'span';
    }
  };
  figure('duration_ms', event?.durationMs, span?.durationMs);
  figure('ttft_ms', event?.ttftMs, span?.ttftMs);
  figure('cost_usd', event?.costUsd, undefined);
  figure('speed', event?.speed, span?.speed);
  figure('model', event?.model, span?.model);
  if (span?.start && span.end && isoOf(span.start) && isoOf(span.end)) {
    out.started_at = isoOf(span.start);
    out.ended_at = isoOf(span.end);
    out.span_from = 'span';
  } else if (event?.time !== undefined && event.durationMs !== undefined) {
    out.started_at = iso(event.time - event.durationMs);
    out.ended_at = iso(event.time);
    out.span_from = 'event';
  }
  if (event) {
    const usage: Record<string, number> = {};
    if (event.inputTokens !== undefined) usage.input = event.inputTokens;
    if (event.outputTokens !== undefined) usage.output = event.outputTokens;
    if (event.cacheReadTokens !== undefined) usage.cache_read = event.cacheReadTokens;
    if (event.cacheCreationTokens !== undefined) usage.cache_creation = event.cacheCreationTokens;
    if (Object.keys(usage).length) out.event_usage = usage;
  }
  // Failed attempts: the runtime's api_error events, and llm_request spans it marked unsuccessful.
  const failed = obs.filter((o) => o.kind === 'call_error' || (o.kind === 'call_span' && o.success === false));
  if (failed.length) {
    out.attempts = failed
      .map((o) => ({
        attempt: o.attempt,
        status_code: o.statusCode,
        duration_ms: o.durationMs,
        error: o.error,
        from: o.kind === 'call_error' ? 'event' : 'span',
      }))
      .map((a) => Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined)));
    out.attempts_lost_ms = sum(failed.map((o) => o.durationMs));
  }
  const missing = ['duration_ms', 'ttft_ms', 'cost_usd'].filter((k) => out[k] === undefined);
  if (missing.length) {
    out.unavailable = missing;
    out.unavailable_reason = !exported ? NO_EXPORT : request ? 'the runtime sent no figure for it' : NOT_YET;
  }
  if (obs.length) out.telemetry_refs = obs.map((o) => o.at);
  return out;
}

/** A tool step's figures: execution time, outcome, the permission decision, the wait for the user. */
function toolFigures(obs: Seen[], blocked: Seen[], exported: boolean): Record<string, unknown> {
  const result = obs.find((o) => o.kind === 'tool_result');
  const exec = obs.find((o) => o.kind === 'tool_execution_span');
  const decision = obs.find((o) => o.kind === 'tool_decision') ?? blocked.find((o) => o.decision);
  const out: Record<string, unknown> = {};
  const from = (key: string, value: unknown, where: 'event' | 'span') => {
    if (value === undefined) return;
    out[key] = value;
    out[`${key}_from`] = where;
  };
  if (result?.durationMs !== undefined) from('execution_ms', result.durationMs, 'event');
  else from('execution_ms', exec?.durationMs, 'span');
  out.timing = out.execution_ms !== undefined ? 'observed' : 'unavailable';
  if (isoOf(exec?.start)) from('started_at', isoOf(exec?.start), 'span');
  else if (result?.time !== undefined && result.durationMs !== undefined) from('started_at', iso(result.time - result.durationMs), 'event');
  const success = result?.success ?? exec?.success;
  from('success', success, result?.success !== undefined ? 'event' : 'span');
  from('result_bytes', result?.resultBytes, 'event');
  if (decision?.decision) {
    const where = decision.kind === 'tool_decision' ? 'event' : 'span';
    from('decision', decision.decision, where);
    from('decision_source', decision.decisionSource, where);
  }
  if (blocked.length) from('blocked_on_user_ms', round3(sum(blocked.map((b) => b.durationMs))), 'span');
  const error = result?.error ?? exec?.error;
  if (error && success === false) out.error_class = error;
  const missing = ['execution_ms', 'decision'].filter((k) => out[k] === undefined);
  if (missing.length) {
    out.unavailable = missing;
    // A refused tool never runs: its missing execution time is the decision's doing, not a gap.
    out.unavailable_reason = !exported ? NO_EXPORT : decision?.decision === 'reject' && missing.length === 1 ? 'the tool was refused and never ran' : NOT_YET;
  }
  if (obs.length || blocked.length) out.telemetry_refs = [...obs, ...blocked].map((o) => o.at);
  return out;
}

/** A talk's or the conversation's totals over the events of its prompt ids. */
function totals(obs: Seen[], exported: boolean, prompts?: string[]): Record<string, unknown> {
  if (!exported) return prompts ? {} : { telemetry: 'unavailable', telemetry_reason: NO_EXPORT };
  const calls = obs.filter((o) => o.kind === 'call');
  const tools = obs.filter((o) => o.kind === 'tool_result');
  const out: Record<string, unknown> = {
    cost_usd: round3x(sum(calls.map((o) => o.costUsd))),
    api_ms: sum(calls.map((o) => o.durationMs)),
    tool_ms: sum(tools.map((o) => o.durationMs)),
    api_calls: calls.length,
    api_errors: obs.filter((o) => o.kind === 'call_error').length,
  };
  if (prompts) out.prompt_ids = prompts;
  return out;
}

/** Costs are sums of small floats: kept to a micro-dollar so equal inputs print equally. */
const round3x = (n: number) => Math.round(n * 1e6) / 1e6;
