/**
 * The figures stage 9 writes into the nodes it joined (stage9-telemetry.ts): a provider call's, a
 * tool step's, a talk's and the conversation's totals, each with where it came from, and what is
 * unavailable with its reason.
 */
import type { ObservationTable } from '../adapters/claude-code/observation-table.js';
import type { ObservationKind } from '../adapters/claude-code/otlp-figures.js';
import type { Ref } from '../formats/session-flow/types.js';
import type { IsoTimes } from '../util/iso-time.js';
import type { RetriedAttempt } from './call-retries.js';
import type { RowGroups } from './row-groups.js';
import type { CodeGroups } from './code-groups.js';
import type { IdCodes } from '../storage/string-codes.js';

const NO_EXPORT = 'no OTLP export from the runtime has landed for this session';
const NOT_YET = 'no event or span naming it has landed (yet); a later round adds it';

const round3 = (n: number) => Math.round(n * 1000) / 1000;
/** Costs are sums of small floats: kept to a micro-dollar so equal inputs print equally. */
const round3x = (n: number) => Math.round(n * 1e6) / 1e6;

/** The observations, their groups by identifier, and the formatter every figure's time goes through. */
export interface Joined {
  t: ObservationTable;
  /** The ids' numbering the request groups are keyed by. */
  codes: IdCodes;
  byRequest: CodeGroups;
  /** The rows of each landed tool use, found from the use itself (stage 9's first row of each use), not by its id. */
  toolRows: RowGroups;
  /** The rows naming a tool use no landed call holds, by its id. */
  byUnknownToolUse: RowGroups;
  byPrompt: RowGroups;
  byParentSpan: RowGroups;
  times: IsoTimes;
  exported: boolean;
}

export const refAt = (t: ObservationTable, r: number): Ref => ({ seq: t.seqs[r]!, row: t.rows[r]! });

/** A provider call's figures, each with where it came from. */
export function callFigures(out: Record<string, unknown>, requestCode: number, j: Joined, retried: RetriedAttempt[] | undefined): void {
  const { t, times } = j;
  const request = requestCode < 0 ? undefined : j.codes.text(requestCode);
  let event = -1,
    span = -1;
  let failed: number[] | undefined;
  let refs: Ref[] | undefined;
  const first = j.byRequest.first(requestCode);
  for (let r = first; r >= 0; r = j.byRequest.after(r)) {
    const kind = t.kind(r);
    if (kind === 'call') {
      if (event < 0) event = r;
    } else if (kind === 'call_span' && t.succeeded(r) !== false) {
      if (span < 0) span = r;
    }
    if (kind === 'call_error' || (kind === 'call_span' && t.succeeded(r) === false)) (failed ??= []).push(r);
    if (refs) refs.push(refAt(t, r));
    else refs = [refAt(t, r)]; // made with its one element: an array's first push reserves room for 16
  }
  const num = (field: Parameters<ObservationTable['number']>[0], r: number) => (r < 0 ? undefined : t.number(field, r));
  const text = (field: Parameters<ObservationTable['text']>[0], r: number) => (r < 0 ? undefined : t.text(field, r));
  if (request) out.request_id = request;
  // Each figure from the event, else from the span, with where it came from. Named stores: V8 may
  // turn an object given many properties by computed names into a larger dictionary-mode object.
  const eventMs = num('durationMs', event),
    spanMs = num('durationMs', span);
  if (eventMs !== undefined || spanMs !== undefined) {
    out.duration_ms = eventMs ?? spanMs;
    out.duration_ms_from = eventMs !== undefined ? 'event' : 'span';
  }
  const eventTtft = num('ttftMs', event),
    spanTtft = num('ttftMs', span);
  if (eventTtft !== undefined || spanTtft !== undefined) {
    out.ttft_ms = eventTtft ?? spanTtft;
    out.ttft_ms_from = eventTtft !== undefined ? 'event' : 'span';
  }
  const cost = num('costUsd', event);
  if (cost !== undefined) {
    out.cost_usd = cost;
    out.cost_usd_from = 'event';
  }
  const eventSpeed = text('speed', event),
    spanSpeed = text('speed', span);
  if (eventSpeed !== undefined || spanSpeed !== undefined) {
    out.speed = eventSpeed ?? spanSpeed;
    out.speed_from = eventSpeed !== undefined ? 'event' : 'span';
  }
  const eventModel = text('model', event),
    spanModel = text('model', span);
  if (eventModel !== undefined || spanModel !== undefined) {
    out.model = eventModel ?? spanModel;
    out.model_from = eventModel !== undefined ? 'event' : 'span';
  }
  const spanStart = times.formatText(text('start', span)),
    spanEnd = times.formatText(text('end', span));
  const eventTime = event < 0 ? undefined : t.time(event);
  if (spanStart && spanEnd) {
    out.started_at = spanStart;
    out.ended_at = spanEnd;
    out.span_from = 'span';
  } else if (eventTime !== undefined && eventMs !== undefined) {
    out.started_at = times.format(eventTime - eventMs);
    out.ended_at = times.format(eventTime);
    out.span_from = 'event';
  }
  if (event >= 0) {
    const input = t.number('inputTokens', event),
      output = t.number('outputTokens', event),
      cacheRead = t.number('cacheReadTokens', event),
      cacheCreation = t.number('cacheCreationTokens', event);
    // Made only when the event states a count: tens of thousands of calls may state none.
    if (input !== undefined || output !== undefined || cacheRead !== undefined || cacheCreation !== undefined) {
      const usage: Record<string, number> = {};
      if (input !== undefined) usage.input = input;
      if (output !== undefined) usage.output = output;
      if (cacheRead !== undefined) usage.cache_read = cacheRead;
      if (cacheCreation !== undefined) usage.cache_creation = cacheCreation;
      out.event_usage = usage;
    }
  }
  // Failed attempts: the runtime's api_error events, llm_request spans it marked unsuccessful, and
  // the transcript's api_error records right above the call, timed by the answered span's attempts.
  if (failed || retried) Object.assign(out, failedAttempts(failed ?? [], retried ?? [], span, j));
  if (out.duration_ms === undefined || out.ttft_ms === undefined || out.cost_usd === undefined) {
    const missing = CALL_FIGURES.filter((k) => out[k] === undefined);
    out.unavailable = missing;
    out.unavailable_reason = !j.exported ? NO_EXPORT : request ? 'the runtime sent no figure for it' : NOT_YET;
  }
  if (refs) out.telemetry_refs = refs;
}

