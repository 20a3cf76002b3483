/**
 * The landing thread: it reads the receiver's journal (journal.ts) from where landing stands and
 * turns each acknowledged request into what the storage root holds — log records and spans as
 * Session Data files in their sessions' `otlp/` directories, metrics requests as spool files —
 * then records how far it got and forgets the journal segments it no longer needs.
 *
 * Work is done in rounds. A round takes every entry journaled so far (up to a bound) and lands
 * it together: one file per session, kind and header however many requests it spans, every file
 * written under a temporary name, then all synced, then linked under their final names, then
 * their directories synced; only then does `landed.state` move past those entries. A crash at
 * any point re-lands from `landed.state` at the next start: at least once, never lost.
 *
 * Session work happens under the session's `.lock`, `seq` from the session's counter, `ord` and
 * `off` continuing the kind's stream. A session whose lock another collector holds keeps its
 * records here, in order, and is tried again each round; the journal is kept from its first
 * waiting entry on. The state files (`<kind>.cursor`, `session.state`, `_metrics/spool.state`)
 * are written when things have been quiet for a moment and at shutdown, not per round: none of
 * them is the authority — after a restart the stream's end is read from the last landed file and
 * every counter is raised above the numbers on disk.
 *
 * Everything here is synchronous but the syncs of a round's files, which overlap on the thread
 * pool: this thread exists so the request thread never waits on the disk. While a round waits for
 * its syncs, messages that arrive are kept and handled after it, so nothing else (a state-file
 * flush, a spool count) runs in the middle of a round.
 */
