/**
 * Landing metrics requests in the `_metrics/` spool (storage/metrics-spool.ts): one write-once
 * file per request, numbered from the spool's counter, under the spool's `.lock`. The counter is
 * kept here and written to `spool.state` when asked (flush) or when another writer is about; it is
 * not the authority: whenever spool.state changed under this thread, the spool is counted again
 * and the counter raised above every number on disk and above spool.state's.
 */
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { FileLock } from '../../../storage/lock.js';
import { parseKv } from '../../../storage/kv-text.js';
import { ANY_SPOOL_FILE, MetricsSpool } from '../../../storage/metrics-spool.js';
import { listDir } from '../../../storage/layout.js';
import { spoolStateText } from '../../../storage/spool-state.js';
import { ensureDirDurable, removeDeadTemporaries, replaceAtomically } from '../../../storage/write-once.js';
import { compactStamp } from '../../../util/time.js';
import type { LandLog } from './messages.js';
import { readTextOrEmpty } from './read-text.js';
import type { Round } from './round.js';
import type { SpoolWork } from './waiting-work.js';

/** A received spool file's temporary name as write-once.ts makes it, with the writer's pid. */
const RECEIVED_TEMP = /^\.tmp-metrics-.*-otlp\.pb-\d+-[0-9a-f]+$/;

export class SpoolWriter {
  readonly spool: MetricsSpool;
  /** The next request's number. */
  nextSeq = 1;
  /** Bytes of every spool file, as last counted plus what landed since. */
  bytes = 0;
  /** spool.state as this thread last read or wrote it. */
  private stateText = '';
  /** Numbers issued since spool.state was last written. */
  private dirty = false;

  constructor(
    root: string,
    private readonly log: LandLog,
  ) {
    this.spool = new MetricsSpool(root);
  }

  get dir(): string {
    return this.spool.dir;
  }

  /** Counts the spool and clears temporary files a crashed receiver left behind; throws when the lock stays held. */
  open(waitMs: number): void {
    mkdirSync(this.dir, { recursive: true });
    const lock = new FileLock(this.spool.lockPath);
    if (!lock.acquireWithinSync(waitMs)) throw new Error(`the metrics spool ${this.dir} is locked by another collector (${lock.path}); try again`);
    try {
      // Only the receiver's own temporaries: a derivation writing into the same spool keeps its own.
      removeDeadTemporaries(this.dir, (name) => RECEIVED_TEMP.test(name));
      lock.removeDeadLeftovers();
      this.scan();
    } finally {
      lock.release();
    }
  }

  /** Counts the spool's bytes again and raises the counter above spool.state's and every number on disk. */
  scan(): void {
    let total = 0;
    let next = Number(parseKv(readTextOrEmpty(this.spool.statePath)).get('next_seq') ?? 1) || 1;
    for (const name of listDir(this.dir)) {
      if (!ANY_SPOOL_FILE.test(name)) continue;
      const seq = MetricsSpool.receivedSeq(name);
      if (seq !== undefined) next = Math.max(next, seq + 1);
      try {
        total += statSync(this.spool.path(name)).size;
      } catch {
        /* removed meanwhile */
      }
    }
    this.bytes = total;
    this.nextSeq = Math.max(this.nextSeq, next);
    this.stateText = readTextOrEmpty(this.spool.statePath);
  }

  /**
   * Adds every waiting metrics request to the round, under the spool's lock (held until the round
   * is done). Returns what to do once the round has landed (which gives back the requests that did
   * not land), or undefined when the lock is held elsewhere.
   */
  prepare(round: Round, work: SpoolWork[]): (() => SpoolWork[]) | undefined {
    const lockPath = this.spool.lockPath;
    ensureDirDurable(this.dir);
    // A lock file already there means another writer is or was here: count again, and leave spool.state current.
    const contended = existsSync(lockPath);
    const lock = new FileLock(lockPath);
    if (!lock.tryAcquire()) return undefined;
    try {
      if (contended || readTextOrEmpty(this.spool.statePath) !== this.stateText) this.scan();
    } catch (err) {
      lock.release();
      throw err;
    }
    const failed: SpoolWork[] = [];
    let firstError: Error | undefined;
    for (const w of work) {
      const seq = this.nextSeq++;
      this.dirty = true;
      round.add(this.spool.path(MetricsSpool.receivedName(compactStamp(w.receivedAtNs), seq)), [w.body], (err) => {
        if (err) {
          failed.push(w);
          firstError ??= err;
        } else this.bytes += w.body.length;
      });
    }
    return () => {
      try {
        if (contended) this.writeState();
      } catch {
        /* written again at the next flush */
      } finally {
        lock.release();
      }
      if (failed.length)
        this.log(
          'error',
          `could not land ${failed.length} metrics requests in ${this.dir}; they stay in the journal and are tried again: ${firstError?.message ?? ''}`,
          { count: failed.length },
        );
      return failed;
    };
  }

  /** Writes spool.state if numbers were issued since it was last written (unless the lock is busy). */
  flush(): void {
    if (!this.dirty) return;
    const lock = new FileLock(this.spool.lockPath);
    if (!lock.tryAcquire()) return;
    try {
      if (readTextOrEmpty(this.spool.statePath) !== this.stateText) this.scan();
      this.writeState();
    } finally {
      lock.release();
    }
  }

  private writeState(): void {
    const text = spoolStateText(this.stateText, this.nextSeq);
    replaceAtomically(this.spool.statePath, text, { sync: false });
    this.stateText = text;
    this.dirty = false;
  }
}
