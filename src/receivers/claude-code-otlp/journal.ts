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
import { closeSync, existsSync, fdatasync, ftruncateSync, openSync, readFileSync, statSync, writevSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import type { Signal } from '../../otlp/proto.js';
import { FileLock } from '../../storage/lock.js';
import { ensureDirDurable, fsyncDir } from '../../storage/write-once.js';
import { AszError } from '../../util/errors.js';
import { FRAME_BYTES, SEGMENT_BYTES, entryFrame, segmentName } from './journal-format.js';
import { recoverSegments, rewriteUnsynced } from './journal-repair.js';

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
/** After a failed sync, the first try to put the journal right comes this soon; later ones back off to REPAIR_MAX_MS. */
const REPAIR_FIRST_MS = 50;
const REPAIR_MAX_MS = 2000;

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
  /** Position after the last entry answered as taken: a repair keeps everything up to it that can be read back. */
  private answeredEnd = 0;
  private repairTimer?: NodeJS.Timeout;
  private repairDelay = REPAIR_FIRST_MS;
  /** Set by close: a sync that returns afterwards changes nothing and starts nothing. */
  private closed = false;
  /** Called with the new durable end after every sync, in order. */
  onDurable: (end: number) => void = () => {};
  /** Told when the journal stops taking requests and when it takes them again. */
  onLog: (level: 'error' | 'info', msg: string) => void = () => {};

  constructor(
    readonly dir: string,
    private readonly durability: Durability = 'process',
  ) {
    this.lock = new FileLock(join(dir, '.lock'));
  }

  /** Why the journal refuses requests now, if it does (until a repair succeeds). */
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
    this.lock.removeDeadLeftovers();
    try {
      const { landed, end, tornBytes, bases } = recoverSegments(this.dir);
      const from = bases.length && landed < bases[0]! ? bases[0]! : landed;
      const last = bases.length ? bases[bases.length - 1]! : undefined;
      this.durable = this.fileEnd = this.requested = this.answeredEnd = end;
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
   * Past its last good sync the journal cannot be trusted (a sync failed, or a failed write could
   * not be cut back): every request waiting and every new one is refused as retryable (503 /
   * UNAVAILABLE), never answered as kept, until `repair` has put the file right; it is tried again
   * and again, backing off, for as long as the disk refuses.
   */
  private fail(cause: Error): void {
    if (!this.failure) {
      this.failure = new AszError(
        `the receiver's journal in ${this.dir} cannot be written (${cause.message}); requests are refused as retryable until the disk takes writes again`,
        'receivers.claude_code_otlp',
      );
      this.onLog('error', this.failure.message);
    }
    this.queued = [];
    this.queuedBytes = 0;
    for (const w of this.waiters.splice(0)) w.reject(this.failure);
    this.wakeIdle();
    this.scheduleRepair();
  }

  private scheduleRepair(): void {
    if (this.closed || this.repairTimer) return;
    this.repairTimer = setTimeout(() => {
      this.repairTimer = undefined;
      void this.repair();
    }, this.repairDelay);
    this.repairDelay = Math.min(this.repairDelay * 2, REPAIR_MAX_MS);
  }

  /**
   * Rewrites and syncs what was written since the last good sync (journal-repair.ts), keeping
   * every entry answered as taken that can be read back and cutting those refused to their
   * clients (they send them again); then takes requests again.
   */
  private async repair(): Promise<void> {
    if (this.closed || !this.failure) return;
    if (this.inflight > 0) return this.scheduleRepair();
    const seg = this.seg!;
    const keepTo = Math.max(seg.synced, Math.min(this.fileEnd, this.answeredEnd));
    let end: number;
    this.inflight++; // no sync starts, and shutdown's `idle` waits, while the repair runs
    try {
      for (const g of this.closing) {
        if (g.synced < g.end) await rewriteUnsynced(join(this.dir, segmentName(g.base)), g.base, g.synced, g.end, false);
        g.synced = g.end;
      }
      end = await rewriteUnsynced(join(this.dir, segmentName(seg.base)), seg.base, seg.synced, keepTo, true);
      // A fresh descriptor to append with: the old one would report the write-back errors of the
      // full disk again at its next sync (Linux tells each open file of every error since it opened).
      const fd = openSync(join(this.dir, segmentName(seg.base)), 'a', 0o600);
      closeSync(seg.fd);
      seg.fd = fd;
    } catch {
      this.inflight--;
      if (!this.closed) this.scheduleRepair();
      this.wakeIdle();
      return;
    }
    this.inflight--;
    if (this.closed) return;
    const lost = Math.min(keepTo, this.answeredEnd) - end;
    if (lost > 0)
      this.onLog('error', `the receiver's journal in ${this.dir} could not read back ${lost} bytes of requests answered before its sync failed; they are lost`);
    seg.end = seg.synced = this.fileEnd = this.requested = this.durable = end;
    this.answeredEnd = Math.min(this.answeredEnd, end);
    this.failure = undefined;
    this.repairDelay = REPAIR_FIRST_MS;
    this.onLog('info', `the receiver's journal in ${this.dir} is synced again and takes requests`);
    this.onDurable(end);
    this.settle();
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
      if (w.end <= (w.needsSync ? this.durable : this.fileEnd)) {
        w.resolve(w.end);
        this.answeredEnd = Math.max(this.answeredEnd, w.end);
      } else keep.push(w);
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
        // nor landed, until a repair has rewritten and synced it.
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
    clearTimeout(this.repairTimer);
    this.repairTimer = undefined;
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
