/**
 * Lands pushed records (OTLP log records as `otlp_log`, spans as `otlp_span`) in their session's
 * `otlp/` directory as Session Data files, under the session's lock and its sequence counter.
 *
 * The records of one kind in one session form one append stream across files: `ord` runs
 * 1, 2, 3 and `off` is the offset of the record's bytes in a virtual stream where each record's
 * protobuf bytes are followed by one separator byte, the way a transcript's lines are followed
 * by a newline. So `aszcol verify` checks otlp files exactly as it checks transcripts. Where the
 * stream stands is kept in `<session>/otlp/<kind>.cursor`; after a restart it is read back from
 * the last landed file itself, which is the authority (a file lands before its cursor is saved).
 *
 * Requests for one session are landed one batch at a time; requests that arrive while a batch
 * is being synced wait and go together in the next one (group commit), so under load a session
 * costs one lock, one file and one fsync per batch rather than per request.
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SessionDataWriter, shortSha } from '../../formats/session-data/encode.js';
import { readSessionData } from '../../formats/session-data/decode.js';
import type { Header } from '../../formats/session-data/types.js';
import { loadCursor, formatCursor, type AppendCursor } from '../../storage/cursor.js';
import { formatKv, parseKv } from '../../storage/kv-text.js';
import { landedName, listDir, otlpDir, parseLandedName, sessionLockPath, sessionStatePath } from '../../storage/layout.js';
import { FileLock } from '../../storage/lock.js';
import { SequenceCounter } from '../../storage/session-state.js';
import { replaceAtomically } from '../../storage/write-once.js';
import { compactStamp, nowNs, rfc3339 } from '../../util/time.js';
import { DIALECT, OTLP_ADAPTER, type OtlpConverted } from '../../adapters/claude-code/otlp-dialect.js';
import type { Plain } from '../../otlp/values.js';
import { acquireWithin, storageError, syncDir, writeOnceDurable } from './durable.js';

export type OtlpKind = 'otlp_log' | 'otlp_span';

/** One record to land: its bytes (for provenance) and its conversion, with the header context it needs. */
export interface LandItem {
  kind: OtlpKind;
  src: string;
  /** Identifies the resource and scope; items with the same key can share a file (one header). */
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

interface StreamState {
  ord: number;
  /** The offset the next record starts at. */
  next: number;
}

interface SessionCache {
  nextSeq: number;
  /** session.state as this process last left it. */
  stateText: string;
  streams: Map<OtlpKind, StreamState>;
}

interface Pending {
  items: LandItem[];
  bytes: number;
  resolve: (s: LandedSummary) => void;
  reject: (e: Error) => void;
}

interface SessionSlot {
  queue: Pending[];
  running: boolean;
  cache?: SessionCache;
}

/** A batch grows by whole requests up to this many record bytes (a larger single request goes alone). */
const MAX_BATCH_BYTES = 32 * 1024 * 1024;
/** Sessions whose state is remembered between batches; the oldest idle ones are forgotten first. */
const MAX_CACHED_SESSIONS = 10_000;

export class SessionLanding {
  private readonly slots = new Map<string, SessionSlot>();
  private readonly idleWaiters: (() => void)[] = [];
  /** Files landed by this process. */
  files = 0;

  constructor(private readonly root: string, private readonly opts: { lockWaitMs: number }) {}

  /** Resolves once every item is durably landed; rejects with an OtlpRequestError (retryable) otherwise. */
  land(session: string, items: LandItem[]): Promise<LandedSummary> {
    let slot = this.slots.get(session);
    if (!slot) {
      slot = { queue: [], running: false };
      this.slots.set(session, slot);
      this.forgetIdle();
    }
    const bytes = items.reduce((n, i) => n + i.bytes.length, 0);
    const p = new Promise<LandedSummary>((resolve, reject) => slot!.queue.push({ items, bytes, resolve, reject }));
    if (!slot.running) void this.drain(session, slot);
    return p;
  }

  /** Whether a batch is being landed or waiting. */
  get busy(): boolean {
    for (const s of this.slots.values()) if (s.running || s.queue.length) return true;
    return false;
  }

