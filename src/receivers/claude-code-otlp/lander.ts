/**
 * The landing thread (land-worker.ts), seen from the request thread: it is started with where
 * the journal stands, told each time the journal's synced end moves, and reports how far it has
 * landed. `landed(position)` waits until everything before a position is in the storage root.
 */
import { Worker } from 'node:worker_threads';
import type { LandProgress, LandWorkerInit, WorkerMessage, WorkerRequest } from './land-worker.js';
import type { ReceiverLog } from './log.js';
import { PACE_DURABLE_END, PACE_LAST_ARRIVAL_MS, PACE_SLOTS, PACE_WANTED, monotonicMs } from './land-pace.js';

export class Lander {
  private worker?: Worker;
  private failure?: Error;
  private closing = false;
  private rescan?: Promise<void>;
  private rescannedAt = 0;
  private durableEnd = 0;
  private noticeOut = false;
  private nextId = 1;
  private readonly replies = new Map<number, { resolve: () => void; reject: (e: Error) => void }>();
  private waiters: { position: number; resolve: (landed: boolean) => void }[] = [];
  landedThrough: number;
  spoolBytes = 0;
  waitingSessions = 0;
  /** Set while landing is failing for a reason that may pass (a full or read-only disk): the thread's last word on it. */
  failing: { message: string; sinceMs: number } | undefined;
  /** Called with each progress report (counts are increments). */
  onProgress: (p: LandProgress) => void = () => {};

  private readonly pace: BigInt64Array;

  constructor(
    private readonly init: Omit<LandWorkerInit, 'pace'>,
    private readonly log: ReceiverLog,
  ) {
    this.landedThrough = init.from;
    this.pace = new BigInt64Array(new SharedArrayBuffer(PACE_SLOTS * 8));
    Atomics.store(this.pace, PACE_DURABLE_END, BigInt(init.to));
  }

  /** Starts the thread; resolves once it has opened the spool. */
  start(): Promise<void> {
    return new Promise((resolve, reject) => {
      const w = new Worker(new URL('./land-worker.js', import.meta.url), {
        workerData: { ...this.init, pace: this.pace.buffer as SharedArrayBuffer } satisfies LandWorkerInit,
      });
      this.worker = w;
      w.on('message', (m: WorkerMessage) => {
        switch (m.op) {
          case 'ready':
            this.spoolBytes = m.spoolBytes;
            resolve();
            break;
          case 'failed':
            reject(new Error(m.message));
            break;
          case 'progress':
            // The notice was taken; tell the thread what was synced since, if anything.
            this.noticeOut = false;
            if (this.durableEnd > m.readThrough) this.durable(this.durableEnd);
            this.landedThrough = m.landedThrough;
            this.spoolBytes = m.spoolBytes;
            this.waitingSessions = m.waitingSessions;
            this.failing = m.failing;
            this.onProgress(m);
            this.waiters = this.waiters.filter((x) => (x.position <= m.landedThrough ? (x.resolve(true), false) : true));
            // Landing is failing (the disk is full, say): whoever waits is told now, not at their timeout.
            if (m.failing) this.wakeAll();
            break;
          case 'reply': {
            const r = this.replies.get(m.id);
            this.replies.delete(m.id);
            if (m.ok) r?.resolve();
            else r?.reject(new Error(m.message));
            break;
          }
          case 'log':
            this.log(m.level, m.msg, m.fields);
            break;
        }
      });
      w.on('error', (err) => {
        this.fail(err);
        reject(err);
      });
      w.on('exit', (code) => {
        if (code !== 0 && !this.closing) this.fail(new Error(`the landing thread exited with code ${code}`));
      });
    });
  }

  private fail(err: Error): void {
    // A landing thread that dies is a bug; what it had not landed stays in the journal for the next start.
    this.failure ??= err;
    this.log('error', `the OTLP receiver's landing thread failed; accepted requests stay in the journal until the next start: ${err.message}`, {
      error: err.stack,
    });
    for (const r of this.replies.values()) r.reject(err);
    this.replies.clear();
    this.wakeAll();
  }

