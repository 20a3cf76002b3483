/**
 * Parsing every landed session of a root, as `aszcol parse` and `aszcol usage` do: a session whose
 * directories did not move since a parse found it settled is answered from its stamp without
 * reading anything of it; one whose chain covers its landed files is answered from the chain's
 * cached head; any other is parsed. Afterwards the sessions found settled the long way are
 * stamped, so the next parse with nothing new only stats a few directories per session. Many
 * sessions to parse (a first parse) are spread over worker threads (parse-pool.ts). What only the
 * long way needs (the settled check, the summaries, the pool) loads when a session takes it, so a
 * parse with nothing new loads little more than the stamps.
 */
import { PARSER, POLICY } from '../../formats/session-flow/types.js';
import {
  dirTimes,
  loadSettledStamps,
  saveSettledStamps,
  stampHolds,
  trustedBefore,
  watchedDirs,
  type SettledStamp,
  type SettledStamps,
} from '../../storage/settled-stamps.js';
import { availableParallelism } from 'node:os';
import { landingNow, sweepDeadWriters, type LandingNow } from '../../storage/landing-epoch.js';
import { resultFromStamp } from './stamp-answer.js';
import type { DeferredRounds, ParseResult } from './parse.js';

/** The modules of the long way, loaded on the first session that takes it. */
const longWayModules = async () => {
  const [settled, summaries] = await Promise.all([import('./settled.js'), import('../../storage/parse-summary.js')]);
  return { settledChain: settled.settledChain, loadParseSummary: summaries.loadParseSummary, saveParseSummary: summaries.saveParseSummary };
};
type LongWay = Awaited<ReturnType<typeof longWayModules>>;

export interface ParseAllOptions {
  root: string;
  sessions: string[];
  maxRoundBytes: number;
  /** Chains written on the pool's threads get their usage cache there (parse-group.ts), so a usage report reads it instead of folding. */
  usageCache?: boolean;
}

/** One session's outcome: its result, or the error that stopped it (the others go on). */
export type SessionParse = { session: string; result: ParseResult } | { session: string; error: Error };

/**
 * A session nothing landed in since its head round, answered from the chain's cached head and the
 * summary counted at that head, without reading its landed files, index or rounds.
 */
function settledResult({ settledChain, loadParseSummary }: LongWay, root: string, session: string): ParseResult | undefined {
  const settled = settledChain(root, session);
  const summary = settled && loadParseSummary(root, session, settled.headDigest);
  if (!settled || !summary) return undefined;
  return { session, status: 'unchanged', rounds: [], throughSeq: settled.throughSeq, head: settled.head, headDigest: settled.headDigest, summary };
}

/**
 * One session the long way: answered from its settled chain, else parsed (and the summary of a new
 * head kept). Stamps are left alone. The assembly's modules load on the first session that needs them.
 * With `deferred`, new rounds are staged in its batch (parse-group.ts).
 */
export async function parseOne(root: string, session: string, maxRoundBytes: number, deferred?: DeferredRounds): Promise<ParseResult> {
  const m = await longWayModules();
  const cached = settledResult(m, root, session);
  const r = cached ?? (await import('./parse.js')).parseSession({ root, session, maxRoundBytes, ...(deferred ? { deferred } : {}) });
  if (!cached && r.summary && r.headDigest) m.saveParseSummary(root, session, r.headDigest, r.summary);
  return r;
}

/**
 * A stamp for a session, made in the order that keeps it true: its directories' times first, then
 * the full settled check, so whatever changes after the times were read moves one of them. Undefined
 * when a time is too recent to trust or the session is not settled.
 */
function stampOf({ settledChain, loadParseSummary }: LongWay, root: string, session: string, before: number): SettledStamp | 'too recent' | undefined {
  const dirs = dirTimes(root, session, watchedDirs(root, session));
  if (!dirs) return undefined;
  if (dirs.some(([, ms]) => ms >= before)) return 'too recent';
  const settled = settledChain(root, session);
  const summary = settled && loadParseSummary(root, session, settled.headDigest);
  if (!settled || !summary) return undefined;
  return { head: settled.head, head_digest: settled.headDigest, through_seq: settled.throughSeq, summary, dirs };
}

/** How long a parse waits, at most, for its last writes to leave the clock's grain (a fine clock's is 100 ms; a coarse one's is not waited out). */
const RECENT_WAIT_MS = 250;
const RECENT_STEP_MS = 50;

