/**
 * `max_bytes_per_minute`: a token bucket on the encoded size of each request. It holds at most a
 * minute's budget, refills continuously, and starts full, so a pass sending a few new files never
 * waits. A request larger than the whole budget waits for a full bucket and leaves it empty. A
 * receiver asking us to slow down (429, RESOURCE_EXHAUSTED) empties it.
 */
export interface Clock {
  now(): number;
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const realClock: Clock = {
  now: () => performance.now(),
  sleep: (ms, signal) =>
    new Promise<void>((res) => {
      if (signal?.aborted) return res();
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        signal?.removeEventListener('abort', done);
        res();
      }
      signal?.addEventListener('abort', done, { once: true });
    }),
};

export class TokenBucket {
  private tokens: number;
  private at: number;

  /** `perMinute` 0 is no limit. */
  constructor(
    readonly perMinute: number,
    private readonly clock: Clock = realClock,
  ) {
    this.tokens = perMinute;
    this.at = clock.now();
  }

  get limited(): boolean {
    return this.perMinute > 0;
  }

  private refill(): void {
    const now = this.clock.now();
    this.tokens = Math.min(this.perMinute, this.tokens + ((now - this.at) * this.perMinute) / 60_000);
    this.at = now;
  }

  /** How long a request of `n` bytes would wait now (ms). */
  waitFor(n: number): number {
    if (!this.limited) return 0;
    this.refill();
    const need = Math.min(n, this.perMinute);
    return this.tokens >= need ? 0 : Math.ceil(((need - this.tokens) * 60_000) / this.perMinute);
  }

  /**
   * Waits until `n` bytes may go, then takes them; resolves with how long it waited (ms), or
   * `undefined` when `signal` aborted the wait (nothing taken).
   */
  async take(n: number, signal?: AbortSignal): Promise<number | undefined> {
    if (!this.limited) return 0;
    let waited = 0;
    for (;;) {
      const ms = this.waitFor(n);
      if (ms === 0) break;
      const t0 = this.clock.now();
      await this.clock.sleep(ms, signal);
      waited += this.clock.now() - t0;
      if (signal?.aborted) return undefined;
    }
    this.tokens = Math.max(0, this.tokens - n);
    return waited;
  }

  /** The receiver asked us to slow down: the next request waits for the budget to refill. */
  empty(): void {
    this.refill();
    this.tokens = 0;
  }
}
