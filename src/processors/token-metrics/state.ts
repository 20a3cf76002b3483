/**
 * What the derivation remembers, under each session's `metrics/` directory:
 *
 * - `derive.state` (JSON, replaced atomically): the landed transcript files already derived,
 *   every call already decided (counted, or left out as unfinished or outside the look-back, so
 *   a call is never counted twice however many files its records reach), and where each series'
 *   last window ends, so windows never overlap.
 * - `receipt-<seq>.json` (write-once): written before a derived request enters the spool, with
 *   the windows it holds and the calls it decided. If saving the state fails after that, the next
 *   pass applies the receipt (and writes the request from it if it is missing) before deriving
 *   anything again, so the state always matches what the spool holds.
 *
 * And at the root, `_metrics/derive.state`: when the root was first derived and the look-back
 * cut-off that applies to every file landed by then, kept across restarts.
 */
import { existsSync, mkdirSync, readFileSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { formatKv, parseKv } from '../../storage/kv-text.js';
import { replaceAtomically, writeOnce } from '../../storage/write-once.js';
import { METRICS_DIR, metricsStateDir, receiptPath } from '../../storage/metrics-spool.js';
import { AszError } from '../../util/errors.js';
import type { Window } from '../../otlp/token-usage.js';
import type { McpWindow } from '../../otlp/mcp-usage.js';
import { mcpSeriesKey } from './mcp-calls.js';

export { metricsStateDir };

export interface SessionMetricsState {
  derived: Set<number>;
  decided: Set<string>;
  /** `model \u0000 query_source` → where the series' last window ends (epoch ms). */
  series: Map<string, number>;
}

export interface Receipt {
  schema: 1;
  seq: number;
  /** The landed file the windows were derived from. */
  file: string;
  /** The spool file name the request went (or goes) to. */
  spool: string;
  calls: string[];
  windows: Window[];
  /** The MCP windows beside the token windows; absent in receipts of files without MCP calls. */
  mcp?: McpWindow[];
}

export class MetricsStateError extends AszError {}

export const seriesKey = (model: string, qs: string) => `${model}\u0000${qs}`;

/** `1-4,7,9-12`: derived sequences, compactly. */
function ranges(seqs: Set<number>): string {
  const s = [...seqs].sort((a, b) => a - b);
  const out: string[] = [];
  for (let i = 0; i < s.length;) {
    let j = i;
    while (j + 1 < s.length && s[j + 1] === s[j]! + 1) j++;
    out.push(i === j ? `${s[i]}` : `${s[i]}-${s[j]}`);
    i = j + 1;
  }
  return out.join(',');
}

function parseRanges(text: string): Set<number> {
  const out = new Set<number>();
  for (const part of text.split(',').filter(Boolean)) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (!m) throw new MetricsStateError(`"${part}" is not a sequence or a range`);
    for (let n = Number(m[1]); n <= Number(m[2] ?? m[1]); n++) out.add(n);
  }
  return out;
}

export function loadSessionState(root: string, session: string): SessionMetricsState {
  const path = join(metricsStateDir(root, session), 'derive.state');
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { derived: new Set(), decided: new Set(), series: new Map() };
    throw err;
  }
  try {
    const j = JSON.parse(text) as { schema: number; derived: string; decided: string[]; series: Record<string, number> };
    if (j.schema !== 1) throw new MetricsStateError(`schema ${j.schema} is not one this build reads`);
    return { derived: parseRanges(j.derived), decided: new Set(j.decided), series: new Map(Object.entries(j.series)) };
  } catch (err) {
    throw new MetricsStateError(`${path}: ${(err as Error).message}`);
  }
}

export function saveSessionState(root: string, session: string, s: SessionMetricsState): void {
  const text = JSON.stringify({ schema: 1, derived: ranges(s.derived), decided: [...s.decided], series: Object.fromEntries(s.series) }) + '\n';
  replaceAtomically(join(metricsStateDir(root, session), 'derive.state'), text);
}

const RECEIPT = /^receipt-(\d{6,})\.json$/;

export function writeReceipt(root: string, session: string, r: Receipt): void {
  const path = receiptPath(root, session, r.seq);
  if (existsSync(path)) unlinkSync(path); // a stale one from a pass whose state was never saved
  writeOnce(path, JSON.stringify(r) + '\n');
}

export function listReceipts(root: string, session: string): { seq: number; path: string }[] {
  let names: string[];
  try {
    names = readdirSync(metricsStateDir(root, session));
  } catch {
    return [];
  }
  return names
    .map((n) => ({ m: RECEIPT.exec(n), n }))
    .filter((x) => x.m)
    .map((x) => ({ seq: Number(x.m![1]), path: join(metricsStateDir(root, session), x.n) }))
    .sort((a, b) => a.seq - b.seq);
}

export function readReceipt(path: string): Receipt {
  try {
    const r = JSON.parse(readFileSync(path, 'utf8')) as Receipt;
    if (r.schema !== 1 || !Array.isArray(r.windows) || !Array.isArray(r.calls)) throw new Error('not a receipt');
    return r;
  } catch (err) {
    throw new MetricsStateError(`${path}: ${(err as Error).message}`);
  }
}

/** A receipt's windows and calls, applied to the state (a series only ever moves forward). */
export function applyReceipt(s: SessionMetricsState, r: Receipt): void {
  s.derived.add(r.seq);
  for (const c of r.calls) s.decided.add(c);
  for (const w of r.windows) {
    const k = seriesKey(w.model, w.query_source);
    s.series.set(k, Math.max(s.series.get(k) ?? 0, w.end_ms));
  }
  for (const w of r.mcp ?? []) s.series.set(mcpSeriesKey(w), Math.max(s.series.get(mcpSeriesKey(w)) ?? 0, w.end_ms));
}

export interface RootMetricsState {
  /** Epoch ms of the root's first derivation. */
  firstAt: number;
  /** Epoch ms: calls before it, in files landed by firstAt, are outside the look-back. Undefined: no bound. */
  cutoff: number | undefined;
}

/** The root's first derivation: recorded once, so the look-back it chose holds across restarts. */
export function rootState(root: string, lookbackMs: number, now: number): RootMetricsState {
  const path = join(root, METRICS_DIR, 'derive.state');
  try {
    const kv = parseKv(readFileSync(path, 'utf8'));
    const firstAt = Date.parse(kv.get('first_at') ?? '');
    const cut = kv.get('cutoff');
    if (!Number.isFinite(firstAt)) throw new MetricsStateError(`${path}: first_at is missing or not a time`);
    return { firstAt, cutoff: cut && cut !== 'none' ? Date.parse(cut) : undefined };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const s: RootMetricsState = { firstAt: now, cutoff: lookbackMs > 0 ? now - lookbackMs : undefined };
  mkdirSync(join(root, METRICS_DIR), { recursive: true });
  replaceAtomically(
    path,
    formatKv([
      ['schema', 1],
      ['first_at', new Date(s.firstAt).toISOString()],
      ['cutoff', s.cutoff === undefined ? 'none' : new Date(s.cutoff).toISOString()],
    ]),
  );
  return s;
}
