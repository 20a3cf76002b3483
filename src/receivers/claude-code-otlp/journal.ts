/**
 * The receiver's write-ahead journal, written on the request thread: an accepted request is
 * appended here and answered once it is safe by the configured `durability`; the landing thread
 * turns journaled requests into Session Data files and spool files afterwards (landing/).
 *
 * Why a journal: answering only after every landed file and its directory were synced cost
 * several syncs per request round (one per file, one per directory), and decoding and converting
 * the records held up the answer too. Appending to one file costs one write per turn of the event
 * loop (every request taken in the turn goes in one `writev`) and one `fdatasync` per round of
 * writes (group commit: writes made while a sync runs go together in the next one); the landing
 * happens in larger batches, so a session costs one file per batch, not one per request.
 *
 * Two durabilities, both answering only after the request's bytes are in the journal file:
 * - `process` (default): answered once written — the bytes are in the kernel, so a crash, an OOM
 *   kill or SIGKILL of aszcol loses nothing answered, and replay lands it at the next start.
 *   Syncs follow the writes (at most every PROCESS_SYNC_SPACING_MS), so what a crash of the
 *   machine itself can lose is what was answered in the last few tens of milliseconds, and never
 *   more than MAX_UNSYNCED_BYTES: past that, answers wait for the sync as under `machine`. This
 *   is the choice telemetry pipelines make for their disk buffers (the OpenTelemetry Collector's
 *   file_storage with its default `fsync: false`, Vector's disk buffer), and beside Claude Code
 *   (same laptop, same pod) a crash of the machine takes the client's own unsent batches anyway.
 * - `machine`: answered once fdatasync returned, so nothing answered is lost to a power cut or a
 *   kernel crash either; every answer then waits for a flush of the disk (0.1–0.3 ms for small
 *   requests on this machine's disk, 6–13 ms for 4 MB).
 *
 * Landing only ever reads what is synced, so a landed file never holds a request that a crash of
 * the machine could take out of the journal.
 */
