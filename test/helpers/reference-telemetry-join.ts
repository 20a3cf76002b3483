/**
 * The telemetry join as it was first written: one observation object per event, grouped into
 * arrays per identifier. Kept only as the straightforward reference the columnar join in
 * src/assemble/stage9-telemetry.ts is compared with on randomized input; nothing in src uses it.
 */
import { ATTRIBUTES, attemptStarts, EVENT_KINDS, num, SPAN_KINDS, str, type Observation } from '../../src/adapters/claude-code/otlp-figures.js';
import type { Figures } from '../../src/storage/index-figures.js';
import { entityId, type Ref } from '../../src/formats/session-flow/types.js';
import { IsoTimes } from '../../src/util/iso-time.js';
import { retriesOfCalls, type RetriedAttempt } from '../../src/assemble/call-retries.js';
import { addUnresolved, has, refOf, type AssemblyContext } from '../../src/assemble/context.js';
import type { IndexEntry } from '../../src/storage/index.js';
import type { ToolUse } from '../../src/assemble/stage4-tools.js';
import { emitAuxiliaryStream } from '../../src/assemble/auxiliary-stream.js';

/**
 * The reference's reader, as first written (src reads into columns, observation-table.ts). Reads one index entry's figures (see storage/index-figures.ts) in one pass, own fields first;
 * undefined when they are not an event or span of this runtime's. An event or span no join reads
 * is named, not read.
 */
function readObservation(figures: Figures): Observation | undefined {
  let o: Observation | undefined;
  let isEvent = false,
    spanNs: number | undefined,
    events: string | undefined,
    errorType: string | undefined,
    spanId: string | undefined,
    parentSpanId: string | undefined,
    start: string | undefined,
    end: string | undefined;
  const n = figures.count;
  let i = 0;
  for (; i < n && figures.own(i); i++) {
    const key = figures.key(i);
    const value = figures.value(i);
    if (key === 'event' || key === 'name') {
      const name = str(value);
      if (!name || o || (key === 'name' && isEvent)) continue;
      isEvent = key === 'event';
      const kind = (isEvent ? EVENT_KINDS[name] : SPAN_KINDS[name]) ?? 'other';
      if (kind === 'other') return { kind, name };
      o = { kind, name };
    } else if (key === 'duration_ns') spanNs = num(value);
    else if (key === 'events') events = str(value);
    else if (key === 'span_id') spanId = str(value);
    else if (key === 'parent_span_id') parentSpanId = str(value);
    else if (key === 'start') start = str(value);
    else if (key === 'end') end = str(value);
  }
  if (!o) return undefined;
  for (; i < n; i++) {
    const key = figures.key(i);
    const to = ATTRIBUTES[key];
    if (!to) {
      if (key === 'error_type') errorType = str(figures.value(i));
      continue;
    }
    const read = to[1](figures.value(i));
    if (read !== undefined) (o as unknown as Record<string, unknown>)[to[0]] = read;
  }
  if (o.error === undefined && errorType !== undefined) o.error = errorType;
  if (!isEvent) {
    if (spanId) o.spanId = spanId;
    if (parentSpanId) o.parentSpanId = parentSpanId;
    if (start) o.start = start;
    if (end) o.end = end;
    // A span's own duration attribute is what the runtime measured; its start and end bound it.
    if (o.durationMs === undefined && spanNs !== undefined) o.durationMs = spanNs / 1e6;
    if (o.kind === 'call_span' && events) {
      const starts = attemptStarts(events);
      if (starts) o.attemptStarts = starts;
    }
  }
  return o;
}

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

/**
 * Stage 9. The runtime's own events and spans, joined to the calls, tools and talks they describe
 * by identifiers only — request id, tool use id, prompt id, span parent — never by nearness in
 * time. A request id reaches its call through a bridge the runtime states: `assistant_response`
 * names the transcript record (`message.uuid`), and a tool event names both the request and a tool
 * use the call holds. What joins nothing is an open `telemetry` unresolved entry with its reason; a
 * step with no event says which figures are unavailable and why. Events that land after the
 * transcript join in the next round, since assembly runs over everything landed so far.
 */