const CALL_FIGURES = ['duration_ms', 'ttft_ms', 'cost_usd'];

/** The first row of a kind in a tool use's group, or -1. */
function firstOfKind(j: Joined, first: number, kind: ObservationKind): number {
  for (let r = first; r >= 0; r = j.toolRows.after(r)) if (j.t.kind(r) === kind) return r;
  return -1;
}

/** A tool step's figures: execution time, outcome, the permission decision, the wait for the user. */
export function toolFigures(out: Record<string, unknown>, first: number, blocked: number[] | undefined, j: Joined): void {
  const { t, times } = j;
  const result = firstOfKind(j, first, 'tool_result'),
    exec = firstOfKind(j, first, 'tool_execution_span'),
    decided = firstOfKind(j, first, 'tool_decision');
  const decision = decided >= 0 ? decided : (blocked?.find((r) => t.text('decision', r)) ?? -1);
  // Named stores only, as in callFigures.
  const resultMs = result < 0 ? undefined : t.number('durationMs', result);
  const execMs = resultMs !== undefined || exec < 0 ? undefined : t.number('durationMs', exec);
  if (resultMs !== undefined) {
    out.execution_ms = resultMs;
    out.execution_ms_from = 'event';
  } else if (execMs !== undefined) {
    out.execution_ms = execMs;
    out.execution_ms_from = 'span';
  }
  out.timing = out.execution_ms !== undefined ? 'observed' : 'unavailable';
  const execStart = exec < 0 ? undefined : times.formatText(t.text('start', exec));
  const resultTime = result < 0 ? undefined : t.time(result);
  if (execStart) {
    out.started_at = execStart;
    out.started_at_from = 'span';
  } else if (resultTime !== undefined && resultMs !== undefined) {
    const started = times.format(resultTime - resultMs);
    if (started !== undefined) {
      out.started_at = started;
      out.started_at_from = 'event';
    }
  }
  const resultSuccess = result < 0 ? undefined : t.succeeded(result);
  const success = resultSuccess ?? (exec < 0 ? undefined : t.succeeded(exec));
  if (success !== undefined) {
    out.success = success;
    out.success_from = resultSuccess !== undefined ? 'event' : 'span';
  }
  const resultBytes = result < 0 ? undefined : t.number('resultBytes', result);
  if (resultBytes !== undefined) {
    out.result_bytes = resultBytes;
    out.result_bytes_from = 'event';
  }
  const decisionText = decision < 0 ? undefined : t.text('decision', decision);
  if (decisionText) {
    const where = t.kind(decision) === 'tool_decision' ? 'event' : 'span';
    out.decision = decisionText;
    out.decision_from = where;
    const source = t.text('decisionSource', decision);
    if (source !== undefined) {
      out.decision_source = source;
      out.decision_source_from = where;
    }
  }
  if (blocked) {
    let ms = 0;
    for (const b of blocked) ms += t.number('durationMs', b) ?? 0;
    out.blocked_on_user_ms = round3(ms);
    out.blocked_on_user_ms_from = 'span';
  }
  const error = (result < 0 ? undefined : t.text('error', result)) ?? (exec < 0 ? undefined : t.text('error', exec));
  if (error && success === false) out.error_class = error;
  if (out.execution_ms === undefined || out.decision === undefined) {
    const missing = TOOL_FIGURES.filter((k) => out[k] === undefined);
    out.unavailable = missing;
    // A refused tool never runs: its missing execution time is the decision's doing, not a gap.
    out.unavailable_reason = !j.exported ? NO_EXPORT : decisionText === 'reject' && missing.length === 1 ? 'the tool was refused and never ran' : NOT_YET;
  }
  if (first >= 0 || blocked) {
    let count = blocked?.length ?? 0;
    for (let r = first; r >= 0; r = j.toolRows.after(r)) count++;
    // Sized up front: kept in the document, an array grown by pushes keeps room for 16.
    const refs = new Array<Ref>(count);
    let i = 0;
    for (let r = first; r >= 0; r = j.toolRows.after(r)) refs[i++] = refAt(t, r);
    if (blocked) for (const b of blocked) refs[i++] = refAt(t, b);
    out.telemetry_refs = refs;
  }
}