  /** Resolves when nothing is being landed (for a graceful shutdown). */
  idle(): Promise<void> {
    if (!this.busy) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private forgetIdle(): void {
    if (this.slots.size <= MAX_CACHED_SESSIONS) return;
    for (const [id, s] of this.slots) {
      if (this.slots.size <= MAX_CACHED_SESSIONS) break;
      if (!s.running && s.queue.length === 0) this.slots.delete(id);
    }
  }

  private async drain(session: string, slot: SessionSlot): Promise<void> {
    slot.running = true;
    try {
      while (slot.queue.length) {
        let n = 0, bytes = 0;
        while (n < slot.queue.length && (n === 0 || bytes + slot.queue[n]!.bytes <= MAX_BATCH_BYTES)) bytes += slot.queue[n++]!.bytes;
        const batch = slot.queue.splice(0, n);
        try {
          const summary = await this.landBatch(session, slot, batch.flatMap((p) => p.items));
          for (const p of batch) p.resolve(summary);
        } catch (err) {
          slot.cache = undefined; // what is on disk is the authority again
          const e = storageError(err, `the records of session ${session}`);
          for (const p of batch) p.reject(e);
        }
      }
    } finally {
      slot.running = false;
      if (!this.busy) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private async landBatch(session: string, slot: SessionSlot, items: LandItem[]): Promise<LandedSummary> {
    const lockPath = sessionLockPath(this.root, session);
    // A lock file found in place means another writer is, or was, in this session (a crashed one
    // leaves its lock behind): then what this process remembers is not trusted.
    const contended = existsSync(lockPath);
    const lock = new FileLock(lockPath);
    await acquireWithin(lock, this.opts.lockWaitMs, `session ${session}`);
    try {
      const cache = (!contended && this.validCache(session, slot.cache)) || this.loadCache(session);
      slot.cache = undefined; // until this batch has fully landed
      const dir = otlpDir(this.root, session);
      mkdirSync(dir, { recursive: true });
      const ns = nowNs();
      const stamp = compactStamp(ns);
      const at = rfc3339(ns);

      // One file per kind and header (resource + scope), in the order each first appears.
      const groups = new Map<string, LandItem[]>();
      for (const it of items) {
        const key = `${it.kind}\u0000${it.groupKey}`;
        (groups.get(key) ?? groups.set(key, []).get(key)!).push(it);
      }
      const writes: Promise<void>[] = [];
      const touched = new Map<OtlpKind, number>();
      let records = 0;
      for (const group of groups.values()) {
        const first = group[0]!;
        const seq = cache.nextSeq++;
        const stream = cache.streams.get(first.kind) ?? { ord: 0, next: 0 };
        const chunks: string[] = [];
        const header: Omit<Header, 'h' | 'schema'> = {
          seq, at, kind: first.kind, adapter: OTLP_ADAPTER, dialect: DIALECT, src: first.src, session,
          resource: first.resource, scope: first.scope,
        };
        const w = new SessionDataWriter({ write: (t) => chunks.push(t) }, header);
        for (const it of group) {
          w.add({ ord: ++stream.ord, off: stream.next, sha: shortSha(it.bytes), bytes: it.bytes.length, ...it.converted });
          stream.next += it.bytes.length + 1;
        }
        w.close();
        records += group.length;
        cache.streams.set(first.kind, stream);
        touched.set(first.kind, seq);
        writes.push(writeOnceDurable(join(dir, landedName(first.kind, stamp, seq)), Buffer.from(chunks.join(''), 'utf8')));
      }
      const results = await Promise.allSettled(writes);
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      await syncDir(dir);
      this.files += groups.size;

      // The files are durable; now the cursors and the counter. A crash before this point is
      // recovered from the files themselves (loadCache), so these need no fsync of their own.
      for (const [kind, seq] of touched) {
        const s = cache.streams.get(kind)!;
        const c: AppendCursor = {
          kind: 'append', source: kind === 'otlp_log' ? 'otlp/logs' : 'otlp/traces', dev: 0, ino: 0, offset: s.next, ord: s.ord,
          size: s.next, mtime: 0, last_seq: seq, updated_at: at, state: 'active',
        };
        replaceAtomically(join(dir, `${kind}.cursor`), formatCursor(c), { sync: false });
      }
      cache.stateText = this.saveState(session, cache.nextSeq);
      slot.cache = cache;
      return { files: groups.size, records };
    } finally {
      lock.release();
    }
  }

  /**
   * Writes session.state as storage/session-state.ts does (same keys, same order), keeping the
   * local receiver's last_scan, but without an fsync: a lost update is harmless, because every
   * writer raises the counter above the highest sequence on disk when it starts, and an fsync
   * here would stall the event loop once per batch.
   */
  private saveState(session: string, nextSeq: number): string {
    let lastScan: string | undefined;
    try {
      lastScan = parseKv(readFileSync(sessionStatePath(this.root, session), 'utf8')).get('last_scan');
    } catch { /* none yet */ }
    const text = formatKv([['schema', 1], ['next_seq', nextSeq], ['liveness', 'unknown'], ['last_scan', lastScan]]);
    replaceAtomically(sessionStatePath(this.root, session), text, { sync: false });
    return text;
  }

  /**
   * The remembered state, if no other writer has been in the session since this process was:
   * session.state is still what we left, and the lock was free when we came. Otherwise undefined,
   * and the state is read again from disk (a scan of the session's landed names).
   */
  private validCache(session: string, cache: SessionCache | undefined): SessionCache | undefined {
    if (!cache) return undefined;
    try {
      return readFileSync(sessionStatePath(this.root, session), 'utf8') === cache.stateText ? cache : undefined;
    } catch {
      return undefined;
    }
  }

  private loadCache(session: string): SessionCache {
    const nextSeq = new SequenceCounter(this.root, session).peek();
    const streams = new Map<OtlpKind, StreamState>();
    const dir = otlpDir(this.root, session);
    for (const kind of ['otlp_log', 'otlp_span'] as const) {
      const s = streamEnd(dir, kind);
      if (s) streams.set(kind, s);
    }
    return { nextSeq, stateText: '', streams };
  }
}

/**
 * Where a kind's stream ends: the last landed file's last record, or the cursor if it is further
 * (it never should be), or nothing yet.
 */
export function streamEnd(dir: string, kind: OtlpKind): StreamState | undefined {
  let best: StreamState | undefined;
  const cursor = loadCursor(join(dir, `${kind}.cursor`));
  if (cursor?.kind === 'append') best = { ord: cursor.ord, next: cursor.offset };
  let last: { seq: number; name: string } | undefined;
  for (const name of listDir(dir)) {
    const p = parseLandedName(name);
    if (p && p.prefix === kind && (!last || p.seq > last.seq)) last = { seq: p.seq, name };
  }
  if (last) {
    const { records } = readSessionData(join(dir, last.name));
    const r = records[records.length - 1];
    if (r && (!best || r.ord >= best.ord)) best = { ord: r.ord, next: r.off + r.bytes + 1 };
  }
  return best;
}