/** Sessions to parse the long way before a pool of threads pays for its start. */
const POOL_FROM = 16;

/** Whether the landing epoch may be recorded: no writer landing at the start or the end, the same epoch and boot at both. */
const quietThroughout = (start: LandingNow, end: LandingNow) =>
  start.writers.length === 0 && end.writers.length === 0 && start.epoch === end.epoch && start.boot === end.boot;

export async function parseAll(o: ParseAllOptions, each: (p: SessionParse) => void = () => {}): Promise<SessionParse[]> {
  const { root } = o;
  // A writer that died landing left its mark: the epoch moves as it goes, and every session is looked at below anyway.
  try {
    sweepDeadWriters(root);
  } catch {
    // A root that refuses writes keeps the mark, and with it every later parse looks at each session.
  }
  const landingAtStart = landingNow(root);
  const old = loadSettledStamps(root, PARSER, POLICY);
  const next: SettledStamps = { parser: PARSER, policy: POLICY, sessions: {} };
  const out = new Map<string, SessionParse>();
  const longWay: string[] = [];
  for (const session of o.sessions) {
    try {
      const stamp = old?.sessions[session];
      if (stamp && stampHolds(root, session, stamp)) {
        next.sessions[session] = stamp;
        out.set(session, { session, result: resultFromStamp(session, stamp) });
      } else longWay.push(session);
    } catch (err) {
      out.set(session, { session, error: err as Error });
    }
  }
  const unstamped: string[] = [];
  const done = (session: string, r: ParseResult | Error) => {
    out.set(session, r instanceof Error ? { session, error: r } : { session, result: r });
    if (!(r instanceof Error) && (r.status === 'unchanged' || r.status === 'written')) unstamped.push(session);
  };
  const threads = Math.min(4, availableParallelism());
  if (longWay.length >= POOL_FROM && threads > 1) {
    const { parseOnThreads } = await import('./parse-pool.js');
    await parseOnThreads(longWay, { root, maxRoundBytes: o.maxRoundBytes, threads, usageCache: o.usageCache }, (s) => parseOne(root, s, o.maxRoundBytes), done);
  } else {
    for (const session of longWay) {
      try {
        done(session, await parseOne(root, session, o.maxRoundBytes));
      } catch (err) {
        done(session, err as Error);
      }
    }
  }
  const results = o.sessions.map((s) => out.get(s)!);
  for (const p of results) each(p);
  const dropped = old ? Object.keys(old.sessions).some((s) => !(s in next.sessions)) : true;
  try {
    if (unstamped.length > 0) {
      const m = await longWayModules();
      let recent: string[] = [];
      const before = trustedBefore(root);
      for (const session of unstamped.sort()) {
        const stamp = stampOf(m, root, session, before);
        if (stamp === 'too recent') recent.push(session);
        else if (stamp) next.sessions[session] = stamp;
      }
      // The sessions this parse wrote last changed within the clock's grain. On a fine-grained
      // clock that passes in a moment: wait once, so the next parse can be answered from the epoch.
      for (let waited = 0; recent.length > 0 && waited < RECENT_WAIT_MS; waited += RECENT_STEP_MS) {
        await new Promise((r) => setTimeout(r, RECENT_STEP_MS));
        const later = trustedBefore(root);
        const still: string[] = [];
        for (const session of recent) {
          const stamp = stampOf(m, root, session, later);
          if (stamp === 'too recent') still.push(session);
          else if (stamp) next.sessions[session] = stamp;
        }
        recent = still;
      }
    }
    // Read after every stamp was made: a writer that landed since the start moved the epoch or is still marked.
    const landingAtEnd = landingNow(root);
    const everySession = o.sessions.every((s) => Object.hasOwn(next.sessions, s));
    if (everySession && quietThroughout(landingAtStart, landingAtEnd)) next.landed = { epoch: landingAtStart.epoch, boot: landingAtStart.boot };
    const recordMoved = JSON.stringify(old?.landed) !== JSON.stringify(next.landed);
    if (unstamped.length > 0 || dropped || recordMoved) saveSettledStamps(root, next);
  } catch {
    // Stamps are a cache: a root that refuses them (read-only, full) only keeps every later parse on the long way.
  }
  return results;
}
