/**
 * Recognises an exact retry: a request whose wire bytes (and signal and format) equal one seen in
 * the recent window. An OTLP exporter retries with the same bytes when an answer was lost or
 * late; landing them again would double every record and token count. A retry of a request that
 * succeeded is answered with the same success and lands nothing; one that arrives while the
 * original is still being journaled waits for the original's outcome. A request is remembered
 * only once it was accepted whole (it is journaled whole or not at all); after a failure nothing
 * is remembered, so the retry is taken like a new request.
 *
 * The window is bounded in both count and age, so memory stays flat under any load.
 */
import { hash } from 'node:crypto';

export interface RememberedOutcome {
  rejected: number;
  message: string;
}

interface Entry {
  at: number;
  outcome?: RememberedOutcome;
  inflight?: Promise<RememberedOutcome | undefined>;
}

export class RetryWindow {
  private readonly entries = new Map<string, Entry>();

  constructor(
    private readonly maxEntries = 8192,
    private readonly maxAgeMs = 10 * 60_000,
  ) {}

  static key(parts: string, body: Uint8Array): string {
    // The parts (signal, format) are short and free of NULs: they prefix the digest rather than enter it.
    return `${parts}\u0000${hash('sha256', body, 'base64')}`;
  }

  private live(key: string): Entry | undefined {
    const e = this.entries.get(key);
    if (e && !e.inflight && Date.now() - e.at > this.maxAgeMs) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  /** A finished success for this key, or the promise of one in flight. */
  lookup(key: string): { outcome: RememberedOutcome } | { inflight: Promise<RememberedOutcome | undefined> } | undefined {
    const e = this.live(key);
    if (e?.outcome) return { outcome: e.outcome };
    if (e?.inflight) return { inflight: e.inflight };
    return undefined;
  }

  /** Marks a request as being landed; `finish` must be called with its outcome. */
  begin(key: string): (outcome: RememberedOutcome | undefined) => void {
    let done!: (o: RememberedOutcome | undefined) => void;
    const inflight = new Promise<RememberedOutcome | undefined>((r) => (done = r));
    const entry: Entry = { at: Date.now(), inflight };
    this.entries.delete(key); // re-insert: Map order is the eviction order
    this.entries.set(key, entry);
    this.evict();
    return (outcome) => {
      entry.inflight = undefined;
      entry.at = Date.now();
      if (outcome) entry.outcome = outcome;
      else this.entries.delete(key);
      done(outcome);
    };
  }

  private evict(): void {
    while (this.entries.size > this.maxEntries) {
      const [oldest, e] = this.entries.entries().next().value as [string, Entry];
      if (e.inflight) {
        // Never forget a request in flight; move it to the back.
        this.entries.delete(oldest);
        this.entries.set(oldest, e);
        if ([...this.entries.values()].every((x) => x.inflight !== undefined)) break;
        continue;
      }
      this.entries.delete(oldest);
    }
  }

  get size(): number {
    return this.entries.size;
  }
}
