/**
 * When the next landing round may start, over the memory shared with the request thread
 * (land-pace.ts): rounds are spaced to gather each session's records into fewer files, and
 * paced while requests keep arriving so that answering them keeps the CPU.
 */
import { PACE_DURABLE_END, PACE_LAST_ARRIVAL_MS, PACE_WANTED } from '../land-pace.js';

/**
 * Landing is background work: while requests keep arriving, a round is followed by a pause three
 * times as long (landing takes at most a quarter of the time, the pause capped at MAX_PAUSE_MS),
 * so that the request thread and the client keep the CPU. Landing runs flat out as soon as
 * anything says it must: no request for QUIET_PACE_MS, accepted bytes not yet landed at
 * `paceBelowBytes` (a quarter of max_journal_bytes, at most 64 MiB), or someone waiting for a
 * position to land (the service's pass before it parses, shutdown). So a burst is answered at the
 * journal's speed and lands right after it, and under sustained load the backlog settles at that
 * mark and landing takes all the CPU it needs. (A lower thread priority alone does not do it: the
 * scheduler puts a low-weight thread on a core of its own, where it still runs flat out.)
 */
export const DUTY = 0.25;
export const MAX_PAUSE_MS = 1000;
export const QUIET_PACE_MS = 100;
/** A paced pause is looked at again this often: it ends as soon as landing must hurry. */
export const PACE_POLL_MS = 50;
/**
 * Rounds start at most this often. Under a stream of requests, a round every so often lands
 * each session's records of the whole interval as one file, where rounds back to back would
 * write one small file per session per request round; creating files, taking locks and syncing
 * them is what the disk spends its time on, and it slows the journal's own sync. An idle
 * receiver lands a request at once.
 */
export const MIN_ROUND_MS = 200;

export class Pacing {
  private readonly pace: BigInt64Array;
  private lastRoundAt = 0;
  private lastRoundEndAt = 0;
  private lastRoundMs = 0;
  /** Whether the last round stopped at its read bound with more to read: the next follows without spacing. */
  lastRoundFull = false;

  /** `shared` is the request thread's BigInt64Array of PACE_SLOTS; times are monotonicMs(). */
  constructor(
    shared: SharedArrayBuffer,
    private readonly paceBelowBytes: number,
  ) {
    this.pace = new BigInt64Array(shared);
  }

  /** The synced end as the request thread last stored it (a notice only wakes this thread). */
  sharedDurableEnd(): number {
    return Number(Atomics.load(this.pace, PACE_DURABLE_END));
  }

  /** The pause owed after the last round at `now`: 0 when landing must run flat out. */
  pause(now: number, landedThrough: number): number {
    const backlog = this.sharedDurableEnd() - landedThrough;
    const wanted = Number(Atomics.load(this.pace, PACE_WANTED));
    const quiet = now - Number(Atomics.load(this.pace, PACE_LAST_ARRIVAL_MS)) >= QUIET_PACE_MS;
    if (quiet || wanted > landedThrough || backlog >= this.paceBelowBytes) return 0;
    return Math.min(MAX_PAUSE_MS, this.lastRoundMs * (1 / DUTY - 1));
  }

  /** How long to wait from `now` before the next round may start (≤ 0: start it now). */
  waitBeforeRound(now: number, landedThrough: number): number {
    const spacing = this.lastRoundFull ? 0 : MIN_ROUND_MS;
    return Math.max(this.lastRoundAt + spacing, this.lastRoundEndAt + this.pause(now, landedThrough)) - now;
  }

  roundStarted(now: number): void {
    this.lastRoundAt = now;
  }

  roundEnded(now: number): void {
    this.lastRoundEndAt = now;
    this.lastRoundMs = now - this.lastRoundAt;
  }
}
