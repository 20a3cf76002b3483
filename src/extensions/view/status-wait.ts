/**
 * `/api/status?after=N`: the page waits on the server instead of polling it, and is answered as
 * soon as the generation differs from N. Inside the service the pass says when to look (after its
 * parse stage wrote rounds); `aszcol view` on its own looks on a timer while anyone waits. A wait
 * is bounded, so a proxy or a sleeping laptop never holds a request forever.
 */

/** The longest a request waits before it is answered with the generation unchanged. */
export const MAX_WAIT_MS = 25_000;

interface Waiter {
  after: number;
  done: () => void;
  timer: NodeJS.Timeout;
}

export class StatusWaits {
  private readonly waiters = new Set<Waiter>();
  private recheck: NodeJS.Timeout | undefined;

  constructor(
    /** The generation now: reading it lists the heads, so it is read once per look, not per waiter. */
    private readonly generation: () => number,
    /** How often to look while anyone waits; undefined: only when `look` is called (the service's passes). */
    private readonly recheckMs?: number,
  ) {}

  /** Resolves once the generation differs from `after`, or after `maxMs`; `cancel` drops the wait (the client left). */
  wait(after: number, maxMs = MAX_WAIT_MS): { done: Promise<void>; cancel: () => void } {
    if (this.generation() !== after) return { done: Promise.resolve(), cancel: () => {} };
    let waiter!: Waiter;
    const done = new Promise<void>((res) => {
      waiter = {
        after,
        done: () => {
          clearTimeout(waiter.timer);
          this.waiters.delete(waiter);
          res();
        },
        timer: setTimeout(() => waiter.done(), maxMs),
      };
    });
    this.waiters.add(waiter);
    this.arm();
    return { done, cancel: () => waiter.done() };
  }

  /** Looks at the generation once and answers every waiter it moved for. */
  look(): void {
    if (this.waiters.size === 0) return;
    const now = this.generation();
    for (const w of [...this.waiters]) if (w.after !== now) w.done();
  }

  private arm(): void {
    if (this.recheckMs === undefined || this.recheck) return;
    this.recheck = setInterval(() => {
      this.look();
      if (this.waiters.size === 0) {
        clearInterval(this.recheck);
        this.recheck = undefined;
      }
    }, this.recheckMs);
    this.recheck.unref();
  }

  /** Answers everyone now (shutting down). */
  close(): void {
    for (const w of [...this.waiters]) w.done();
    clearInterval(this.recheck);
    this.recheck = undefined;
  }
}
