/**
 * Every counted provider call under a storage root: each conversation's chain folded, the usage
 * rows read from its landed files. A call id seen in two sessions (a forked session's copied
 * history, an older runtime's resume that copied the file) is one call: it is counted where it
 * first ran, and the copies are listed, not added.
 */
import { readFileSync } from 'node:fs';
import { listConversations, loadChain } from '../../storage/chain.js';
import { LandedRows } from '../../storage/landed-rows.js';
import { callsOfChain, type UsageCall } from './calls.js';
import { BUILT_IN_PRICES, overridePrices, type PriceTable } from './pricing.js';

export interface LoadedCalls {
  calls: UsageCall[];
  /** Calls not counted, by reason. */
  uncounted: Record<string, number>;
  /** The same call found again in another session: counted once, where it first ran. */
  copies: { call: string; session: string; counted_in: string }[];
  /** Chains that could not be read, with why. */
  problems: string[];
  conversations: number;
}

export function loadUsageCalls(root: string): LoadedCalls {
  const out: LoadedCalls = { calls: [], uncounted: {}, copies: [], problems: [], conversations: 0 };
  const all: UsageCall[] = [];
  const spans = new Map<string, [number, number]>();
  for (const conversation of listConversations(root)) {
    let fold;
    try {
      fold = loadChain(root, conversation).fold;
    } catch (err) {
      out.problems.push(`${conversation}: its chain does not fold: ${(err as Error).message}`);
      continue;
    }
    if (!fold.rounds) continue;
    out.conversations++;
    const t = (iso: string | undefined) => (iso ? Date.parse(iso) : NaN);
    spans.set(
      conversation,
      [t(fold.head?.session_from_time), t(fold.head?.session_through_time)].map((n) => (Number.isNaN(n) ? Infinity : n)) as [number, number],
    );
    const rows = new LandedRows(root, fold.session ?? conversation);
    const chain = callsOfChain(conversation, fold, rows);
    rows.release();
    all.push(...chain.calls);
    for (const u of chain.uncounted) {
      const reason = u.reason.replace(/\(file \d+, row \d+\)/, '(a landed row)');
      out.uncounted[reason] = (out.uncounted[reason] ?? 0) + 1;
    }
  }
  // Earliest first, so a copy is always the later one. A copied record keeps its time, so a tie goes
  // to the session that began first, then to the one that ended first (a fork holds all its origin
  // did and more), then by id, the same way every run.
  const span = (c: UsageCall) => spans.get(c.conversation) ?? [Infinity, Infinity];
  all.sort(
    (a, b) =>
      (a.time ?? Infinity) - (b.time ?? Infinity) ||
      span(a)[0] - span(b)[0] ||
      span(a)[1] - span(b)[1] ||
      (a.session < b.session ? -1 : a.session > b.session ? 1 : 0),
  );
  const first = new Map<string, UsageCall>();
  for (const c of all) {
    const seen = first.get(c.call);
    if (seen && seen.session !== c.session) out.copies.push({ call: c.call, session: c.session, counted_in: seen.session });
    else if (!seen) first.set(c.call, c);
  }
  out.calls = [...first.values()];
  return out;
}

/** The built-in price table, or it with an override file laid over (see `overridePrices`). */
export function loadPriceTable(overrideFile?: string): PriceTable {
  if (!overrideFile) return BUILT_IN_PRICES;
  let text: string;
  try {
    text = readFileSync(overrideFile, 'utf8');
  } catch (err) {
    throw new Error(`price table ${overrideFile}: cannot be read: ${(err as Error).message}`, { cause: err });
  }
  return overridePrices(BUILT_IN_PRICES, text, overrideFile);
}
