/**
 * A usage report from counted calls: filtered (days in the report's time zone, project, model,
 * session), grouped by day, week, month, session, project or 5-hour block, each row with its
 * figures, the share subagents ran, and (with `breakdown`) one line per model. Pure.
 */
import type { UsageCall } from './calls.js';
import { Calendar, type WeekStart } from './calendar.js';
import { FigureSum, type Figures } from './figures.js';
import type { PriceTable } from './pricing.js';

export const REPORT_KINDS = ['daily', 'weekly', 'monthly', 'session', 'project', 'blocks'] as const;
export type ReportKind = (typeof REPORT_KINDS)[number];

/** A block is the 5-hour window the provider's usage limits reset on, as ccusage defines it. */
export const BLOCK_MS = 5 * 60 * 60 * 1000;

export interface ReportOptions {
  kind: ReportKind;
  timeZone: string;
  /** Inclusive days, `YYYY-MM-DD`, in the report's time zone. */
  since?: string;
  until?: string;
  /** A project's name as the runtime filed it, or a part of it. */
  project?: string;
  /** A part of a model's name. */
  model?: string;
  /** One session (or conversation) only. */
  session?: string;
  breakdown?: boolean;
  weekStart?: WeekStart;
  /** Now, for telling an active block; passed in so the report stays pure. */
  now: number;
}

export interface AgentFigures extends Figures {
  stream: string;
  agent?: string;
}

export interface UsageRow extends Figures {
  /** The day, week start, month, session id, project or block start this row sums. */
  key: string;
  first_time?: string;
  last_time?: string;
  /** For session rows: the project it ran in. */
  project?: string;
  /** How much of the row subagents ran (already inside the row's own figures). */
  subagents?: Figures;
  /** For session rows: each subagent stream on its own. */
  agents?: AgentFigures[];
  breakdown?: (Figures & { model: string })[];
  /** For block rows. */
  block?: { start: string; end: string; active: boolean };
}

export interface UsageReport {
  report: ReportKind;
  time_zone: string;
  pricing: { as_of: string; source: string };
  rows: UsageRow[];
  totals: Figures;
}

const iso = (ms: number | undefined) => (ms === undefined ? undefined : new Date(ms).toISOString());

function matches(c: UsageCall, o: ReportOptions, cal: Calendar): boolean {
  if (o.session && c.session !== o.session && c.conversation !== o.session) return false;
  if (o.project && !(c.project ?? '').includes(o.project)) return false;
  if (o.model && !(c.model ?? '').toLowerCase().includes(o.model.toLowerCase())) return false;
  if (o.since || o.until) {
    if (c.time === undefined) return false;
    const day = cal.day(c.time);
    if (o.since && day < o.since) return false;
    if (o.until && day > o.until) return false;
  }
  return true;
}

/** ccusage's blocks: a block starts on the hour of its first call and ends 5 hours on, or earlier at a 5-hour gap. */
function blockKeys(calls: UsageCall[]): Map<UsageCall, { start: number; last: number }> {
  const out = new Map<UsageCall, { start: number; last: number }>();
  let block: { start: number; last: number } | undefined;
  for (const c of calls) {
    if (c.time === undefined) continue;
    if (!block || c.time - block.start > BLOCK_MS || c.time - block.last > BLOCK_MS) {
      const hour = new Date(c.time);
      hour.setUTCMinutes(0, 0, 0);
      block = { start: hour.getTime(), last: c.time };
    }
    block.last = Math.max(block.last, c.time);
    out.set(c, block);
  }
  return out;
}

function keyOf(c: UsageCall, kind: ReportKind, cal: Calendar): string {
  switch (kind) {
    case 'daily':
      return c.time === undefined ? '(no time)' : cal.day(c.time);
    case 'weekly':
      return c.time === undefined ? '(no time)' : cal.week(c.time);
    case 'monthly':
      return c.time === undefined ? '(no time)' : cal.month(c.time);
    case 'session':
      return c.session;
    case 'project':
      return c.project ?? '(no project)';
    case 'blocks':
      return '(no time)';
  }
}

interface Group {
  key: string;
  calls: UsageCall[];
}

export function buildReport(all: UsageCall[], prices: PriceTable, o: ReportOptions): UsageReport {
  const cal = new Calendar(o.timeZone, o.weekStart);
  const calls = all.filter((c) => matches(c, o, cal)).sort((a, b) => (a.time ?? Infinity) - (b.time ?? Infinity));
  const groups = new Map<string, Group>();
  const blocks = o.kind === 'blocks' ? blockKeys(calls) : undefined;
  for (const c of calls) {
    const b = blocks?.get(c);
    const key = b ? new Date(b.start).toISOString() : keyOf(c, o.kind, cal);
    (groups.get(key) ?? groups.set(key, { key, calls: [] }).get(key)!).calls.push(c);
  }
  const rows = [...groups.values()].map((g) => rowOf(g, prices, o));
  if (o.kind === 'session' || o.kind === 'project') rows.sort((a, b) => (a.last_time ?? '').localeCompare(b.last_time ?? '') || a.key.localeCompare(b.key));
  else rows.sort((a, b) => a.key.localeCompare(b.key));
  const totals = new FigureSum();
  for (const c of calls) totals.add(c, prices);
  return { report: o.kind, time_zone: o.timeZone, pricing: { as_of: prices.as_of, source: prices.source }, rows, totals: totals.done() };
}

function rowOf(g: Group, prices: PriceTable, o: ReportOptions): UsageRow {
  const sum = new FigureSum();
  const sub = new FigureSum();
  const agents = new Map<string, { agent?: string; sum: FigureSum }>();
  const models = new Map<string, FigureSum>();
  let first: number | undefined, last: number | undefined;
  for (const c of g.calls) {
    sum.add(c, prices);
    if (c.stream !== 'main') {
      sub.add(c, prices);
      const a = agents.get(c.stream) ?? agents.set(c.stream, { agent: c.agent, sum: new FigureSum() }).get(c.stream)!;
      a.sum.add(c, prices);
    }
    if (o.breakdown) {
      const m = c.model ?? '(no model recorded)';
      (models.get(m) ?? models.set(m, new FigureSum()).get(m)!).add(c, prices);
    }
    if (c.time !== undefined) {
      first = first === undefined ? c.time : Math.min(first, c.time);
      last = last === undefined ? c.time : Math.max(last, c.time);
    }
  }
  const row: UsageRow = { key: g.key, ...sum.done() };
  if (first !== undefined) row.first_time = iso(first);
  if (last !== undefined) row.last_time = iso(last);
  if (o.kind === 'session') {
    const project = g.calls.find((c) => c.project)?.project;
    if (project) row.project = project;
  }
  if (agents.size) {
    row.subagents = sub.done();
    if (o.kind === 'session')
      row.agents = [...agents]
        .map(([stream, a]) => ({ stream, ...(a.agent ? { agent: a.agent } : {}), ...a.sum.done() }))
        .sort((x, y) => x.stream.localeCompare(y.stream));
  }
  if (o.breakdown)
    row.breakdown = [...models].map(([model, s]) => ({ model, ...s.done() })).sort((x, y) => y.cost_usd - x.cost_usd || x.model.localeCompare(y.model));
  if (o.kind === 'blocks' && first !== undefined) {
    const start = Date.parse(g.key);
    row.block = { start: g.key, end: iso(start + BLOCK_MS)!, active: o.now - last! < BLOCK_MS && o.now < start + BLOCK_MS };
  }
  return row;
}
