/**
 * Every counted provider call under a storage root: each conversation's chain folded, the usage
 * rows read from its landed files. A call id seen in two sessions (a forked session's copied
 * history, an older runtime's resume that copied the file) is one call: it is counted where it
 * first ran, and the copies are listed, not added.
 */
import { readFileSync } from 'node:fs';
import { listConversations, loadChain } from '../../storage/chain.js';
import { loadIndex, type SessionIndex } from '../../storage/index.js';
import { chainHeadKey, readUsageCache, writeUsageCache } from '../../storage/usage-cache.js';
import { callsOfChain, type UsageCall } from './calls.js';
import { indexedUsageRows, landedUsageRows } from './rows.js';
import type { Fold } from '../../formats/session-flow/fold.js';
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

interface ChainEntry {
  session: string;
  span: [number, number];
  calls: UsageCall[];
  uncounted: string[];
}

/** One chain's calls, from the cache when it names the head, else folded and read (and cached when `writeCache`). */
function chainEntry(root: string, conversation: string, writeCache: boolean): ChainEntry | undefined {
  const head = chainHeadKey(root, conversation);
  if (!head) return undefined;
  const cached = readUsageCache(root, conversation, head) as ChainEntry | undefined;
  if (cached) return cached;
  const entry = usageOfFold(root, conversation, loadChain(root, conversation).fold);
  if (entry && writeCache) writeUsageCache(root, conversation, head, entry);
  return entry;
}

/**
 * A folded chain's counted calls, their usage read from the session's index (`index`, else the one
 * on disk), each row it lacks from the landed file; undefined for a chain with no round. Throws what
 * reading them throws.
 */
export function usageOfFold(root: string, conversation: string, fold: Fold, index?: SessionIndex): ChainEntry | undefined {
  if (!fold.rounds) return undefined;
  const session = fold.session ?? conversation;
  const indexed = index ?? loadIndex(root, session);
  const rows = indexed ? indexedUsageRows(root, session, indexed) : landedUsageRows(root, session);
  const chain = callsOfChain(conversation, fold, rows);
  rows.release();
  const t = (iso: string | undefined) => {
    const n = iso ? Date.parse(iso) : NaN;
    return Number.isNaN(n) ? Infinity : n;
  };
  return {
    session,
    span: [t(fold.head?.session_from_time), t(fold.head?.session_through_time)],
    calls: chain.calls,
    uncounted: chain.uncounted.map((u) => u.reason.replace(/\(file \d+, row \d+\)/, '(a landed row)')),
  };
}

/**
 * Keeps `entry`, worked out by the parse that wrote the chain's head `head`, beside the chain, so the
 * report that follows reads it instead of folding; only while `head` is still the chain's head on disk
 * (another parser may have extended it since).
 */
export function keepUsage(root: string, conversation: string, head: string, entry: ChainEntry | undefined): void {
  if (entry && chainHeadKey(root, conversation) === head) writeUsageCache(root, conversation, head, entry);
}

/**
 * Every counted call under the root. `writeCache`: keep each chain's calls beside it for the next
 * report (the CLI does; the view, which only reads the root, does not).
 */
export function loadUsageCalls(root: string, opts: { writeCache?: boolean } = {}): LoadedCalls {
  const out: LoadedCalls = { calls: [], uncounted: {}, copies: [], problems: [], conversations: 0 };
  const all: UsageCall[] = [];
  const spans = new Map<string, [number, number]>();
  for (const conversation of listConversations(root)) {
    let entry;
    try {
      entry = chainEntry(root, conversation, !!opts.writeCache);
    } catch (err) {
      out.problems.push(`${conversation}: its chain does not fold: ${(err as Error).message}`);
      continue;
    }
    if (!entry) continue;
    out.conversations++;
    // JSON keeps no Infinity: a cached span reads back null.
    spans.set(conversation, entry.span.map((n) => (typeof n === 'number' ? n : Infinity)) as [number, number]);
    all.push(...entry.calls);
    for (const reason of entry.uncounted) out.uncounted[reason] = (out.uncounted[reason] ?? 0) + 1;
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