import { closeSync, existsSync, fdatasync, fsyncSync, ftruncateSync, openSync, readFileSync, statSync, truncateSync, unlinkSync, writevSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import type { Signal } from '../../otlp/proto.js';
import { FileLock } from '../../storage/lock.js';
import { formatKv, parseKv } from '../../storage/kv-text.js';
import { ensureDirDurable, fsyncDir, replaceAtomically } from '../../storage/write-once.js';
import { listDir } from '../../storage/layout.js';
import { AszError } from '../../util/errors.js';
import {
  FRAME_BYTES,
  LANDED_STATE,
  SEGMENT_BYTES,
  keepAside,
  readFileRange,
  entryFrame,
  nextGoodEntry,
  readEntry,
  segmentBase,
  segmentName,
} from './journal-format.js';

export interface JournalRecovery {
  /** Where landing resumes: the first byte not known to be landed. */
  from: number;
  /** The end of the good entries on disk: everything up to here was acknowledged and must land. */
  to: number;
  /** Bytes cut from the end of the last segment: a write that was never completed, so never answered. */
  tornBytes: number;
}

const fdatasyncAsync = promisify(fdatasync);
/**
 * One sync at a time: Linux reports a failed write-back once per open file, so with two syncs in
 * flight on one descriptor the error could go to the other while this one returns success.
 */
const MAX_SYNCS = 1;

/** What a crash of the machine may take at most under `process`: past it, answers wait for the sync. */
export const MAX_UNSYNCED_BYTES = 64 * 1024 * 1024;
/**
 * Under `process`, syncs nobody waits for start at most this often: back to back they ran thousands
 * of times a second under load, each a call into the thread pool and a flush of the disk that the
 * landing thread's own syncs then queue behind. What a crash of the machine can take is then what
 * was answered in the last 20 ms and the sync after them.
 */
const PROCESS_SYNC_SPACING_MS = 20;

export type Durability = 'process' | 'machine';

interface Waiter {
  /** The position after this request's entry. */
  end: number;
  /** Answered only once synced (always under `machine`; under `process`, past MAX_UNSYNCED_BYTES). */
  needsSync: boolean;
  resolve: (end: number) => void;
  reject: (e: Error) => void;
}

/** An open segment: its descriptor, first position, and the position after its last write. */
interface Segment {
  fd: number;
  base: number;
  end: number;
  /** The position up to which a finished sync of this file covers it. */
  synced: number;
}

/**
 * The good entries' end in a segment read whole, and how many bytes after it are a torn write.
 * A bad entry (damaged, or with a length past the end) followed by a good one is damage, left
 * for the landing thread to report and keep aside; with no good entry after it, it is the last
 * write, cut short by a crash before it was synced, so never answered.
 */
function goodEnd(buf: Buffer, base: number): { end: number; torn: number } {
  let off = 0;
  for (;;) {
    const r = readEntry(buf, off, base);
    if (r.ok) {
      off = r.entry.end - base;
      continue;
    }
    const next = off < buf.length ? nextGoodEntry(buf, off + 1, base) : -1;
    if (next < 0) return { end: base + off, torn: buf.length - off };
    off = next;
  }
}

function syncFile(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export class Journal {
  private readonly lock: FileLock;
  /** The segment being appended to, and earlier ones still waiting for their last sync. */
  private seg?: Segment;
  private closing: Segment[] = [];
  /** Position after the last synced entry. */
  private durable = 0;
  /** Position after the last entry written to the file. */
  private fileEnd = 0;
  /** Entries taken this turn and not yet written: their frames and bodies, in order, and their size. */
  private queued: Uint8Array[] = [];
  private queuedBytes = 0;
  private waiters: Waiter[] = [];
  /** Syncs running now, the position the latest one covers, and whether a write and sync are due at the end of this turn. */
  private inflight = 0;
  private requested = 0;
  private turnDue = false;
  /** Under `process`: when the last sync started, and the timer of the next one. */
  private lastSyncAt = -Infinity;
  private syncTimer?: NodeJS.Timeout;
  private idleWaiters: (() => void)[] = [];
  private failure?: Error;
  /** Set by close: a sync that returns afterwards changes nothing and starts nothing. */
  private closed = false;
  /** Called with the new durable end after every sync, in order. */
  onDurable: (end: number) => void = () => {};

  constructor(
    readonly dir: string,
    private readonly durability: Durability = 'process',
  ) {
    this.lock = new FileLock(join(dir, '.lock'));
  }

  /** Why the journal stopped taking requests, if it did. */
  get failed(): Error | undefined {
    return this.failure;
  }

  get durableEnd(): number {
    return this.durable;
  }

  /**
   * Position after every request taken so far (written, or queued to be written at the end of
   * this turn): once landing is past it, all of them have landed.
   */
  get acceptedEnd(): number {
    return this.fileEnd + this.queuedBytes;
  }

  /** Bytes accepted (queued, written, synced or about to be) past `landedThrough`. */
  pendingBytes(landedThrough: number): number {
    return this.acceptedEnd - landedThrough;
  }

  /**
   * Takes the journal's lock, finds where landing stands and where the good entries end (cutting
   * a torn last write), and opens the last segment for appending. Synchronous: it runs once,
   * before the receiver listens.
   */
  async open(): Promise<JournalRecovery> {
    ensureDirDurable(this.dir);
    if (!this.lock.tryAcquire()) {
      throw new AszError(
        `the receiver's journal ${this.dir} is in use by another process (${this.lock.path} names pid ${readFileSync(this.lock.path, 'utf8').trim() || '?'}); two receivers cannot share one journal`,
        'receivers.claude_code_otlp',
      );
    }
    try {
      const statePath = join(this.dir, LANDED_STATE);
      const state = parseKv(existsSync(statePath) ? readFileSync(statePath, 'utf8') : '');
      let landed = Number(state.get('landed_through') ?? 0);
      if (!Number.isSafeInteger(landed) || landed < 0) landed = 0;
      const bases = listDir(this.dir)
        .map(segmentBase)
        .filter((b): b is number => b !== undefined)
        .sort((a, b) => a - b);
      // Segments wholly before the landed position were landed; one left by a crash before its removal goes now.
      while (bases.length > 1 && bases[1]! <= landed) unlinkSync(join(this.dir, segmentName(bases.shift()!)));
      let tornBytes = 0;
      let end = Math.max(landed, bases.length ? bases[0]! : 0);
      // Every segment's end is checked, not only the last: a crash just after a new segment began
      // can leave the one before it without its last, unsynced (so never answered) entries.
      for (const [k, base] of bases.entries()) {
        const path = join(this.dir, segmentName(base));
        const next = bases[k + 1];
        const size = statSync(path).size;
        if (next !== undefined && base + size === next) continue;
        const buf = readFileRange(path, 0, size);
        const g = goodEnd(buf, base);
        if (g.torn > 0) {
          keepAside(this.dir, base, g.end, buf.subarray(g.end - base));
          truncateSync(path, g.end - base);
          tornBytes += g.torn;
        }
        // The recovered end is answered from now on: make sure it is on disk, not only in the page cache.
        syncFile(path);
        end = g.end;
      }
      if (landed > end) {
        // A state ahead of the entries (the journal lost its tail): positions from `end` will be
        // issued again, so the state must not keep pointing past them.
        landed = end;
        replaceAtomically(
          statePath,
          formatKv([
            ['schema', 1],
            ['landed_through', landed],
          ]),
        );
      }
      const from = bases.length && landed < bases[0]! ? bases[0]! : landed;
      const last = bases.length ? bases[bases.length - 1]! : undefined;
      this.durable = this.fileEnd = this.requested = end;
      this.seg = this.openSegment(last ?? end, last === undefined);
      return { from, to: end, tornBytes };
    } catch (err) {
      this.lock.release();
      throw err;
    }
  }

  private openSegment(base: number, fresh: boolean): Segment {
    const path = join(this.dir, segmentName(base));
    // A fresh segment left empty by a rotation that failed halfway is taken as it is. Always in
    // append mode: after a short write is cut back (cutBack), the next entry must go at the new
    // end, not at the file offset the short write left (which would leave a hole of zeros).
    const fd = openSync(path, fresh && !(existsSync(path) && statSync(path).size === 0) ? 'ax' : 'a', 0o600);
    try {
      if (fresh) fsyncDir(this.dir, { strict: true }); // the new name must survive a crash before its first entry is answered
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    return { fd, base, end: this.fileEnd, synced: this.fileEnd };
  }

  /**
   * Appends a request: it is written at the end of this turn of the event loop with every other
   * request of the turn, and the promise resolves with the position after it once that write (or,
   * by the durability, the sync after it) is done.
   */
  append(signal: Signal, body: Uint8Array, receivedAtNs: bigint): Promise<number> {
    if (this.failure) return Promise.reject(this.failure);
    if (this.closed) return Promise.reject(new AszError(`the receiver's journal in ${this.dir} is closed`, 'receivers.claude_code_otlp'));
    const start = this.acceptedEnd;
    // A segment is closed once full: entries never span two files. What this turn queued for it
    // is written first; its last writes are synced by the next sync.
    if (start - this.seg!.base >= SEGMENT_BYTES) {
      this.writeQueued();
      if (this.failure) return Promise.reject(this.failure);
      try {
        this.rotate();
      } catch (err) {
        return Promise.reject(
          new AszError(`cannot start a new segment of the receiver's journal in ${this.dir}: ${(err as Error).message}`, 'receivers.claude_code_otlp'),
        );
      }
    }
    const frame = entryFrame(signal, receivedAtNs, body);
    this.queued.push(frame, body);
    this.queuedBytes += FRAME_BYTES + body.length;
    const end = this.acceptedEnd;
    const needsSync = this.durability === 'machine' || end - this.durable > MAX_UNSYNCED_BYTES;
    const p = new Promise<number>((resolve, reject) => this.waiters.push({ end, needsSync, resolve, reject }));
    this.scheduleTurn();
    return p;
  }

  private rotate(): void {
    const next = this.openSegment(this.fileEnd, true);
    this.closing.push(this.seg!);
    this.seg = next;
  }

  /**
   * Writes what this turn queued with one system call (more only after a short write). A failed
   * write refuses every request in it and cuts the segment back to before them, so the next
   * entry does not follow part of one.
   */
  private writeQueued(): void {
    if (this.queuedBytes === 0) return;
    const seg = this.seg!;
    const parts = this.queued;
    const total = this.queuedBytes;
    const start = this.fileEnd;
    this.queued = [];
    this.queuedBytes = 0;
    const written = { bytes: 0 };
    try {
      writeFully(seg.fd, parts, total, written);
    } catch (err) {
      const e = new AszError(`cannot append to the receiver's journal in ${this.dir}: ${(err as Error).message}`, 'receivers.claude_code_otlp');
      const refused = this.waiters.filter((w) => w.end > start);
      this.waiters = this.waiters.filter((w) => w.end <= start);
      for (const w of refused) w.reject(e);
      // A write refused whole (a full or read-only disk) left the segment as it was: nothing to cut,
      // and the journal takes the next request as soon as the disk does.
      if (written.bytes > 0) this.cutBack(start, err as Error);
      return;
    }
    this.fileEnd = start + total;
    seg.end = this.fileEnd;
  }

  /** After a failed write: the segment is cut back to before it. */
  private cutBack(start: number, cause: Error): void {
    try {
      ftruncateSync(this.seg!.fd, start - this.seg!.base);
      this.seg!.end = start;
    } catch {
      this.fail(cause);
    }
  }

  /**
   * If the journal cannot be repaired it stops taking requests (each is refused as retryable)
   * until the receiver restarts and recovers it from what is on disk.
   */
  private fail(cause: Error): void {
    this.failure ??= new AszError(
      `the receiver's journal in ${this.dir} failed and could not be repaired (${cause.message}); restart the receiver`,
      'receivers.claude_code_otlp',
    );
    this.queued = [];
    this.queuedBytes = 0;
    for (const w of this.waiters.splice(0)) w.reject(this.failure);
    this.wakeIdle();
  }

  /** Resolves when everything taken is written and synced, and nothing waits for an answer. */
  idle(): Promise<void> {
    if (this.isIdle()) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private isIdle(): boolean {
    return this.inflight === 0 && this.waiters.length === 0 && this.queuedBytes === 0 && (this.failure !== undefined || this.durable >= this.fileEnd);
  }

  private wakeIdle(): void {
    if (this.isIdle()) for (const w of this.idleWaiters.splice(0)) w();
  }

  /** Resolves the waiters whose entries are as safe as their durability asks. */
  private answer(): void {
    if (this.waiters.length === 0) return;
    const keep: Waiter[] = [];
    for (const w of this.waiters) {
      if (w.end <= (w.needsSync ? this.durable : this.fileEnd)) w.resolve(w.end);
      else keep.push(w);
    }
    this.waiters = keep;
  }

  /**
   * At the end of this turn of the event loop: writes every request taken in the turn, answers
   * those that need no sync, and starts a sync. A sync covers only what was written before it
   * began; what is written while it runs waits for the next, which starts as soon as it returns
   * (at most MAX_SYNCS at once).
   */
  private scheduleTurn(): void {
    if (this.turnDue) return;
    this.turnDue = true;
    setImmediate(() => {
      this.turnDue = false;
      this.writeQueued();
      this.answer();
      this.startSync();
      this.wakeIdle();
    });
  }

  private startSync(): void {
    if (this.closed || this.failure || this.fileEnd <= this.requested) return;
    if (this.inflight >= MAX_SYNCS) return; // the next completion starts it
    if (this.durability === 'process' && !this.waiters.some((w) => w.needsSync)) {
      // Nobody waits for this sync: start it no sooner than PROCESS_SYNC_SPACING_MS after the last.
      const wait = this.lastSyncAt + PROCESS_SYNC_SPACING_MS - performance.now();
      if (wait > 0) {
        this.syncTimer ??= setTimeout(() => {
          this.syncTimer = undefined;
          this.startSync();
        }, wait);
        return;
      }
    }
    clearTimeout(this.syncTimer);
    this.syncTimer = undefined;
    this.lastSyncAt = performance.now();
    const target = this.fileEnd;
    this.requested = target;
    const segs = [...this.closing, this.seg!].filter((g) => g.synced < g.end);
    const ends = segs.map((g) => g.end);
    this.inflight++;
    Promise.all(segs.map((g) => fdatasyncAsync(g.fd))).then(
      () => {
        this.inflight--;
        if (this.closed) return; // closed while this sync ran (shutdown's deadline): nothing more to do here
        segs.forEach((g, i) => (g.synced = Math.max(g.synced, ends[i]!)));
        if (target > this.durable && !this.failure) {
          this.durable = target;
          this.answer();
          this.onDurable(target);
        }
        this.settle();
      },
      (err: Error) => {
        this.inflight--;
        if (this.closed) return;
        // What a failed sync leaves in the file is unknown (the kernel may have dropped the dirty
        // pages it could not write): nothing after the last good sync can be answered as kept,
        // nor landed. The journal stops; the next start recovers it from what is on disk.
        this.fail(err);
        this.settle();
      },
    );
  }

  /** After a sync returns: closes segments wholly synced, starts the next sync if due, wakes `idle`. */
  private settle(): void {
    if (this.inflight === 0) {
      this.closing = this.closing.filter((g) => (g.synced < g.end ? true : (closeSync(g.fd), false)));
    }
    if (this.fileEnd > this.requested && !this.failure) this.startSync();
    this.wakeIdle();
  }

  /** After `idle`: closes the segments and releases the lock. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.syncTimer);
    this.syncTimer = undefined;
    // Normally none: close follows `idle`. After shutdown gave up waiting on a sync, what still
    // waits is told so (its request is in the file, and lands at the next start if the sync held).
    const closedError = new AszError(`the receiver's journal in ${this.dir} was closed before this request was synced`, 'receivers.claude_code_otlp');
    for (const w of this.waiters.splice(0)) w.reject(closedError);
    this.queued = [];
    this.queuedBytes = 0;
    for (const g of [...this.closing, ...(this.seg ? [this.seg] : [])]) {
      try {
        closeSync(g.fd);
      } catch {
        /* closed */
      }
    }
    this.closing = [];
    this.seg = undefined;
    this.lock.release();
  }
}

/** Writes `parts` (`total` bytes) at the file's end with one system call, more only after a short write; `written` says how far it got. */
function writeFully(fd: number, parts: Uint8Array[], total: number, written: { bytes: number }): void {
  let done = (written.bytes = writevSync(fd, parts));
  while (done < total) {
    // Rare: find where the short write stopped and write the rest.
    let skip = done;
    let i = 0;
    while (skip >= parts[i]!.length) skip -= parts[i++]!.length;
    const rest = [parts[i]!.subarray(skip), ...parts.slice(i + 1)];
    done += writevSync(fd, rest);
    written.bytes = done;
  }
}
