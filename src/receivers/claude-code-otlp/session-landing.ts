/**
 * Lands pushed records (OTLP log records as `otlp_log`, spans as `otlp_span`) in their session's
 * `otlp/` directory as Session Data files, under the session's lock and its sequence counter.
 *
 * The records of one kind in one session form one append stream across files: `ord` runs
 * 1, 2, 3 and `off` is the offset of the record's bytes in a virtual stream where each record's
 * protobuf bytes are followed by one separator byte, the way a transcript's lines are followed by
 * a newline. So `aszcol verify` checks these files exactly as it checks transcripts. Where the
 * stream stands is kept in `<session>/otlp/<kind>.cursor`.
 *
 * This side runs on the request thread and touches no file: it encodes the records and queues
 * them; a landing thread (land-worker.ts) does the locking and writing. Requests for one session
 * that arrive while its previous batch is landing go together in the next batch (group commit):
 * under load a session costs one lock, one file and one fsync per batch, not per request.
 */
import { encodeRecord } from '../../formats/session-data/encode.js';
import { DIALECT, OTLP_ADAPTER, type OtlpConverted } from '../../adapters/claude-code/otlp-dialect.js';
import { OtlpRequestError } from '../../otlp/codec.js';
import type { Plain } from '../../otlp/plain.js';
import { shortSha } from '../../formats/session-data/encode.js';
import type { LandPool } from './land-pool.js';
import type { FileSpec } from './land-worker.js';
import type { OtlpKind } from './stream-end.js';

export type { OtlpKind } from './stream-end.js';

/** One record to land: its bytes (for provenance) and its conversion, with the header context it needs. */
export interface LandItem {
  kind: OtlpKind;
  src: string;
  /** Identifies the resource and scope; items with the same key share a file (one header). */
  groupKey: string;
  resource: Plain;
  scope: Plain;
  bytes: Buffer;
  converted: OtlpConverted;
}

export interface LandedSummary {
  files: number;
  records: number;
}

/** A file being put together on this side: its lines are joined only when it is sent. */
interface Draft {
  spec: Omit<FileSpec, 'tails'>;
  tails: string[];
}

interface Pending {
  files: Map<string, Draft>;
  bytes: number;
  resolve: (s: LandedSummary) => void;
  reject: (e: Error) => void;
}

interface SessionSlot {
  queue: Pending[];
  running: boolean;
}

/** A batch grows by whole requests up to this many record bytes (a larger single request goes alone). */
const MAX_BATCH_BYTES = 32 * 1024 * 1024;
const RECORD_PREFIX = '{"ord":0,"off":0,';
/** Stands in for the data part while the record is serialized; JSON escapes the NULs, so it cannot occur in real data. */
const DATA_MARK = '\u0000aszcol-data\u0000';
const DATA_MARK_JSON = JSON.stringify(DATA_MARK);

/**
 * A record's line without its `ord` and `off`, which the landing thread writes in front. The
 * data part's JSON, made once by the dialect, is spliced in rather than serialized again.
 */
export function recordTail(item: LandItem): string {
  const { record, dataJson } = item.converted;
  const parts = record.parts.map((p, i) => (i === 0 && p.k === 'data' ? { ...p, data: DATA_MARK } : p));
  const line = encodeRecord({ ord: 0, off: 0, sha: shortSha(item.bytes), bytes: item.bytes.length, ...record, parts });
  if (!line.startsWith(RECORD_PREFIX)) throw new Error('session data: a record line does not start with ord and off');
  const at = line.indexOf(DATA_MARK_JSON);
  const tail = at < 0 ? line : line.slice(0, at) + dataJson + line.slice(at + DATA_MARK_JSON.length);
  return tail.slice(RECORD_PREFIX.length);
}

export class SessionLanding {
  private readonly slots = new Map<string, SessionSlot>();
  private readonly idleWaiters: (() => void)[] = [];
  /** Files landed by this process. */
  files = 0;

  constructor(private readonly pool: LandPool, private readonly opts: { lockWaitMs: number }) {}

  /** Resolves once every item is durably landed; rejects with an OtlpRequestError (retryable) otherwise. */
  land(session: string, items: LandItem[]): Promise<LandedSummary> {
    // Encoded here, on the request thread, so a landing thread only writes.
    const files = new Map<string, Draft>();
    let bytes = 0;
    for (const it of items) {
      const key = `${it.kind}\u0000${it.groupKey}`;
      let f = files.get(key);
      if (!f) {
        f = {
          spec: { kind: it.kind, src: it.src, adapter: OTLP_ADAPTER, dialect: DIALECT, resourceJson: JSON.stringify(it.resource), scopeJson: JSON.stringify(it.scope), sizes: [] },
          tails: [],
        };
        files.set(key, f);
      }
      f.tails.push(recordTail(it));
      f.spec.sizes.push(it.bytes.length);
      bytes += it.bytes.length;
    }
    let slot = this.slots.get(session);
    if (!slot) {
      slot = { queue: [], running: false };
      this.slots.set(session, slot);
    }
    const p = new Promise<LandedSummary>((resolve, reject) => slot!.queue.push({ files, bytes, resolve, reject }));
    if (!slot.running) void this.drain(session, slot);
    return p;
  }

  get busy(): boolean {
    return this.slots.size > 0;
  }

  /** Resolves when nothing is being landed (for a graceful shutdown). */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private async drain(session: string, slot: SessionSlot): Promise<void> {
    slot.running = true;
    try {
      while (slot.queue.length) {
        let n = 0, bytes = 0;
        while (n < slot.queue.length && (n === 0 || bytes + slot.queue[n]!.bytes <= MAX_BATCH_BYTES)) bytes += slot.queue[n++]!.bytes;
        const batch = slot.queue.splice(0, n);
        // Requests in one batch with the same kind and header share a file, in arrival order.
        const merged = new Map<string, Draft>();
        for (const p of batch) {
          for (const [key, f] of p.files) {
            const m = merged.get(key);
            if (!m) merged.set(key, { spec: { ...f.spec, sizes: [...f.spec.sizes] }, tails: [...f.tails] });
            else {
              m.tails.push(...f.tails);
              m.spec.sizes.push(...f.spec.sizes);
            }
          }
        }
        const files: FileSpec[] = [...merged.values()].map((d) => ({ ...d.spec, tails: d.tails.join('\n') }));
        let reply;
        try {
          reply = await this.pool.session(session, { files, lockWaitMs: this.opts.lockWaitMs });
        } catch (err) {
          reply = { ok: false as const, reason: 'storage_error' as const, message: `a landing thread failed: ${(err as Error).message}`, retryAfter: 5 };
        }
        if (reply.ok) {
          this.files += reply.files ?? 0;
          for (const p of batch) p.resolve({ files: reply.files ?? 0, records: reply.records ?? 0 });
        } else {
          const e = new OtlpRequestError(reply.reason, `could not land the records of session ${session}: ${reply.message}`, reply.retryAfter ?? 5);
          for (const p of batch) p.reject(e);
        }
      }
    } finally {
      slot.running = false;
      this.slots.delete(session);
      if (!this.busy) for (const w of this.idleWaiters.splice(0)) w();
    }
  }
}
