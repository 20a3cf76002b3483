import { readFailedAttempt, type FailedAttempt } from '../adapters/claude-code/retry-figures.js';
import type { Ref } from '../formats/session-flow/types.js';
import type { IndexEntry } from '../storage/index.js';
import { has, refOf, type AssemblyContext } from './context.js';

export interface RetriedAttempt extends FailedAttempt {
  at: Ref;
  /** When the runtime recorded the failure, ms since the epoch. */
  time?: number;
}

/** A runaway chain of failures is cut here; the runtime itself gives up after ten retries. */
const MAX_CHAIN = 64;

/**
 * The failed attempts before each provider call: the `api_error` records (`failures`, in landed
 * order) in the parent chain right above the call's first record, oldest first. Joined by the
 * records' own parent ids, never by time; a failure whose chain reaches no call stays an
 * `error.api` step only. With no failure in the session, no record is walked.
 */
export function retriesOfCalls(ctx: AssemblyContext, failures: IndexEntry[]): Map<string, RetriedAttempt[]> {
  const out = new Map<string, RetriedAttempt[]>();
  if (!failures.length) return out;
  const failureIds = new Set(failures.map((f) => f.id).filter((id): id is string => id !== undefined));
  for (const s of ctx.streams.values()) {
    for (const e of s.records) {
      const call = e.call;
      if (!call || out.has(call) || !e.parent || !failureIds.has(e.parent)) continue;
      const chain: IndexEntry[] = [];
      for (let p = ctx.byId.get(e.parent); p && has(p, 'api_error') && chain.length < MAX_CHAIN; p = p.parent ? ctx.byId.get(p.parent) : undefined)
        chain.push(p);
      out.set(call, chain.reverse().map(attemptOf));
    }
  }
  return out;
}

function attemptOf(e: IndexEntry): RetriedAttempt {
  const a: RetriedAttempt = { ...(e.figures ? readFailedAttempt(e.figures) : {}), at: refOf(e) };
  if (e.time !== undefined) a.time = e.time;
  return a;
}