  /** Nothing more will land: whoever waits for a position is told now, not at their timeout. */
  private wakeAll(): void {
    for (const w of this.waiters.splice(0)) w.resolve(false);
  }

  get failed(): Error | undefined {
    return this.failure;
  }

  /**
   * The journal is synced through `end`. One notice is outstanding at a time: the thread reads
   * up to the latest end it was told each round and reports after every round, so a notice per
   * sync (thousands a second under load) would only cost both threads a message each.
   */
  durable(end: number): void {
    this.durableEnd = end;
    Atomics.store(this.pace, PACE_DURABLE_END, BigInt(end));
    if (this.noticeOut || this.failure || !this.worker) return;
    this.noticeOut = true;
    this.worker.postMessage({ op: 'durable', end } satisfies WorkerRequest);
  }

  /** A request was taken: landing paces itself while they keep coming. */
  arrived(): void {
    Atomics.store(this.pace, PACE_LAST_ARRIVAL_MS, BigInt(monotonicMs()));
  }

  /**
   * Has the spool counted again (an exporter may have removed sent files); resolves once
   * `spoolBytes` holds the new count. Requests that come while one count runs share it, and
   * within a second of the last count that count stands: a spool of many files takes a while
   * to count, and the landing thread does it.
   */
  rescanSpool(): Promise<void> {
    if (this.failure || !this.worker || (!this.rescan && Date.now() - this.rescannedAt < 1000)) return Promise.resolve();
    this.rescan ??= new Promise<void>((resolve) => {
      const id = this.nextId++;
      const done = () => {
        this.rescan = undefined;
        this.rescannedAt = Date.now();
        resolve();
      };
      this.replies.set(id, { resolve: done, reject: done });
      this.worker!.postMessage({ op: 'rescan-spool', id } satisfies WorkerRequest);
    });
    return this.rescan;
  }

  /** Resolves when everything before `position` has landed (true), or after `timeoutMs` or while landing is failing (false). */
  landed(position: number, timeoutMs: number): Promise<boolean> {
    if (this.landedThrough >= position) return Promise.resolve(true);
    if (this.failure || this.failing) return Promise.resolve(false);
    // Someone waits: landing stops pacing itself until it is past this position.
    if (position > Number(Atomics.load(this.pace, PACE_WANTED))) Atomics.store(this.pace, PACE_WANTED, BigInt(position));
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== waiter);
        resolve(false);
      }, timeoutMs);
      const waiter = {
        position,
        resolve: (landed: boolean) => {
          clearTimeout(timer);
          resolve(landed);
        },
      };
      this.waiters.push(waiter);
    });
  }

  /** Writes the state files still pending (cursors, session.state, spool.state). */
  flush(): Promise<void> {
    if (this.failure || !this.worker) return Promise.resolve();
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.replies.set(id, { resolve, reject });
      this.worker!.postMessage({ op: 'flush', id } satisfies WorkerRequest);
    });
  }

  /** Writes the pending state files (waiting at most `timeoutMs`) and stops the thread. */
  async close(timeoutMs = 5000): Promise<void> {
    try {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<'late'>((r) => (timer = setTimeout(() => r('late'), Math.max(0, timeoutMs))));
      const outcome = await Promise.race([this.flush().then(() => 'done' as const), late]).finally(() => clearTimeout(timer));
      if (outcome === 'late')
        this.log('warn', 'the OTLP receiver stopped before its state files were written; they are rebuilt from the landed files at the next start');
    } catch (err) {
      this.log(
        'warn',
        `the OTLP receiver could not write its state files at shutdown; they are rebuilt from the landed files at the next start: ${(err as Error).message}`,
      );
    } finally {
      this.closing = true;
      await this.worker?.terminate();
      this.worker = undefined;
      this.wakeAll();
    }
  }
}