const TOOL_FIGURES = ['execution_ms', 'decision'];

/**
 * A talk's (with its prompt ids) or the conversation's totals, over the events of those prompt
 * ids or of the whole session, summed in landed order so equal inputs give equal floats.
 */
export function writeTotals(out: Record<string, unknown>, j: Joined, promptIds?: string[]): void {
  if (!j.exported) {
    if (!promptIds) {
      out.telemetry = 'unavailable';
      out.telemetry_reason = NO_EXPORT;
    }
    return;
  }
  const { t } = j;
  let cost = 0,
    apiMs = 0,
    toolMs = 0,
    calls = 0,
    errors = 0;
  const add = (r: number) => {
    const kind = t.kind(r);
    if (kind === 'call') {
      calls++;
      cost += t.number('costUsd', r) ?? 0;
      apiMs += t.number('durationMs', r) ?? 0;
    } else if (kind === 'tool_result') toolMs += t.number('durationMs', r) ?? 0;
    else if (kind === 'call_error') errors++;
  };
  if (promptIds) for (const p of promptIds) for (let r = j.byPrompt.first(p); r >= 0; r = j.byPrompt.after(r)) add(r);
  else for (let r = 0; r < t.length; r++) add(r);
  out.cost_usd = round3x(cost);
  out.api_ms = apiMs;
  out.tool_ms = toolMs;
  out.api_calls = calls;
  out.api_errors = errors;
  if (promptIds) out.prompt_ids = promptIds;
}

/**
 * A call's failed attempts, oldest first, each with where it came from. Time lost is what the
 * runtime measured: the failed attempts' own durations when its events or spans state them, else
 * the time from the first attempt's start to the answered one's, from the answered span's
 * attempt marks.
 */
function failedAttempts(failed: number[], retried: RetriedAttempt[], span: number, j: Joined): Record<string, unknown> {
  const { t, times } = j;
  const marks = span < 0 ? undefined : t.attemptStarts(span);
  const starts = new Map((marks ?? []).map((a) => [a.attempt, a.at]));
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
    ...failed.map((r) =>
      clean({
        attempt: t.number('attempt', r),
        status_code: t.number('statusCode', r),
        duration_ms: t.number('durationMs', r),
        error: t.text('error', r),
        from: t.kind(r) === 'call_error' ? 'event' : 'span',
      }),
    ),
  ];
  const out: Record<string, unknown> = { attempts };
  const first = marks?.[0];
  const last = marks?.[marks.length - 1];
  if (failed.length && failed.every((r) => t.number('durationMs', r) !== undefined)) {
    out.attempts_lost_ms = failed.reduce((a, r) => a + t.number('durationMs', r)!, 0);
    out.attempts_lost_from = t.kind(failed[0]!) === 'call_error' ? 'event' : 'span';
  } else if (first && last && last.attempt > first.attempt) {
    out.attempts_lost_ms = Date.parse(last.at) - Date.parse(first.at);
    out.attempts_lost_from = 'span';
  } else {
    out.attempts_lost_unavailable = 'no event or span timed the failed attempts';
  }
  return out;
}
