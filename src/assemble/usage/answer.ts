/**
 * One usage answer, the same for `aszcol usage`, `GET /api/usage` and the page: the parameters
 * read and checked from strings, the report built over the root's counted calls, and what was
 * not counted (with why) beside it.
 */
import { checkTimeZone, parseDay } from './calendar.js';
import { loadUsageCalls, type LoadedCalls } from './load.js';
import type { PriceTable } from './pricing.js';
import { buildReport, REPORT_KINDS, type ReportKind, type ReportOptions, type UsageReport } from './report.js';

/** The parameters as a command line or a query string gives them. */
export interface UsageParams {
  report?: string;
  since?: string;
  until?: string;
  project?: string;
  model?: string;
  id?: string;
  breakdown?: boolean;
  timezone?: string;
  startOfWeek?: string;
}

export interface UsageAnswer extends UsageReport {
  /** Calls the report could not count, by reason: never folded into a zero. */
  uncounted: Record<string, number>;
  /** Calls found again in a later session (a fork's or an old resume's copied history), counted once. */
  copied_calls: number;
  problems: string[];
  conversations: number;
}

/** Checks every parameter; a bad one throws with its name and value. */
export function reportOptions(p: UsageParams, now: number): ReportOptions {
  const kind = (p.report ?? 'daily') as ReportKind;
  if (!REPORT_KINDS.includes(kind)) throw new Error(`report "${p.report}": expected one of ${REPORT_KINDS.join(', ')}`);
  if (p.id !== undefined && kind !== 'session') throw new Error('--id names one session: use it with the session report');
  const weekStart = p.startOfWeek ?? 'sunday';
  if (weekStart !== 'sunday' && weekStart !== 'monday') throw new Error(`--start-of-week "${weekStart}": expected sunday or monday`);
  const o: ReportOptions = { kind, timeZone: checkTimeZone(p.timezone || undefined), now, weekStart, breakdown: !!p.breakdown };
  if (p.since) o.since = parseDay(p.since, '--since');
  if (p.until) o.until = parseDay(p.until, '--until');
  if (o.since && o.until && o.since > o.until) throw new Error(`--since ${o.since} is after --until ${o.until}`);
  if (p.project) o.project = p.project;
  if (p.model) o.model = p.model;
  if (p.id) o.session = p.id;
  return o;
}

export function answerFrom(loaded: LoadedCalls, prices: PriceTable, o: ReportOptions): UsageAnswer {
  return {
    ...buildReport(loaded.calls, prices, o),
    uncounted: loaded.uncounted,
    copied_calls: loaded.copies.length,
    problems: loaded.problems,
    conversations: loaded.conversations,
  };
}

export function usageAnswer(root: string, prices: PriceTable, o: ReportOptions): UsageAnswer {
  return answerFrom(loadUsageCalls(root), prices, o);
}