import { closeSync, existsSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync, chmodSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { encodeHeader } from '../../formats/session-data/encode.js';
import type { Header } from '../../formats/session-data/types.js';
import { formatCursor, type AppendCursor } from '../../storage/cursor.js';
import { formatKv, parseKv } from '../../storage/kv-text.js';
import { landedName, listDir, otlpDir, sessionLockPath, sessionStatePath } from '../../storage/layout.js';
import { FileLock, processAlive } from '../../storage/lock.js';
import { SequenceCounter } from '../../storage/session-state.js';
import { ensureDirDurable, fsyncAsync, fsyncDirAsync, replaceAtomically, tempPath } from '../../storage/write-once.js';
import { compactStamp, nowNs, rfc3339 } from '../../util/time.js';
import { lowerThreadPriority } from '../../util/thread-priority.js';
import { logsRequestGroups, tracesRequestGroups, type ResourceGroup } from '../../otlp/requests.js';
import { resourceHeader, scopeHeader, type PlainObject } from '../../otlp/plain.js';
import {
  DIALECT, OTLP_ADAPTER, OTLP_LOGS_SRC, OTLP_TRACES_SRC, badSessionId, otlpLogRecordToSd, otlpSessionOf, otlpSpanToSd, type OtlpConverted,
} from '../../adapters/claude-code/otlp-dialect.js';
import { FRAME_BYTES, LANDED_STATE, keepAside, nextGoodEntry, readEntry, readFileRange, segmentBase, segmentName, type JournalEntry } from './journal-format.js';
import { recordTail } from './record-line.js';
import { streamEnd, type OtlpKind, type StreamState } from './stream-end.js';
import { PACE_DURABLE_END, PACE_LAST_ARRIVAL_MS, PACE_WANTED, monotonicMs } from './land-pace.js';

export interface LandWorkerInit {
  root: string;
  journalDir: string;
  spoolDir: string;
  /** Where landing resumes and where the journal's good entries end, as journal.ts found them. */
  from: number;
  to: number;
  lockWaitMs: number;
  /** Shared with the request thread: a BigInt64Array of PACE_SLOTS (land-pace.ts). */
  pace: SharedArrayBuffer;
  /** Below this many accepted bytes not yet landed, landing under load is paced; at or past it, it runs flat out. */
  paceBelowBytes: number;
}

/** Request thread → landing thread. */
export type WorkerRequest =
  | { op: 'durable'; end: number }
  | { op: 'flush'; id: number }
  /** Count the spool again (an exporter may have removed sent files) and report it. */
  | { op: 'rescan-spool'; id: number };

export interface LandProgress {
  op: 'progress';
  /** Every entry before this position is landed durably. */
  landedThrough: number;
  /** The latest synced end this thread has been told of. */
  readThrough: number;
  spoolBytes: number;
  /** Added since the previous progress message. */
  files: number;
  records: number;
  spoolFiles: number;
  damaged: number;
  /** Sessions waiting for a lock another collector holds. */
  waitingSessions: number;
}

/** Landing thread → request thread. */
export type WorkerMessage =
  | { op: 'ready'; spoolBytes: number }
  | { op: 'failed'; message: string }
  | LandProgress
  | { op: 'reply'; id: number; ok: boolean; message?: string }
  | { op: 'log'; level: 'info' | 'warn' | 'error'; msg: string; fields?: Record<string, unknown> };

const init = workerData as LandWorkerInit;
const port = parentPort as MessagePort;
const root = init.root;

const post = (m: WorkerMessage) => port.postMessage(m);
const log = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => post({ op: 'log', level, msg, fields });

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

/** Files (and directories) a round has open at once, at most. */
const OPEN_AT_ONCE = 128;
/**
 * Syncs a round has on the thread pool at once. The pool (4 threads) is the process's: the
 * request thread's journal sync and gunzip of compressed requests run there too, and must not
 * queue behind a round's hundred file syncs.
 */
const SYNCS_AT_ONCE = 3;

/** Runs `run` over `items`, `limit` at a time; resolves with the items that failed and why. */
async function inFlight<T>(items: T[], limit: number, run: (item: T) => Promise<void>): Promise<[T, Error][]> {
  const failed: [T, Error][] = [];
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      try {
        await run(item);
      } catch (err) {
        failed.push([item, err as Error]);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return failed;
}

interface RoundFile {
  final: string;
  tmp: string;
  fd?: number;
  parts: (string | Uint8Array)[];
  error?: Error;
  done: (err?: Error) => void;
}

/**
 * The files of one round, landed in phases: write all, sync all, link all, sync their directories.
 * Each file's outcome is reported to its owner; one failing file does not fail the others.
 */
class Round {
  private readonly files: RoundFile[] = [];

  add(final: string, parts: (string | Uint8Array)[], done: (err?: Error) => void): void {
    this.files.push({ final, tmp: tempPath(final), parts, done });
  }

  /**
   * The syncs of a round's files and of their directories overlap on the thread pool
   * (SYNCS_AT_ONCE at a time): measured here, 400 small files synced one after another took
   * 190–215 µs each, four side by side 40–85 µs, and a round of metrics requests is one file per
   * request. Files are written and synced OPEN_AT_ONCE at a time: a round may hold thousands (a
   * spool file per metrics request), and holding them all open would run the process out of file
   * descriptors.
   */
  async land(): Promise<void> {
    for (let i = 0; i < this.files.length; i += OPEN_AT_ONCE) await this.writeAndSync(this.files.slice(i, i + OPEN_AT_ONCE));
    const dirs = new Set<string>();
    for (const f of this.files) {
      if (!f.error) {
        try {
          chmodSync(f.tmp, 0o444);
          linkSync(f.tmp, f.final);
          dirs.add(dirname(f.final));
        } catch (err) {
          f.error = err as Error;
        }
      }
      try { unlinkSync(f.tmp); } catch { /* never created */ }
    }
    const dirList = [...dirs];
    for (let i = 0; i < dirList.length; i += OPEN_AT_ONCE) {
      const failed = await inFlight(dirList.slice(i, i + OPEN_AT_ONCE), SYNCS_AT_ONCE, fsyncDirAsync);
      // The files are in place and their bytes synced; only their names might not survive a crash
      // of the machine. Said, once per directory (the next round's sync of it covers them again).
      for (const [dir, err] of failed) log('error', `could not sync the directory ${dir} after landing files in it: ${err.message}`, { dir });
    }
    for (const f of this.files) f.done(f.error);
  }

  /** Writes each file under its temporary name, syncs them side by side, and closes them. */
  private async writeAndSync(files: RoundFile[]): Promise<void> {
    for (const f of files) {
      try {
        f.fd = openSync(f.tmp, 'wx', 0o600);
        for (const p of f.parts) {
          const buf = typeof p === 'string' ? Buffer.from(p, 'utf8') : p;
          let done = 0;
          while (done < buf.length) done += writeSync(f.fd, buf, done, buf.length - done);
        }
      } catch (err) {
        f.error = err as Error;
      }
      f.parts = [];
    }
    const failed = await inFlight(files.filter((f) => f.fd !== undefined && !f.error), SYNCS_AT_ONCE, (f) => fsyncAsync(f.fd!));
    for (const [f, err] of failed) f.error = err;
    for (const f of files) {
      if (f.fd !== undefined) try { closeSync(f.fd); } catch { /* closed */ }
      f.fd = undefined;
    }
  }
}

/* ------------------------------------------------------------------ what waits to land */

/** A file being put together: one per session, kind and header; its lines are joined when it is written. */
interface Draft {
  kind: OtlpKind;
  src: string;
  resourceJson: string;
  scopeJson: string;
  /** Each record's line after `{"ord":…,"off":…,`. */
  tails: string[];
  /** Each record's source byte count (its `bytes`), for the next offset. */
  sizes: number[];
}

interface SessionWork {
  drafts: Map<string, Draft>;
  /** The journal position of the first entry with records here: the journal is kept from it. */
  firstAt: number;
  records: number;
  /** Since when its lock has been found held by another collector (0: not waiting). */
  waitingSince: number;
  warned: boolean;
}

interface SpoolWork {
  at: number;
  receivedAtNs: bigint;
  body: Buffer;
}

const sessionWork = new Map<string, SessionWork>();
let spoolWork: SpoolWork[] = [];
/** Bytes of converted records and spool bodies waiting; past the bound, no more entries are read. */
let waitingBytes = 0;
const MAX_WAITING_BYTES = 256 * 1024 * 1024;

function addGroups<T extends { attributes: PlainObject }>(entry: JournalEntry, groups: ResourceGroup<T>[], kind: OtlpKind, src: string, convert: (m: T) => OtlpConverted): void {
  for (const g of groups) {
    const resourceJson = JSON.stringify(resourceHeader(g.resource));
    for (const sg of g.scopes) {
      const scopeJson = JSON.stringify(scopeHeader(sg.scope));
      const key = `${kind}\u0000${resourceJson}\u0000${scopeJson}`;
      for (const it of sg.items) {
        const session = otlpSessionOf(it.message.attributes, g.resource?.attributes);
        // Items with no usable session were refused to the client (partial success) and land nowhere.
        if (!session || badSessionId(session)) continue;
        let w = sessionWork.get(session);
        if (!w) {
          w = { drafts: new Map(), firstAt: entry.at, records: 0, waitingSince: 0, warned: false };
          sessionWork.set(session, w);
        }
        let d = w.drafts.get(key);
        if (!d) {
          d = { kind, src, resourceJson, scopeJson, tails: [], sizes: [] };
          w.drafts.set(key, d);
        }
        const tail = recordTail(it.bytes, convert(it.message));
        d.tails.push(tail);
        d.sizes.push(it.bytes.length);
        w.records++;
        waitingBytes += tail.length;
      }
    }
  }
}

function addEntry(e: JournalEntry): void {
  if (e.signal === 'metrics') {
    // A copy: the read buffer it is a slice of should not live as long as a request waiting for the spool lock.
    spoolWork.push({ at: e.at, receivedAtNs: e.receivedAtNs, body: Buffer.from(e.body) });
    waitingBytes += e.body.length;
  } else if (e.signal === 'logs') {
    addGroups(e, logsRequestGroups(e.body), 'otlp_log', OTLP_LOGS_SRC, otlpLogRecordToSd);
  } else {
    addGroups(e, tracesRequestGroups(e.body), 'otlp_span', OTLP_TRACES_SRC, otlpSpanToSd);
  }
}

/* ------------------------------------------------------------------ reading the journal */

/** The journal is read from here; everything before it is landed or waiting in memory. */
let readPos = init.from;
let durableEnd = init.to;
let landedThrough = init.from;
let bases: number[] = [];
let damagedSinceProgress = 0;
/**
 * Bytes read from the journal at most per round (a larger entry is read alone). What a round holds
 * in memory is a few times this (the bytes, their records as text, the files' bytes): at 32 MiB
 * the receiver's RSS doubled once pacing made rounds full. A round that stops at this bound is
 * followed by the next without the MIN_ROUND_MS spacing, so it does not cap the landing rate.
 */
const READ_BYTES = 8 * 1024 * 1024;

function listSegments(): void {
  bases = listDir(init.journalDir).map(segmentBase).filter((b): b is number => b !== undefined).sort((a, b) => a - b);
}

function readRange(base: number, from: number, len: number): Buffer {
  return readFileRange(join(init.journalDir, segmentName(base)), from - base, len);
}

/** Keeps a damaged stretch of the journal for a person to look at, and says so. */
function quarantine(base: number, bufAt: number, buf: Buffer, from: number, to: number, reason: string): void {
  const position = bufAt + from;
  const path = keepAside(init.journalDir, base, position, buf.subarray(from, to));
  damagedSinceProgress++;
  log('error', `the receiver's journal holds ${to - from} bytes at position ${position} that cannot be landed (${reason}); they were skipped, and a copy is in ${path}`, {
    segment: segmentName(base), position, bytes: to - from, reason,
  });
}

/**
 * Reads the next entries (up to READ_BYTES, at least one), adding them to the work. Returns
 * whether it stopped at READ_BYTES with more to read (not at MAX_WAITING_BYTES, not at the end).
 */
function readEntries(): boolean {
  let budget = READ_BYTES;
  while (readPos < durableEnd && budget > 0 && waitingBytes < MAX_WAITING_BYTES) {
    if (!bases.length || readPos >= bases[bases.length - 1]! || !bases.some((b) => b <= readPos)) listSegments();
    let i = bases.length - 1;
    while (i >= 0 && bases[i]! > readPos) i--;
    if (i < 0) {
      // No segment holds this position: the journal lost files. Nothing can be read up to the next one.
      const next = bases.find((b) => b > readPos) ?? durableEnd;
      log('error', `the receiver's journal has no segment for positions ${readPos} to ${next}; whatever was there is lost`, { from: readPos, to: next });
      damagedSinceProgress++;
      readPos = next;
      continue;
    }
    const base = bases[i]!;
    const last = i === bases.length - 1;
    const segEnd = Math.min(bases[i + 1] ?? Infinity, durableEnd);
    if (readPos >= segEnd) {
      readPos = bases[i + 1] ?? durableEnd;
      continue;
    }
    const want = Math.min(segEnd - readPos, budget);
    let buf = readRange(base, readPos, want);
    // Whether `buf` stops short of the segment's end only because of the budget.
    let cutByBudget = want < segEnd - readPos && buf.length === want;
    let off = 0;
    for (;;) {
      const r = readEntry(buf, off, readPos);
      if (r.ok) {
        try {
          addEntry(r.entry);
        } catch (err) {
          // Checked bytes the converter cannot take are a bug; the request is kept for a person, not dropped silently.
          quarantine(base, readPos, buf, off, r.entry.end - readPos, `the request cannot be landed: ${(err as Error).message}`);
        }
        off = r.entry.end - readPos;
        continue;
      }
      if (r.short && cutByBudget) {
        if (off > 0) break; // the rest next time
        // One entry larger than the budget: read it whole (its frame gives the length), then go on.
        const len = buf.length >= FRAME_BYTES ? FRAME_BYTES + buf.readUInt32LE(4) : segEnd - readPos;
        buf = readRange(base, readPos, Math.min(len, segEnd - readPos));
        cutByBudget = false;
        continue;
      }
      if (off >= buf.length) break;
      // Bytes that are not a good entry: damage if a good entry follows in this segment, else the segment's tail.
      const whole = cutByBudget ? readRange(base, readPos, segEnd - readPos) : buf;
      const next = nextGoodEntry(whole, off + 1, readPos);
      const to = next < 0 ? whole.length : next;
      if (next < 0 && !last) {
        // The end of a segment before the next began: a write cut short by a crash just after the
        // journal moved to a new segment, synced by nothing, so never answered.
        log('warn', `the receiver's journal segment ${segmentName(base)} ends in ${to - off} bytes of an incomplete write, never answered; skipped`, { segment: segmentName(base), position: readPos + off, bytes: to - off });
        keepAside(init.journalDir, base, readPos + off, whole.subarray(off, to));
      } else {
        quarantine(base, readPos, whole, off, to, r.short ? 'an entry runs past the end of what was written' : r.reason);
      }
      buf = whole;
      cutByBudget = false;
      off = to;
      if (next < 0) break;
    }
    budget -= off;
    readPos += off;
    if (off === buf.length && buf.length < want && !cutByBudget) {
      // The file ends before the next segment begins (see above): nothing was ever written there.
      if (readPos < segEnd) {
        if (last) {
          log('error', `the receiver's journal segment ${segmentName(base)} ends at ${readPos}, before the synced end ${segEnd}; whatever was there is lost`, { segment: segmentName(base) });
          damagedSinceProgress++;
        }
        readPos = segEnd;
      }
    }
  }
  return budget <= 0 && readPos < durableEnd && waitingBytes < MAX_WAITING_BYTES;
}

/* ------------------------------------------------------------------ sessions */

interface SessionCache {
  nextSeq: number;
  /** session.state as this thread last read or wrote it. */
  stateText: string;
  streams: Map<OtlpKind, StreamState & { lastSeq: number }>;
  /** State files not yet written since the last round. */
  dirty: boolean;
  lastAt: string;
}

const sessions = new Map<string, SessionCache>();
const MAX_SESSIONS = 10_000;

function loadSession(session: string): SessionCache {
  const nextSeq = new SequenceCounter(root, session).peek();
  const streams = new Map<OtlpKind, StreamState & { lastSeq: number }>();
  for (const kind of ['otlp_log', 'otlp_span'] as const) {
    const s = streamEnd(otlpDir(root, session), kind);
    if (s) streams.set(kind, { ...s, lastSeq: 0 });
  }
  return { nextSeq, stateText: readText(sessionStatePath(root, session)), streams, dirty: false, lastAt: '' };
}

/** Writes the cursors and session.state of a session (under its lock). */
function writeSessionState(session: string, c: SessionCache): void {
  const dir = otlpDir(root, session);
  for (const [kind, s] of c.streams) {
    const cur: AppendCursor = {
      kind: 'append', source: kind === 'otlp_log' ? 'otlp/logs' : 'otlp/traces', dev: 0, ino: 0, offset: s.next, ord: s.ord,
      size: s.next, mtime: 0, last_seq: s.lastSeq, updated_at: c.lastAt, state: 'active',
    };
    replaceAtomically(join(dir, `${kind}.cursor`), formatCursor(cur), { sync: false });
  }
  // The keys and order of storage/session-state.ts, keeping the local receiver's last_scan.
  const lastScan = parseKv(readText(sessionStatePath(root, session))).get('last_scan');
  const text = formatKv([['schema', 1], ['next_seq', c.nextSeq], ['liveness', 'unknown'], ['last_scan', lastScan]]);
  replaceAtomically(sessionStatePath(root, session), text, { sync: false });
  c.stateText = text;
  c.dirty = false;
}

/** The session's remembered state, unless another writer has been there since (then read from disk). */
function sessionState(session: string, contended: boolean): SessionCache {
  const c = sessions.get(session);
  if (c && !contended && readText(sessionStatePath(root, session)) === c.stateText) return c;
  const fresh = loadSession(session);
  sessions.set(session, fresh);
  if (sessions.size > MAX_SESSIONS) {
    for (const [id, s] of sessions) {
      if (sessions.size <= MAX_SESSIONS) break;
      if (!s.dirty) sessions.delete(id);
    }
  }
  return fresh;
}

/**
 * Adds a session's waiting files to the round, under the session's lock (held until the round is
 * done). Returns what to do once the round has landed, or undefined when the lock is held elsewhere.
 */
function prepareSession(round: Round, session: string, work: SessionWork): (() => boolean) | undefined {
  const lockPath = sessionLockPath(root, session);
  ensureDirDurable(otlpDir(root, session));
  // A lock file already there means another writer is or was in the session (a crashed one
  // leaves it behind): then nothing remembered is trusted.
  const contended = existsSync(lockPath);
  const lock = new FileLock(lockPath);
  if (!lock.tryAcquire()) return undefined;
  try {
    return prepareLocked(round, session, work, lock, contended);
  } catch (err) {
    sessions.delete(session);
    lock.release();
    throw err;
  }
}

/** prepareSession's part under the lock; the round gets the session's files only once all are made. */
function prepareLocked(round: Round, session: string, work: SessionWork, lock: FileLock, contended: boolean): () => boolean {
  const cache = sessionState(session, contended);
  const files: { path: string; parts: string[] }[] = [];
  const dir = otlpDir(root, session);
  const ns = nowNs();
  const stamp = compactStamp(ns);
  const at = rfc3339(ns);
  const errors: Error[] = [];
  for (const d of work.drafts.values()) {
    const seq = cache.nextSeq++;
    const stream = cache.streams.get(d.kind) ?? { ord: 0, next: 0, lastSeq: 0 };
    const header: Omit<Header, 'h' | 'schema'> = {
      seq, at, kind: d.kind, adapter: OTLP_ADAPTER, dialect: DIALECT, src: d.src, session,
      resource: JSON.parse(d.resourceJson) as unknown, scope: JSON.parse(d.scopeJson) as unknown,
    };
    // The Session Data layout of formats/session-data/encode.ts: header, records, and a closing
    // line with the count and the SHA-256 of every byte before it.
    const hash = createHash('sha256');
    const parts: string[] = [];
    const add = (line: string) => {
      hash.update(line, 'utf8');
      parts.push(line);
    };
    add(encodeHeader(header) + '\n');
    const lines: string[] = new Array(d.tails.length);
    for (let i = 0; i < d.tails.length; i++) {
      lines[i] = `{"ord":${++stream.ord},"off":${stream.next},${d.tails[i]}\n`;
      stream.next += d.sizes[i]! + 1;
    }
    add(lines.join(''));
    parts.push(JSON.stringify({ t: 'end', records: d.tails.length, digest: hash.digest('hex') }) + '\n');
    stream.lastSeq = seq;
    cache.streams.set(d.kind, stream);
    files.push({ path: join(dir, landedName(d.kind, stamp, seq)), parts });
  }
  for (const f of files) round.add(f.path, f.parts, (err) => err && errors.push(err));
  return () => {
    try {
      if (errors.length) {
        // Nothing of this session counts as landed: every file is written again next round, after
        // what is on disk (a file that did land this round stays, so its records may land twice).
        sessions.delete(session);
        log('error', `could not land the records of session ${session}; they stay in the journal and are tried again: ${errors[0]!.message}`, { session });
        return false;
      }
      cache.dirty = true;
      cache.lastAt = at;
      if (contended) writeSessionState(session, cache); // someone else is about: leave the state current now
      return true;
    } finally {
      lock.release();
    }
  };
}

/** Writes the state files of every session that landed something since they were last written. */
function flushSessions(): void {
  for (const [session, c] of sessions) {
    if (!c.dirty) continue;
    const lock = new FileLock(sessionLockPath(root, session));
    if (!lock.tryAcquire()) continue; // busy: the next flush tries again (the files are not the authority)
    try {
      if (readText(sessionStatePath(root, session)) !== c.stateText) {
        // Another writer moved the counter: keep the larger, and our streams (only we write otlp/).
        c.nextSeq = Math.max(c.nextSeq, new SequenceCounter(root, session).peek());
      }
      writeSessionState(session, c);
    } catch {
      sessions.delete(session);
    } finally {
      lock.release();
    }
  }
}

/* ------------------------------------------------------------------ the metrics spool */

const SPOOL_NAME = /^metrics-(\d{8}T\d{6}\.\d{9}Z)-(\d{6,})-otlp\.pb$/;
const ANY_SPOOL_FILE = /^metrics-.*\.pb$/;

interface Spool {
  dir: string;
  nextSeq: number;
  stateText: string;
  bytes: number;
  dirty: boolean;
}

const spool: Spool = { dir: init.spoolDir, nextSeq: 1, stateText: '', bytes: 0, dirty: false };

function spoolScan(s: Spool): void {
  let total = 0;
  let next = Number(parseKv(readText(join(s.dir, 'spool.state'))).get('next_seq') ?? 1) || 1;
  for (const name of listDir(s.dir)) {
    if (!ANY_SPOOL_FILE.test(name)) continue;
    const m = SPOOL_NAME.exec(name);
    if (m) next = Math.max(next, Number(m[2]) + 1);
    try { total += statSync(join(s.dir, name)).size; } catch { /* removed meanwhile */ }
  }
  s.bytes = total;
  s.nextSeq = Math.max(s.nextSeq, next);
  s.stateText = readText(join(s.dir, 'spool.state'));
}

/** Counts the spool and clears temporary files a crashed receiver left behind. */
function spoolOpen(waitMs: number): void {
  mkdirSync(spool.dir, { recursive: true });
  const lock = new FileLock(join(spool.dir, '.lock'));
  if (!lock.acquireWithinSync(waitMs)) throw new Error(`the metrics spool ${spool.dir} is locked by another collector (${lock.path}); try again`);
  try {
    for (const name of listDir(spool.dir)) {
      const m = /^\.tmp-metrics-.*-otlp\.pb-(\d+)-[0-9a-f]+$/.exec(name);
      if (m && Number(m[1]) !== process.pid && !processAlive(Number(m[1]))) try { unlinkSync(join(spool.dir, name)); } catch { /* gone */ }
    }
    spoolScan(spool);
  } finally {
    lock.release();
  }
}

function writeSpoolState(s: Spool): void {
  const text = formatKv([['schema', 1], ['next_seq', s.nextSeq]]);
  replaceAtomically(join(s.dir, 'spool.state'), text, { sync: false });
  s.stateText = text;
  s.dirty = false;
}

/** Adds every waiting metrics request to the round, under the spool's lock; undefined when it is held elsewhere. */
function prepareSpool(round: Round, work: SpoolWork[]): (() => SpoolWork[]) | undefined {
  const lockPath = join(spool.dir, '.lock');
  ensureDirDurable(spool.dir);
  const contended = existsSync(lockPath);
  const lock = new FileLock(lockPath);
  if (!lock.tryAcquire()) return undefined;
  try {
    if (contended || readText(join(spool.dir, 'spool.state')) !== spool.stateText) spoolScan(spool);
  } catch (err) {
    lock.release();
    throw err;
  }
  const failed: SpoolWork[] = [];
  let firstError: Error | undefined;
  for (const w of work) {
    const seq = spool.nextSeq++;
    spool.dirty = true;
    round.add(join(spool.dir, `metrics-${compactStamp(w.receivedAtNs)}-${String(seq).padStart(6, '0')}-otlp.pb`), [w.body], (err) => {
      if (err) {
        failed.push(w);
        firstError ??= err;
      } else spool.bytes += w.body.length;
    });
  }
  return () => {
    try {
      if (contended) writeSpoolState(spool);
    } catch { /* written again at the next flush */ } finally {
      lock.release();
    }
    if (failed.length) log('error', `could not land ${failed.length} metrics requests in ${spool.dir}; they stay in the journal and are tried again: ${firstError?.message ?? ''}`, { count: failed.length });
    return failed;
  };
}

function flushSpool(): void {
  if (!spool.dirty) return;
  const lock = new FileLock(join(spool.dir, '.lock'));
  if (!lock.tryAcquire()) return;
  try {
    if (readText(join(spool.dir, 'spool.state')) !== spool.stateText) spoolScan(spool);
    writeSpoolState(spool);
  } finally {
    lock.release();
  }
}

/* ------------------------------------------------------------------ rounds */

let landedFiles = 0, landedRecords = 0, landedSpoolFiles = 0;

/** Lands everything waiting; returns whether anything is still waiting (a lock held elsewhere, a failed write). */
async function landWaiting(): Promise<boolean> {
  const round = new Round();
  const finishers: (() => void)[] = [];
  const now = Date.now();
  for (const [session, work] of sessionWork) {
    let finish: (() => boolean) | undefined;
    try {
      finish = prepareSession(round, session, work);
    } catch (err) {
      log('error', `could not land the records of session ${session}; they stay in the journal and are tried again: ${(err as Error).message}`, { session });
      continue;
    }
    if (!finish) {
      if (!work.waitingSince) work.waitingSince = now;
      if (!work.warned && now - work.waitingSince >= init.lockWaitMs) {
        work.warned = true;
        log('warn', `session ${session} is locked by another collector (${sessionLockPath(root, session)}); its ${work.records} records wait in the journal until it is free`, { session, records: work.records });
      }
      continue;
    }
    finishers.push(() => {
      if (!finish()) return;
      sessionWork.delete(session);
      landedFiles += work.drafts.size;
      landedRecords += work.records;
      for (const d of work.drafts.values()) for (const t of d.tails) waitingBytes -= t.length;
    });
  }
  if (spoolWork.length) {
    const work = spoolWork;
    let finish: (() => SpoolWork[]) | undefined;
    try {
      finish = prepareSpool(round, work);
    } catch (err) {
      log('error', `could not land metrics requests in ${spool.dir}; they stay in the journal and are tried again: ${(err as Error).message}`);
    }
    if (finish) {
      spoolWork = [];
      finishers.push(() => {
        const failed = finish();
        spoolWork = failed.concat(spoolWork);
        for (const w of work) if (!failed.includes(w)) {
          waitingBytes -= w.body.length;
          landedSpoolFiles++;
        }
      });
    }
  }
  await round.land();
  for (const f of finishers) f();
  return sessionWork.size > 0 || spoolWork.length > 0;
}

/** Moves `landed.state` to the first entry not landed, and removes the segments wholly before it. */
function checkpoint(): void {
  let through = readPos;
  for (const w of sessionWork.values()) through = Math.min(through, w.firstAt);
  if (spoolWork.length) through = Math.min(through, spoolWork[0]!.at);
  if (through === landedThrough) return;
  replaceAtomically(join(init.journalDir, LANDED_STATE), formatKv([['schema', 1], ['landed_through', through]]));
  landedThrough = through;
  listSegments();
  // A segment goes once the next one starts at or before the landed position; the last one is the writer's.
  for (let i = 0; i + 1 < bases.length && bases[i + 1]! <= landedThrough; i++) {
    try { unlinkSync(join(init.journalDir, segmentName(bases[i]!))); } catch { /* gone */ }
  }
  listSegments();
}

function progress(): void {
  post({
    op: 'progress', landedThrough, readThrough: durableEnd, spoolBytes: spool.bytes, files: landedFiles, records: landedRecords, spoolFiles: landedSpoolFiles,
    damaged: damagedSinceProgress, waitingSessions: sessionWork.size,
  });
  landedFiles = landedRecords = landedSpoolFiles = damagedSinceProgress = 0;
}

/* ------------------------------------------------------------------ the thread's loop */

/** State files are written when nothing has arrived for this long. */
const QUIET_MS = 250;
let quietTimer: NodeJS.Timeout | undefined;
let retryTimer: NodeJS.Timeout | undefined;
let retryDelay = 10;

function handle(m: WorkerRequest): void {
  if (m.op === 'durable') {
    durableEnd = Math.max(durableEnd, m.end);
    // Nothing new to read means no round will report: answer the notice now, so the next can come.
    if (durableEnd <= readPos) progress();
  }
  else if (m.op === 'rescan-spool') {
    try {
      spoolScan(spool);
    } catch { /* counted again next time */ }
    progress();
    post({ op: 'reply', id: m.id, ok: true });
  } else {
    try {
      flushSessions();
      flushSpool();
      post({ op: 'reply', id: m.id, ok: true });
    } catch (err) {
      post({ op: 'reply', id: m.id, ok: false, message: (err as Error).message });
    }
  }
}

const pace = new BigInt64Array(init.pace);
/** The synced end as the request thread last stored it (a notice only wakes this thread). */
const sharedDurableEnd = () => Number(Atomics.load(pace, PACE_DURABLE_END));

/**
 * Landing is background work: while requests keep arriving, a round is followed by a pause three
 * times as long (landing takes at most a quarter of the time, the pause capped at MAX_PAUSE_MS),
 * so that the request thread and the client keep the CPU. Landing runs flat out as soon as
 * anything says it must: no request for QUIET_PACE_MS, accepted bytes not yet landed at
 * `paceBelowBytes` (a quarter of max_journal_bytes, at most 64 MiB), or someone waiting for a
 * position to land (the service's pass before it parses, shutdown). So a burst is answered at the journal's speed
 * and lands right after it, and under sustained load the backlog settles at that mark and landing
 * takes all the CPU it needs. (A lower thread priority alone does not do it: the scheduler puts a
 * low-weight thread on a core of its own, where it still runs flat out.)
 */
const DUTY = 0.25;
const MAX_PAUSE_MS = 1000;
const QUIET_PACE_MS = 100;
const PACE_POLL_MS = 50;
let lastRoundMs = 0;
let lastRoundEndAt = 0;

function pacedPause(now: number): number {
  const backlog = sharedDurableEnd() - landedThrough;
  const wanted = Number(Atomics.load(pace, PACE_WANTED));
  const quiet = now - Number(Atomics.load(pace, PACE_LAST_ARRIVAL_MS)) >= QUIET_PACE_MS;
  if (quiet || wanted > landedThrough || backlog >= init.paceBelowBytes) return 0;
  return Math.min(MAX_PAUSE_MS, lastRoundMs * (1 / DUTY - 1));
}

/**
 * Rounds start at most this often. Under a stream of requests, a round every so often lands
 * each session's records of the whole interval as one file, where rounds back to back would
 * write one small file per session per request round; creating files, taking locks and syncing
 * them is what the disk spends its time on, and it slows the journal's own sync. An idle
 * receiver lands a request at once.
 */
const MIN_ROUND_MS = 200;
let lastRoundAt = 0;
/** Whether the last round stopped at READ_BYTES with more to read. */
let lastRoundFull = false;
let roundTimer: NodeJS.Timeout | undefined;

/** A round is under way (waiting for its syncs): messages wait for it, and no second one starts. */
let running = false;
const deferred: WorkerRequest[] = [];

function work(): void {
  if (running) return;
  clearTimeout(retryTimer);
  retryTimer = undefined;
  clearTimeout(roundTimer);
  roundTimer = undefined;
  running = true;
  void rounds().finally(() => {
    running = false;
  });
}

async function rounds(): Promise<void> {
  for (;;) {
    for (const m of deferred.splice(0)) handle(m);
    for (let more = receiveMessageOnPort(port); more; more = receiveMessageOnPort(port)) handle(more.message as WorkerRequest);
    durableEnd = Math.max(durableEnd, sharedDurableEnd());
    const hadWaiting = sessionWork.size > 0 || spoolWork.length > 0;
    if (readPos >= durableEnd && !hadWaiting) break;
    const now = monotonicMs();
    const spacing = lastRoundFull ? 0 : MIN_ROUND_MS;
    const wait = Math.max(lastRoundAt + spacing, lastRoundEndAt + pacedPause(now)) - now;
    if (wait > 0) {
      // A paced pause is looked at again every PACE_POLL_MS: it ends as soon as landing must hurry.
      roundTimer = setTimeout(work, Math.min(wait, PACE_POLL_MS));
      return;
    }
    lastRoundAt = now;
    const before = readPos;
    let stillWaiting = false;
    let read = false;
    try {
      lastRoundFull = readEntries();
      read = readPos !== before;
      stillWaiting = await landWaiting();
      checkpoint();
    } catch (err) {
      log('error', `the receiver's landing round failed; what it held stays in the journal: ${(err as Error).message}`);
      stillWaiting = true;
    }
    lastRoundEndAt = monotonicMs();
    lastRoundMs = lastRoundEndAt - lastRoundAt;
    progress();
    if (stillWaiting && !read) {
      // Only waiting work left (a lock held elsewhere, a failing disk), and nothing more can be
      // read (the end, or as much waiting in memory as may): try again later, backing off.
      retryTimer = setTimeout(work, retryDelay);
      retryDelay = Math.min(retryDelay * 2, 1000);
      break;
    }
    if (!stillWaiting) retryDelay = 10;
  }
  for (const m of deferred.splice(0)) handle(m);
  clearTimeout(quietTimer);
  quietTimer = setTimeout(() => {
    if (running) return; // the round under way sets this timer again when it ends
    try {
      flushSessions();
      flushSpool();
    } catch { /* the next flush tries again */ }
  }, QUIET_MS);
}

port.on('message', (m: WorkerRequest) => {
  if (running) {
    deferred.push(m);
    return;
  }
  handle(m);
  // A round already scheduled takes this with it; otherwise one starts (or is scheduled) now.
  if (!roundTimer && (!retryTimer || m.op === 'durable')) work();
});

/**
 * Landing yields the CPU to the request thread when both want it: answering is what a client
 * waits for, and the journal holds what is answered until it lands (bounded by max_journal_bytes).
 */
const LANDING_NICE = Number(process.env.ASZCOL_LANDING_NICE ?? 10);
const priority = LANDING_NICE > 0 ? lowerThreadPriority(LANDING_NICE) : undefined;
if (priority) log('info', `the landing thread runs at normal CPU priority: ${priority}`);

try {
  spoolOpen(init.lockWaitMs);
  listSegments();
  post({ op: 'ready', spoolBytes: spool.bytes });
  // What the journal held at start (acknowledged before a crash or a stop) lands first.
  if (readPos < durableEnd) work();
} catch (err) {
  post({ op: 'failed', message: (err as Error).message });
}
