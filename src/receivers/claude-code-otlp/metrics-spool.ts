/**
 * The `_metrics/` spool: every metrics request lands as received, one write-once file per
 * request, `metrics-<received-at>-<seq>-otlp.pb`, holding the ExportMetricsServiceRequest's
 * protobuf bytes (a JSON request is converted to protobuf first, so the spool has one format).
 * `_metrics/spool.state` holds the next number; both are written under `_metrics/.lock`, which
 * the metrics derivation also takes. Past `max_spool_bytes` a request is refused as retryable.
 *
 * This side queues requests; the spool's landing thread writes them. Requests that arrive while
 * a batch is being synced land together in the next batch: one lock and one directory sync.
 */
import { join } from 'node:path';
import { OtlpRequestError } from '../../otlp/codec.js';
import type { LandPool } from './land-pool.js';

export const METRICS_DIR = '_metrics';
/** `metrics-<received-at>-<seq>-otlp.pb`: what this receiver lands. */
export const SPOOL_NAME = /^metrics-(\d{8}T\d{6}\.\d{9}Z)-(\d{6,})-otlp\.pb$/;

interface Pending {
  bytes: Buffer;
  resolve: (seq: number) => void;
  reject: (e: Error) => void;
}

const MAX_BATCH_FILES = 256;
const MAX_BATCH_BYTES = 64 * 1024 * 1024;

export class MetricsSpool {
  readonly dir: string;
  private queue: Pending[] = [];
  private running = false;
  private spoolBytes = 0;
  private idleWaiters: (() => void)[] = [];

  constructor(root: string, private readonly pool: LandPool, private readonly opts: { maxSpoolBytes: number; lockWaitMs: number }) {
    this.dir = join(root, METRICS_DIR);
  }

  /** Bytes in the spool as last counted. */
  get bytes(): number {
    return this.spoolBytes;
  }

  /** Counts the spool and clears temporary files a crashed receiver left behind. */
  async open(): Promise<void> {
    const r = await this.pool.spool({ op: 'spool-open', dir: this.dir, lockWaitMs: this.opts.lockWaitMs });
    if (!r.ok) throw new OtlpRequestError(r.reason, `cannot open the metrics spool ${this.dir}: ${r.message}`);
    this.spoolBytes = r.spoolBytes ?? 0;
  }

  /** Resolves with the request's number once it is durably in the spool; rejects with an OtlpRequestError. */
  land(bytes: Buffer): Promise<number> {
    const p = new Promise<number>((resolve, reject) => this.queue.push({ bytes, resolve, reject }));
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
        let n = 0, size = 0;
        while (n < this.queue.length && n < MAX_BATCH_FILES && (n === 0 || size + this.queue[n]!.bytes.length <= MAX_BATCH_BYTES)) size += this.queue[n++]!.bytes.length;
        const batch = this.queue.splice(0, n);
        let reply;
        try {
          reply = await this.pool.spool({ op: 'spool', dir: this.dir, bodies: batch.map((p) => p.bytes), lockWaitMs: this.opts.lockWaitMs, maxSpoolBytes: this.opts.maxSpoolBytes });
        } catch (err) {
          reply = { ok: false as const, reason: 'storage_error' as const, message: `the spool's landing thread failed: ${(err as Error).message}`, retryAfter: 5 };
        }
        if (reply.spoolBytes !== undefined) this.spoolBytes = reply.spoolBytes;
        if (!reply.ok) {
          const e = new OtlpRequestError(reply.reason, `could not land the metrics request in ${this.dir}: ${reply.message}`, reply.retryAfter ?? 5);
          for (const p of batch) p.reject(e);
          continue;
        }
        for (const [i, p] of batch.entries()) {
          const r = reply.seqs?.[i];
          if (typeof r === 'number') p.resolve(r);
          else if (r === 'spool_full') {
            p.reject(new OtlpRequestError('spool_full', `the metrics spool ${this.dir} holds ${this.spoolBytes} bytes, at its limit of ${this.opts.maxSpoolBytes} (max_spool_bytes); try again later`, 30));
          } else p.reject(new OtlpRequestError('storage_error', `could not land the metrics request in ${this.dir}: ${String(r).replace(/^storage_error:/, '')}`, 5));
        }
      }
    } finally {
      this.running = false;
      for (const w of this.idleWaiters.splice(0)) w();
    }
  }
}
