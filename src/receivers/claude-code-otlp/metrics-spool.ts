/**
 * The `_metrics/` spool: every metrics request lands as received, one write-once file per
 * request, `metrics-<received-at>-<seq>-otlp.pb`, holding the ExportMetricsServiceRequest's
 * protobuf bytes (a JSON request is converted to protobuf first, so the spool has one format).
 * `_metrics/spool.state` holds the next number; both are written under `_metrics/.lock`, which
 * the metrics derivation also takes.
 *
 * Requests that arrive while a batch is being synced land together in the next batch: one lock,
 * one spool.state write and one directory sync per batch, the files' fsyncs in parallel.
 */
import { existsSync, mkdirSync, readFileSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { FileLock } from '../../storage/lock.js';
import { formatKv, parseKv } from '../../storage/kv-text.js';
import { listDir } from '../../storage/layout.js';
import { replaceAtomically } from '../../storage/write-once.js';
import { compactStamp, nowNs } from '../../util/time.js';
import { OtlpRequestError } from '../../otlp/codec.js';
import { acquireWithin, storageError, syncDir, writeOnceDurable } from './durable.js';

export const METRICS_DIR = '_metrics';
/** `metrics-<received-at>-<seq>-otlp.pb`: what this receiver lands. */
export const SPOOL_NAME = /^metrics-(\d{8}T\d{6}\.\d{9}Z)-(\d{6,})-otlp\.pb$/;
/** Every spooled request file, received or derived; all of them count toward max_spool_bytes. */
const ANY_SPOOL_FILE = /^metrics-.*\.pb$/;

export const spoolName = (stamp: string, seq: number) => `metrics-${stamp}-${String(seq).padStart(6, '0')}-otlp.pb`;

export interface SpooledRequest {
  seq: number;
  path: string;
}

interface Pending {
  bytes: Buffer;
  resolve: (r: SpooledRequest) => void;
  reject: (e: Error) => void;
}

const MAX_BATCH_FILES = 256;
/** How often the spool's size may be read again from disk (files removed by someone else count only then). */
const RESCAN_MS = 1000;

export class MetricsSpool {
  readonly dir: string;
  private readonly lockPath: string;
  private readonly statePath: string;
  private queue: Pending[] = [];
  private running = false;
  private nextSeq = 0;
  private stateText: string | undefined;
  private spoolBytes = 0;
  private scannedAt = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(root: string, private readonly opts: { maxSpoolBytes: number; lockWaitMs: number }) {
    this.dir = join(root, METRICS_DIR);
    this.lockPath = join(this.dir, '.lock');
    this.statePath = join(this.dir, 'spool.state');
  }

  /** Bytes in the spool as last counted. */
  get bytes(): number {
    return this.spoolBytes;
  }

  /** Reads the spool's size and clears temporary files a crashed writer of ours left behind. */
  async open(): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    const lock = new FileLock(this.lockPath);
    await acquireWithin(lock, this.opts.lockWaitMs, 'the metrics spool');
    try {
      for (const name of listDir(this.dir)) {
        const m = /^\.tmp-metrics-.*-otlp\.pb-(\d+)-[0-9a-f]+$/.exec(name);
        if (m && !alive(Number(m[1]))) try { unlinkSync(join(this.dir, name)); } catch { /* gone */ }
      }
      this.rescan();
    } finally {
      lock.release();
    }
  }

  private rescan(): void {
    let total = 0;
    for (const name of listDir(this.dir)) {
      if (!ANY_SPOOL_FILE.test(name)) continue;
      try { total += statSync(join(this.dir, name)).size; } catch { /* removed meanwhile */ }
    }
    this.spoolBytes = total;
    this.scannedAt = Date.now();
  }

  /** Resolves once the request is durably in the spool; rejects with an OtlpRequestError. */
  land(bytes: Buffer): Promise<SpooledRequest> {
    const p = new Promise<SpooledRequest>((resolve, reject) => this.queue.push({ bytes, resolve, reject }));
    if (!this.running) void this.drain();
    return p;
  }

  idle(): Promise<void> {
    if (!this.running && this.queue.length === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private async drain(): Promise<void> {
    this.running = true;
    try {
      while (this.queue.length) {
        const batch = this.queue.splice(0, MAX_BATCH_FILES);
        try {
          await this.landBatch(batch);
        } catch (err) {
          this.stateText = undefined;
          const e = storageError(err, 'the metrics request');
          for (const p of batch) p.reject(e);
        }
      }
    } finally {
      this.running = false;
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private async landBatch(batch: Pending[]): Promise<void> {
    if (existsSync(this.lockPath)) this.stateText = undefined; // another writer is or was here
    const lock = new FileLock(this.lockPath);
    await acquireWithin(lock, this.opts.lockWaitMs, 'the metrics spool');
    try {
      mkdirSync(this.dir, { recursive: true });
      // Requests past the size limit are refused now; the rest of the batch still lands.
      const max = this.opts.maxSpoolBytes;
      const incoming = batch.reduce((n, p) => n + p.bytes.length, 0);
      if (max > 0 && this.spoolBytes + incoming > max && Date.now() - this.scannedAt >= RESCAN_MS) this.rescan();
      const accepted: Pending[] = [];
      let room = max > 0 ? max - this.spoolBytes : Infinity;
      for (const p of batch) {
        if (p.bytes.length <= room) {
          accepted.push(p);
          room -= p.bytes.length;
        } else {
          p.reject(new OtlpRequestError('spool_full', `the metrics spool ${this.dir} holds ${this.spoolBytes} bytes, at its limit of ${max} (max_spool_bytes); try again later`, 30));
        }
      }
      if (accepted.length === 0) return;

      this.ensureSeq();
      const ns = nowNs();
      const stamp = compactStamp(ns);
      const landed = accepted.map((p) => ({ p, seq: this.nextSeq++ }));
      const paths = landed.map(({ seq }) => join(this.dir, spoolName(stamp, seq)));
      const results = await Promise.allSettled(landed.map(({ p }, i) => writeOnceDurable(paths[i]!, p.bytes)));
      await syncDir(this.dir);
      // Numbers are issued even for a file that failed: spool.state only moves forward. No fsync:
      // the next number is raised above every file in the spool whenever this state is not ours.
      const text = formatKv([['schema', 1], ['next_seq', this.nextSeq]]);
      replaceAtomically(this.statePath, text, { sync: false });
      this.stateText = text;
      for (const [i, r] of results.entries()) {
        const { p, seq } = landed[i]!;
        if (r.status === 'fulfilled') {
          this.spoolBytes += p.bytes.length;
          p.resolve({ seq, path: paths[i]! });
        } else {
          p.reject(storageError(r.reason, 'the metrics request'));
        }
      }
    } finally {
      lock.release();
    }
  }

  /**
   * The next number: what spool.state says, raised above every number already in the spool, read
   * again from disk whenever spool.state is not what this process last wrote.
   */
  private ensureSeq(): void {
    let text = '';
    try { text = readFileSync(this.statePath, 'utf8'); } catch { /* none yet */ }
    if (this.stateText !== undefined && text === this.stateText) return;
    let next = Number(parseKv(text).get('next_seq') ?? 1) || 1;
    for (const name of listDir(this.dir)) {
      const m = SPOOL_NAME.exec(name);
      if (m) next = Math.max(next, Number(m[2]) + 1);
    }
    this.nextSeq = next;
  }
}

function alive(pid: number): boolean {
  if (pid === process.pid) return false; // our own leftovers from before open(): nothing of ours is writing yet
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}
