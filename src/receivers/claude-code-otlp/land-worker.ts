/**
 * The landing thread: everything the receiver does to the filesystem happens here,
 * synchronously, so the event loop that takes requests never waits on a disk (under a stream of
 * fsyncs even an `open` or a `rename` can wait for a journal commit).
 *
 * Work is done in rounds. A round takes every request queued so far — session batches and
 * metrics requests alike — and lands them together: first every file is written under a
 * temporary name, then every one is synced, then each is linked under its final name, then each
 * directory is synced. The first sync of a phase commits what the whole round wrote, so the rest
 * return at once: a round costs about two journal commits however many files it lands, and
 * requests that arrive meanwhile form the next round (group commit across sessions).
 *
 * Session work: under the session's `.lock`, one Session Data file per kind and header, the
 * `seq` from the session's counter, `ord` and `off` continuing the kind's stream. A session whose
 * lock another collector holds waits for later rounds, up to lock_wait. The state files
 * (`<kind>.cursor`, `session.state`, `_metrics/spool.state`) are written once things have been
 * quiet for a moment and at shutdown, not per round: rewriting a file by rename costs a commit of
 * its own, and none of them is the authority — after a restart the stream's end is read from the
 * last landed file and every counter is raised above the numbers on disk.
 */
import { closeSync, existsSync, fsyncSync, linkSync, mkdirSync, openSync, readFileSync, statSync, unlinkSync, writeSync, chmodSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { encodeHeader } from '../../formats/session-data/encode.js';
import type { Header } from '../../formats/session-data/types.js';
import { formatCursor, type AppendCursor } from '../../storage/cursor.js';
import { formatKv, parseKv } from '../../storage/kv-text.js';
import { landedName, listDir, otlpDir, sessionLockPath, sessionStatePath } from '../../storage/layout.js';
import { FileLock } from '../../storage/lock.js';
import { SequenceCounter } from '../../storage/session-state.js';
import { replaceAtomically } from '../../storage/write-once.js';
import { compactStamp, nowNs, rfc3339 } from '../../util/time.js';
import { streamEnd, type OtlpKind, type StreamState } from './stream-end.js';

/**
 * One file to land: its kind and header context, and its records as JSON lines without
 * `ord`/`off`. Strings rather than objects, because crossing to this thread copies everything:
 * a few long strings copy much faster than many small objects.
 */
export interface FileSpec {
  kind: OtlpKind;
  src: string;
  adapter: string;
  dialect: string;
  resourceJson: string;
  scopeJson: string;
  /** Each record's JSON after `{"ord":…,"off":…,` (the rest of its line), the lines joined by newlines. */
  tails: string;
  /** Each record's source byte count (the `bytes` field), for the next offset. */
  sizes: number[];
}

export type WorkerRequest =
  | { op: 'session'; id: number; session: string; files: FileSpec[]; lockWaitMs: number }
  | { op: 'spool'; id: number; dir: string; bodies: Uint8Array[]; lockWaitMs: number; maxSpoolBytes: number }
  | { op: 'spool-open'; id: number; dir: string; lockWaitMs: number }
  | { op: 'flush'; id: number };

export type WorkerReply =
  | { id: number; ok: true; files?: number; records?: number; spoolBytes?: number; seqs?: (number | string)[] }
  | { id: number; ok: false; reason: 'busy' | 'storage_error' | 'spool_full'; message: string; retryAfter?: number; spoolBytes?: number };

class Refusal extends Error {
  constructor(readonly reason: 'busy' | 'storage_error' | 'spool_full', message: string, readonly retryAfter?: number) {
    super(message);
  }
}

const sleepSync = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/** Takes a lock, waiting up to `waitMs`; used outside rounds (open, flush), where waiting blocks nothing urgent. */
function acquire(lock: FileLock, waitMs: number, what: string): void {
  const deadline = Date.now() + waitMs;
  let delay = 2;
  for (;;) {
    if (lock.tryAcquire()) return;
    if (Date.now() >= deadline) {
      throw new Refusal('busy', `${what} is locked by another collector (${lock.path}); try again`, Math.max(1, Math.ceil(waitMs / 1000)));
    }
    sleepSync(Math.min(delay, Math.max(1, deadline - Date.now())));
    delay = Math.min(delay * 2, 50);
  }
}

function tempPath(final: string): string {
  return join(dirname(final), `.tmp-${basename(final)}-${process.pid}-${randomBytes(4).toString('hex')}`);
}

function fsyncDir(dir: string): void {
  try {
    const fd = openSync(dir, 'r');
    try { fsyncSync(fd); } finally { closeSync(fd); }
  } catch { /* best effort, as storage/write-once.ts */ }
}

/**
 * The files of one round, landed in phases: write all, sync all, link all, sync their directories.
 * Each file's outcome is reported to its owner; one failing file does not fail the others.
 */
class Round {
  private readonly files: { final: string; tmp: string; fd?: number; parts: (string | Uint8Array)[]; error?: Error; done: (err?: Error) => void }[] = [];

  add(final: string, parts: (string | Uint8Array)[], done: (err?: Error) => void): void {
    this.files.push({ final, tmp: tempPath(final), parts, done });
  }

  get size(): number {
    return this.files.length;
  }

  land(): void {
    for (const f of this.files) {
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
    for (const f of this.files) {
      if (f.fd === undefined) continue;
      try {
        if (!f.error) fsyncSync(f.fd);
      } catch (err) {
        f.error = err as Error;
      }
      try { closeSync(f.fd); } catch { /* closed */ }
    }
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
    for (const d of dirs) fsyncDir(d);
    for (const f of this.files) f.done(f.error);
  }
}

/* ------------------------------------------------------------------ sessions */

interface SessionCache {
  nextSeq: number;
  /** session.state as this thread last read or wrote it. */
  stateText: string;
  streams: Map<OtlpKind, StreamState & { lastSeq: number }>;
  /** State files not yet written since the last batch. */
  dirty: boolean;
  lastAt: string;
}

const sessions = new Map<string, SessionCache>();
const MAX_SESSIONS = 10_000;

function readText(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}

function loadSession(root: string, session: string): SessionCache {
  const nextSeq = new SequenceCounter(root, session).peek();
  const streams = new Map<OtlpKind, StreamState & { lastSeq: number }>();
  for (const kind of ['otlp_log', 'otlp_span'] as const) {
    const s = streamEnd(otlpDir(root, session), kind);
    if (s) streams.set(kind, { ...s, lastSeq: 0 });
  }
  return { nextSeq, stateText: readText(sessionStatePath(root, session)), streams, dirty: false, lastAt: '' };
}

/** Writes the cursors and session.state of a session (under its lock). */
function writeSessionState(root: string, session: string, c: SessionCache): void {
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
function sessionState(root: string, session: string, contended: boolean): SessionCache {
  const c = sessions.get(session);
  if (c && !contended && readText(sessionStatePath(root, session)) === c.stateText) return c;
  const fresh = loadSession(root, session);
  sessions.set(session, fresh);
  if (sessions.size > MAX_SESSIONS) {
    for (const [id, s] of sessions) {
      if (sessions.size <= MAX_SESSIONS) break;
      if (!s.dirty) sessions.delete(id);
    }
  }
  return fresh;
}

/** Why a session cannot land now; `busy` while within its wait, the job is tried again next round. */
type Prepared = { ok: true; finish: () => WorkerReply } | { ok: false; busy: true } | { ok: false; reply: WorkerReply };

/**
 * Adds a session batch's files to the round, under the session's lock (held until the round is
 * done). Returns how to finish it once the round has landed.
 */
function prepareSession(round: Round, m: Extract<WorkerRequest, { op: 'session' }>): Prepared {
  const lockPath = sessionLockPath(root, m.session);
  // A lock file already there means another writer is or was in the session (a crashed one
  // leaves it behind): then nothing remembered is trusted.
  const contended = existsSync(lockPath);
  const lock = new FileLock(lockPath);
  try {
    if (!lock.tryAcquire()) return { ok: false, busy: true };
  } catch (err) {
    return { ok: false, reply: { id: m.id, ok: false, reason: 'storage_error', message: `cannot take ${lockPath}: ${(err as Error).message}`, retryAfter: 5 } };
  }
  try {
    const cache = sessionState(root, m.session, contended);
    const dir = otlpDir(root, m.session);
    mkdirSync(dir, { recursive: true });
    const ns = nowNs();
    const stamp = compactStamp(ns);
    const at = rfc3339(ns);
    const errors: Error[] = [];
    let records = 0;
    for (const f of m.files) {
      const seq = cache.nextSeq++;
      const stream = cache.streams.get(f.kind) ?? { ord: 0, next: 0, lastSeq: 0 };
      const header: Omit<Header, 'h' | 'schema'> = {
        seq, at, kind: f.kind, adapter: f.adapter, dialect: f.dialect, src: f.src, session: m.session,
        resource: JSON.parse(f.resourceJson) as unknown, scope: JSON.parse(f.scopeJson) as unknown,
      };
      // The Session Data layout of formats/session-data/encode.ts: header, records, and a closing
      // line with the count and the SHA-256 of every byte before it.
      const hash = createHash('sha256');
      const parts: string[] = [];
      const add = (line: string) => {
        const l = line + '\n';
        hash.update(l, 'utf8');
        parts.push(l);
      };
      add(encodeHeader(header));
      const tails = f.tails.split('\n');
      if (tails.length !== f.sizes.length) throw new Error(`a batch of ${f.sizes.length} records arrived with ${tails.length} lines`);
      for (let i = 0; i < tails.length; i++) {
        add(`{"ord":${++stream.ord},"off":${stream.next},${tails[i]}`);
        stream.next += f.sizes[i]! + 1;
      }
      parts.push(JSON.stringify({ t: 'end', records: tails.length, digest: hash.digest('hex') }) + '\n');
      stream.lastSeq = seq;
      cache.streams.set(f.kind, stream);
      records += tails.length;
      round.add(join(dir, landedName(f.kind, stamp, seq)), parts, (err) => err && errors.push(err));
    }
    return {
      ok: true,
      finish: () => {
        try {
          if (errors.length) {
            sessions.delete(m.session); // what is on disk is the authority again
            return { id: m.id, ok: false, reason: 'storage_error', message: errors[0]!.message, retryAfter: 5 };
          }
          cache.dirty = true;
          cache.lastAt = at;
          if (contended) writeSessionState(root, m.session, cache); // someone else is about: leave the state current now
          return { id: m.id, ok: true, files: m.files.length, records };
        } catch (err) {
          sessions.delete(m.session);
          return { id: m.id, ok: false, reason: 'storage_error', message: (err as Error).message, retryAfter: 5 };
        } finally {
          lock.release();
        }
      },
    };
  } catch (err) {
    sessions.delete(m.session);
    lock.release();
    return { ok: false, reply: { id: m.id, ok: false, reason: 'storage_error', message: (err as Error).message, retryAfter: 5 } };
  }
}

/** Writes the state files of every session that landed something since they were last written. */
function flushSessions(root: string, waitMs: number): void {
  for (const [session, c] of sessions) {
    if (!c.dirty) continue;
    const lock = new FileLock(sessionLockPath(root, session));
    try {
      acquire(lock, waitMs, `session ${session}`);
    } catch {
      continue; // busy: the next flush tries again
    }
    try {
      if (readText(sessionStatePath(root, session)) !== c.stateText) {
        // Another writer moved the counter: keep the larger, and our streams (only we write otlp/).
        c.nextSeq = Math.max(c.nextSeq, new SequenceCounter(root, session).peek());
      }
      writeSessionState(root, session, c);
    } catch {
      sessions.delete(session);
    } finally {
      lock.release();
    }
  }
}

/* ------------------------------------------------------------------ metrics spool */

const SPOOL_NAME = /^metrics-(\d{8}T\d{6}\.\d{9}Z)-(\d{6,})-otlp\.pb$/;
const ANY_SPOOL_FILE = /^metrics-.*\.pb$/;
const RESCAN_MS = 1000;

interface Spool {
  dir: string;
  nextSeq: number;
  stateText: string;
  bytes: number;
  scannedAt: number;
  dirty: boolean;
}

let spool: Spool | undefined;

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
  s.scannedAt = Date.now();
  s.stateText = readText(join(s.dir, 'spool.state'));
}

function alive(pid: number): boolean {
  if (pid === process.pid) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

function spoolOpen(dir: string, waitMs: number): number {
  mkdirSync(dir, { recursive: true });
  const lock = new FileLock(join(dir, '.lock'));
  acquire(lock, waitMs, 'the metrics spool');
  try {
    for (const name of listDir(dir)) {
      const m = /^\.tmp-metrics-.*-otlp\.pb-(\d+)-[0-9a-f]+$/.exec(name);
      if (m && !alive(Number(m[1]))) try { unlinkSync(join(dir, name)); } catch { /* gone */ }
    }
    spool = { dir, nextSeq: 1, stateText: '', bytes: 0, scannedAt: 0, dirty: false };
    spoolScan(spool);
    return spool.bytes;
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

/** Adds every metrics request of the round to it, under the spool's lock (held until the round is done). */
function prepareSpool(round: Round, msgs: Extract<WorkerRequest, { op: 'spool' }>[]): Prepared {
  const s = spool;
  if (!s) return { ok: false, reply: { id: msgs[0]!.id, ok: false, reason: 'storage_error', message: 'the spool was not opened' } };
  const lockPath = join(s.dir, '.lock');
  const contended = existsSync(lockPath);
  const lock = new FileLock(lockPath);
  try {
    if (!lock.tryAcquire()) return { ok: false, busy: true };
  } catch (err) {
    return { ok: false, reply: { id: msgs[0]!.id, ok: false, reason: 'storage_error', message: `cannot take ${lockPath}: ${(err as Error).message}`, retryAfter: 5 } };
  }
  try {
    mkdirSync(s.dir, { recursive: true });
    if (contended || readText(join(s.dir, 'spool.state')) !== s.stateText) spoolScan(s);
    const max = msgs[0]!.maxSpoolBytes;
    const incoming = msgs.reduce((n, m) => n + m.bodies.reduce((k, b) => k + b.length, 0), 0);
    if (max > 0 && s.bytes + incoming > max && Date.now() - s.scannedAt >= RESCAN_MS) spoolScan(s);
    let room = max > 0 ? max - s.bytes : Infinity;
    const stamp = compactStamp(nowNs());
    const results = msgs.map((m) => m.bodies.map((b): number | string => {
      if (b.length > room) return 'spool_full';
      room -= b.length;
      const seq = s.nextSeq++;
      s.dirty = true;
      return seq;
    }));
    for (const [i, m] of msgs.entries()) {
      for (const [j, b] of m.bodies.entries()) {
        const seq = results[i]![j]!;
        if (typeof seq !== 'number') continue;
        round.add(join(s.dir, `metrics-${stamp}-${String(seq).padStart(6, '0')}-otlp.pb`), [b], (err) => {
          if (err) results[i]![j] = `storage_error:${err.message}`;
          else s.bytes += b.length;
        });
      }
    }
    return {
      ok: true,
      finish: () => {
        try {
          if (contended) writeSpoolState(s);
        } catch { /* written again at the next flush */ } finally {
          lock.release();
        }
        // One reply per message; the caller replies for all of them.
        spoolResults = msgs.map((m, i) => ({ id: m.id, ok: true as const, seqs: results[i], spoolBytes: s.bytes }));
        return spoolResults[0]!;
      },
    };
  } catch (err) {
    lock.release();
    return { ok: false, reply: { id: msgs[0]!.id, ok: false, reason: 'storage_error', message: (err as Error).message, retryAfter: 5 } };
  }
}

let spoolResults: WorkerReply[] = [];

function flushSpool(waitMs: number): void {
  if (!spool?.dirty) return;
  const lock = new FileLock(join(spool.dir, '.lock'));
  try {
    acquire(lock, waitMs, 'the metrics spool');
  } catch {
    return;
  }
  try {
    if (readText(join(spool.dir, 'spool.state')) !== spool.stateText) spoolScan(spool);
    writeSpoolState(spool);
  } finally {
    lock.release();
  }
}

/* ------------------------------------------------------------------ the thread's loop */

const port = parentPort as MessagePort;
const root = (workerData as { root: string }).root;
/** State files are written when nothing has arrived for this long. */
const QUIET_MS = 250;
let quietTimer: NodeJS.Timeout | undefined;
let retryTimer: NodeJS.Timeout | undefined;

/** Work whose lock was busy, tried again each round until its deadline. */
const waiting: { m: Extract<WorkerRequest, { op: 'session' | 'spool' }>; deadline: number }[] = [];

function reply(r: WorkerReply): void {
  port.postMessage(r);
}

function busyReply(m: { id: number; lockWaitMs: number }, what: string): WorkerReply {
  return { id: m.id, ok: false, reason: 'busy', message: `${what} is locked by another collector; try again`, retryAfter: Math.max(1, Math.ceil(m.lockWaitMs / 1000)) };
}

function refusalOf(err: unknown): { reason: 'busy' | 'storage_error' | 'spool_full'; message: string; retryAfter?: number } {
  if (err instanceof Refusal) return { reason: err.reason, message: err.message, retryAfter: err.retryAfter };
  return { reason: 'storage_error', message: (err as Error).message, retryAfter: 5 };
}

/** One round over everything queued: other operations first, then the files of every batch together. */
function runRound(msgs: WorkerRequest[]): void {
  const now = Date.now();
  const work = waiting.splice(0);
  for (const m of msgs) {
    if (m.op === 'session' || m.op === 'spool') work.push({ m, deadline: now + m.lockWaitMs });
    else {
      try {
        if (m.op === 'spool-open') reply({ id: m.id, ok: true, spoolBytes: spoolOpen(m.dir, m.lockWaitMs) });
        else {
          flushSessions(root, 2000);
          flushSpool(2000);
          reply({ id: m.id, ok: true });
        }
      } catch (err) {
        reply({ id: m.id, ok: false, ...refusalOf(err), spoolBytes: spool?.bytes });
      }
    }
  }
  if (work.length === 0) return;
  const round = new Round();
  const finishers: (() => void)[] = [];
  const defer = (w: (typeof work)[number], what: string) => {
    if (Date.now() < w.deadline) waiting.push(w);
    else reply(busyReply(w.m, what));
  };
  for (const w of work) {
    if (w.m.op !== 'session') continue;
    const p = prepareSession(round, w.m);
    if (p.ok) finishers.push(() => reply(p.finish()));
    else if ('busy' in p) defer(w, `session ${w.m.session}`);
    else reply(p.reply);
  }
  const spools = work.filter((w) => w.m.op === 'spool');
  if (spools.length) {
    const p = prepareSpool(round, spools.map((w) => w.m as Extract<WorkerRequest, { op: 'spool' }>));
    if (p.ok) {
      finishers.push(() => {
        p.finish();
        for (const r of spoolResults) reply(r);
        spoolResults = [];
      });
    } else if ('busy' in p) for (const w of spools) defer(w, 'the metrics spool');
    else for (const w of spools) reply({ ...p.reply, id: w.m.id });
  }
  round.land();
  for (const f of finishers) f();
}

function drainPort(first?: WorkerRequest): void {
  // Everything already queued joins this round; whatever arrives while it lands forms the next.
  let msgs: WorkerRequest[] = first ? [first] : [];
  let retry = !first; // called by the retry timer: give the waiting work its round
  for (;;) {
    for (let more = receiveMessageOnPort(port); more; more = receiveMessageOnPort(port)) msgs.push(more.message as WorkerRequest);
    if (msgs.length === 0 && !(retry && waiting.length)) break;
    retry = false;
    runRound(msgs);
    msgs = [];
  }
  clearTimeout(retryTimer);
  // Work waiting for a lock is tried again shortly, not in a spin.
  if (waiting.length) retryTimer = setTimeout(() => drainPort(), 10);
  clearTimeout(quietTimer);
  quietTimer = setTimeout(() => {
    try {
      flushSessions(root, 1000);
      flushSpool(1000);
    } catch { /* the next flush tries again */ }
  }, QUIET_MS);
}

port.on('message', (m: WorkerRequest) => drainPort(m));