export function referenceJoinTelemetry(ctx: AssemblyContext, uses: Map<string, ToolUse>): void {
  const seen: Seen[] = [];
  const times = new IsoTimes();
  const failures: IndexEntry[] = [];
  for (const e of ctx.live) {
    const kind = e.fileKind;
    if (kind === 'transcript' && e.figures && has(e, 'api_error')) failures.push(e);
    if (kind !== 'otlp_log' && kind !== 'otlp_span') continue;
    const figures = e.figures;
    if (!figures) continue;
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
  const callOfRecord = (id: string) => {
    const e = ctx.byId.get(id);
    return e?.fileKind === 'transcript' ? e.call : undefined;
  };
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
    if (o.kind === 'call_response' && o.record) bridge(o.request, callOfRecord(o.record));
    if ((o.kind === 'tool_decision' || o.kind === 'tool_result') && o.toolUse) bridge(o.request, uses.get(o.toolUse)?.entry.call);
    if (o.kind === 'call' || o.kind === 'call_span' || o.kind === 'call_error') push(byRequest, o.request, o);
    if (o.kind === 'tool_decision' || o.kind === 'tool_result' || o.kind === 'tool_span' || o.kind === 'tool_execution_span') push(byToolUse, o.toolUse, o);
    if (o.kind === 'tool_blocked_span') push(byParentSpan, o.parentSpanId, o);
    push(byPrompt, o.prompt, o);
  }

  const requestOfCall = new Map<string, string>();
  for (const [request, call] of callOfRequest) requestOfCall.set(call, request);
  const retries = retriesOfCalls(ctx, failures);
  for (const [id, node] of ctx.out.nodes) {
    if (node.kind !== 'llm.call') continue;
    const call = id.slice('call/'.length);
    const request = requestOfCall.get(call);
    // Each node owns its attrs object (stages 3 and 4 make one per node): written in place, not copied.
    callFigures((node.attrs ??= {}), request, request ? (byRequest.get(request) ?? []) : [], exported, times, retries.get(call));
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
    toolFigures((node.attrs ??= {}), obs, blocked, exported, times);
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
function callFigures(
  out: Record<string, unknown>,
  request: string | undefined,
  obs: Seen[],
  exported: boolean,
  times: IsoTimes,
  retried: RetriedAttempt[] | undefined,
): void {
  let event: Seen | undefined, span: Seen | undefined;
  let failed: Seen[] | undefined;
  for (const o of obs) {
    if (o.kind === 'call') event ??= o;
    else if (o.kind === 'call_span' && o.success !== false) span ??= o;
    if (o.kind === 'call_error' || (o.kind === 'call_span' && o.success === false)) (failed ??= []).push(o);
  }
  if (request) out.request_id = request;
  figure(out, 'duration_ms', 'duration_ms_from', event?.durationMs, span?.durationMs);
  figure(out, 'ttft_ms', 'ttft_ms_from', event?.ttftMs, span?.ttftMs);
  figure(out, 'cost_usd', 'cost_usd_from', event?.costUsd, undefined);
  figure(out, 'speed', 'speed_from', event?.speed, span?.speed);
  figure(out, 'model', 'model_from', event?.model, span?.model);
  const spanStart = times.formatText(span?.start),
    spanEnd = times.formatText(span?.end);
  if (spanStart && spanEnd) {
    out.started_at = spanStart;
    out.ended_at = spanEnd;
    out.span_from = 'span';
  } else if (event?.time !== undefined && event.durationMs !== undefined) {
    out.started_at = times.format(event.time - event.durationMs);
    out.ended_at = times.format(event.time);
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
  // Failed attempts: the runtime's api_error events, llm_request spans it marked unsuccessful, and
  // the transcript's api_error records right above the call, timed by the answered span's attempts.
  if (failed || retried) Object.assign(out, failedAttempts(failed ?? [], retried ?? [], span, times));
  if (out.duration_ms === undefined || out.ttft_ms === undefined || out.cost_usd === undefined) {
    const missing = CALL_FIGURES.filter((k) => out[k] === undefined);
    out.unavailable = missing;
    out.unavailable_reason = !exported ? NO_EXPORT : request ? 'the runtime sent no figure for it' : NOT_YET;
  }
  if (obs.length) out.telemetry_refs = obs.map((o) => o.at);
}

const CALL_FIGURES = ['duration_ms', 'ttft_ms', 'cost_usd'];

/** Writes a figure from the event, else from the span, with where it came from. */
function figure(out: Record<string, unknown>, key: string, fromKey: string, fromEvent: unknown, fromSpan: unknown): void {
  if (fromEvent !== undefined) {
    out[key] = fromEvent;
    out[fromKey] = 'event';
  } else if (fromSpan !== undefined) {
    out[key] = fromSpan;
    out[fromKey] = 'span';
  }
}

/** A tool step's figures: execution time, outcome, the permission decision, the wait for the user. */
function toolFigures(out: Record<string, unknown>, obs: Seen[], blocked: Seen[], exported: boolean, times: IsoTimes): void {
  let result: Seen | undefined, exec: Seen | undefined, decided: Seen | undefined;
  for (const o of obs) {
    if (o.kind === 'tool_result') result ??= o;
    else if (o.kind === 'tool_execution_span') exec ??= o;
    else if (o.kind === 'tool_decision') decided ??= o;
  }
  const decision = decided ?? blocked.find((o) => o.decision);
  const from = (key: string, fromKey: string, value: unknown, where: 'event' | 'span') => {
    if (value === undefined) return;
    out[key] = value;
    out[fromKey] = where;
  };
  if (result?.durationMs !== undefined) from('execution_ms', 'execution_ms_from', result.durationMs, 'event');
  else from('execution_ms', 'execution_ms_from', exec?.durationMs, 'span');
  out.timing = out.execution_ms !== undefined ? 'observed' : 'unavailable';
  const execStart = times.formatText(exec?.start);
  if (execStart) from('started_at', 'started_at_from', execStart, 'span');
  else if (result?.time !== undefined && result.durationMs !== undefined)
    from('started_at', 'started_at_from', times.format(result.time - result.durationMs), 'event');
  const success = result?.success ?? exec?.success;
  from('success', 'success_from', success, result?.success !== undefined ? 'event' : 'span');
  from('result_bytes', 'result_bytes_from', result?.resultBytes, 'event');
  if (decision?.decision) {
    const where = decision.kind === 'tool_decision' ? 'event' : 'span';
    from('decision', 'decision_from', decision.decision, where);
    from('decision_source', 'decision_source_from', decision.decisionSource, where);
  }
  if (blocked.length) from('blocked_on_user_ms', 'blocked_on_user_ms_from', round3(sum(blocked.map((b) => b.durationMs))), 'span');
  const error = result?.error ?? exec?.error;
  if (error && success === false) out.error_class = error;
  if (out.execution_ms === undefined || out.decision === undefined) {
    const missing = TOOL_FIGURES.filter((k) => out[k] === undefined);
    out.unavailable = missing;
    // A refused tool never runs: its missing execution time is the decision's doing, not a gap.
    out.unavailable_reason = !exported ? NO_EXPORT : decision?.decision === 'reject' && missing.length === 1 ? 'the tool was refused and never ran' : NOT_YET;
  }
  if (obs.length || blocked.length) out.telemetry_refs = blocked.length ? [...obs, ...blocked].map((o) => o.at) : obs.map((o) => o.at);
}

const TOOL_FIGURES = ['execution_ms', 'decision'];

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

/**
 * A call's failed attempts, oldest first, each with where it came from. Time lost is what the
 * runtime measured: the failed attempts' own durations when its events or spans state them, else
 * the time from the first attempt's start to the answered one's, from the answered span's
 * attempt marks.
 */
function failedAttempts(failed: Seen[], retried: RetriedAttempt[], span: Seen | undefined, times: IsoTimes): Record<string, unknown> {
  const starts = new Map((span?.attemptStarts ?? []).map((a) => [a.attempt, a.at]));
  const clean = (a: Record<string, unknown>) => Object.fromEntries(Object.entries(a).filter(([, v]) => v !== undefined));
  const attempts = [
    ...retried.map((r) =>
      clean({
        attempt: r.attempt,
        status_code: r.statusCode,
        request_id: r.request,
        retry_in_ms: r.retryInMs,
        error: r.error,
        started_at: r.attempt !== undefined ? times.formatText(starts.get(r.attempt)) : undefined,
        failed_at: times.format(r.time),
        from: 'transcript',
        ref: r.at,
      }),
    ),
    ...failed.map((o) =>
      clean({ attempt: o.attempt, status_code: o.statusCode, duration_ms: o.durationMs, error: o.error, from: o.kind === 'call_error' ? 'event' : 'span' }),
    ),
  ];
  const out: Record<string, unknown> = { attempts };
  const first = span?.attemptStarts?.[0];
  const last = span?.attemptStarts?.[span.attemptStarts.length - 1];
  if (failed.length && failed.every((o) => o.durationMs !== undefined)) {
    out.attempts_lost_ms = sum(failed.map((o) => o.durationMs));
    out.attempts_lost_from = failed[0]!.kind === 'call_error' ? 'event' : 'span';
  } else if (first && last && last.attempt > first.attempt) {
    out.attempts_lost_ms = Date.parse(last.at) - Date.parse(first.at);
    out.attempts_lost_from = 'span';
  } else {
    out.attempts_lost_unavailable = 'no event or span timed the failed attempts';
  }
  return out;
}
