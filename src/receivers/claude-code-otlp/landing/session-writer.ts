/**
 * Landing in sessions: each session's waiting drafts become Session Data files in its `otlp/`
 * directory, under the session's `.lock`, `seq` from the session's counter, `ord` and `off`
 * continuing the kind's stream. What it knows of a session (next seq, each stream's end) is
 * cached between rounds and trusted only while nobody else has been in the session; the state
 * files (`<kind>.cursor`, `session.state`) are written by flush(), not per round: none of them is
 * the authority — after a restart the stream's end is read from the last landed file.
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { encodeHeader } from '../../../formats/session-data/encode.js';
import type { Header } from '../../../formats/session-data/types.js';
import { formatCursor, type AppendCursor } from '../../../storage/cursor.js';
import { formatKv, parseKv } from '../../../storage/kv-text.js';
import { landedName, otlpDir, sessionLockPath, sessionStatePath } from '../../../storage/layout.js';
import type { FileLock } from '../../../storage/lock.js';
import { SessionLock } from '../../../storage/session-lock.js';
import { SequenceCounter, counterFilesText } from '../../../storage/session-state.js';
import { ensureDirDurable, replaceAtomically } from '../../../storage/write-once.js';
import { compactStamp, nowNs, rfc3339 } from '../../../util/time.js';
import { DIALECT, OTLP_ADAPTER } from '../../../adapters/claude-code/otlp-dialect.js';
import { streamEnd, type OtlpKind, type StreamState } from '../stream-end.js';
import type { LandLog } from './messages.js';
import { readTextOrEmpty } from './read-text.js';
import type { Round } from './round.js';
import type { SessionWork } from './waiting-work.js';

interface SessionCache {
  nextSeq: number;
  /** Both places of the session's counter (session.state, sources.cursor) as this thread last read or wrote them. */
  stateText: string;
  streams: Map<OtlpKind, StreamState & { lastSeq: number }>;
  /** State files not yet written since the last round. */
  dirty: boolean;
  lastAt: string;
}

/** Sessions remembered at most; clean ones beyond it are forgotten (read again from disk when needed). */
export const MAX_SESSIONS = 10_000;

export class SessionWriter {
  private readonly sessions = new Map<string, SessionCache>();

  constructor(
    private readonly root: string,
    private readonly log: LandLog,
    private readonly clockNs: () => bigint = nowNs,
  ) {}

  /** How many sessions are remembered. */
  get cached(): number {
    return this.sessions.size;
  }

  /**
   * Adds a session's waiting files to the round, under the session's lock (held until the round is
   * done). Returns what to do once the round has landed (which gives the first error when not all
   * of the session's files landed), or undefined when the lock is held elsewhere.
   */
  prepare(round: Round, session: string, work: SessionWork): (() => Error | undefined) | undefined {
    const lockPath = sessionLockPath(this.root, session);
    ensureDirDurable(otlpDir(this.root, session));
    // A lock file already there means another writer is or was in the session (a crashed one
    // leaves it behind): then nothing remembered is trusted.
    const contended = existsSync(lockPath);
    const lock = new SessionLock(this.root, session);
    if (!lock.tryAcquire()) return undefined;
    try {
      return this.prepareLocked(round, session, work, lock, contended);
    } catch (err) {
      this.sessions.delete(session);
      lock.release();
      throw err;
    }
  }

  /** Writes the state files of every session that landed something since they were last written. */
  flush(): void {
    for (const [session, c] of this.sessions) {
      if (!c.dirty) continue;
      const lock = new SessionLock(this.root, session);
      if (!lock.tryAcquire()) continue; // busy: the next flush tries again (the files are not the authority)
      try {
        if (counterFilesText(this.root, session) !== c.stateText) {
          // Another writer moved the counter: keep the larger, and our streams (only we write otlp/).
          c.nextSeq = Math.max(c.nextSeq, new SequenceCounter(this.root, session).peek());
        }
        this.writeState(session, c);
      } catch {
        this.sessions.delete(session);
      } finally {
        lock.release();
      }
    }
  }

  /** prepare's part under the lock; the round gets the session's files only once all are made. */
  private prepareLocked(round: Round, session: string, work: SessionWork, lock: FileLock, contended: boolean): () => Error | undefined {
    if (!this.sessions.has(session)) lock.removeDeadLeftovers(); // first time in this process: what a killed writer left
    const cache = this.state(session, contended);
    const files: { path: string; parts: string[] }[] = [];
    const dir = otlpDir(this.root, session);
    const ns = this.clockNs();
    const stamp = compactStamp(ns);
    const at = rfc3339(ns);
    const errors: Error[] = [];
    for (const d of work.drafts.values()) {
      const seq = cache.nextSeq++;
      const stream = cache.streams.get(d.kind) ?? { ord: 0, next: 0, lastSeq: 0 };
      const header: Omit<Header, 'h' | 'schema'> = {
        seq,
        at,
        kind: d.kind,
        adapter: OTLP_ADAPTER,
        dialect: DIALECT,
        src: d.src,
        session,
        resource: JSON.parse(d.resourceJson) as unknown,
        scope: JSON.parse(d.scopeJson) as unknown,
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
          // Nothing of this session counts as landed: every file is written again next round (or
          // the records are quarantined), after what is on disk (a file that did land this round
          // stays, so its records may land twice). The caller says which.
          this.sessions.delete(session);
          return errors[0];
        }
        cache.dirty = true;
        cache.lastAt = at;
        if (contended) this.writeState(session, cache); // someone else is about: leave the state current now
        return undefined;
      } finally {
        lock.release();
      }
    };
  }

  private load(session: string): SessionCache {
    const nextSeq = new SequenceCounter(this.root, session).peek();
    const streams = new Map<OtlpKind, StreamState & { lastSeq: number }>();
    for (const kind of ['otlp_log', 'otlp_span'] as const) {
      const s = streamEnd(otlpDir(this.root, session), kind);
      if (s) streams.set(kind, { ...s, lastSeq: 0 });
    }
    return { nextSeq, stateText: counterFilesText(this.root, session), streams, dirty: false, lastAt: '' };
  }

  /** Writes the cursors and session.state of a session (under its lock). */
  private writeState(session: string, c: SessionCache): void {
    const dir = otlpDir(this.root, session);
    for (const [kind, s] of c.streams) {
      const cur: AppendCursor = {
        kind: 'append',
        source: kind === 'otlp_log' ? 'otlp/logs' : 'otlp/traces',
        dev: 0,
        ino: 0,
        offset: s.next,
        ord: s.ord,
        size: s.next,
        mtime: 0,
        last_seq: s.lastSeq,
        updated_at: c.lastAt,
        state: 'active',
      };
      replaceAtomically(join(dir, `${kind}.cursor`), formatCursor(cur), { sync: false });
    }
    // The keys and order of storage/session-state.ts, keeping the local receiver's last_scan.
    const lastScan = parseKv(readTextOrEmpty(sessionStatePath(this.root, session))).get('last_scan');
    const text = formatKv([
      ['schema', 1],
      ['next_seq', c.nextSeq],
      ['liveness', 'unknown'],
      ['last_scan', lastScan],
    ]);
    replaceAtomically(sessionStatePath(this.root, session), text, { sync: false });
    c.stateText = counterFilesText(this.root, session);
    c.dirty = false;
  }

  /** The session's remembered state, unless another writer has been there since (then read from disk). */
  private state(session: string, contended: boolean): SessionCache {
    const c = this.sessions.get(session);
    if (c && !contended && counterFilesText(this.root, session) === c.stateText) return c;
    const fresh = this.load(session);
    this.sessions.set(session, fresh);
    if (this.sessions.size > MAX_SESSIONS) {
      for (const [id, s] of this.sessions) {
        if (this.sessions.size <= MAX_SESSIONS) break;
        if (!s.dirty) this.sessions.delete(id);
      }
    }
    return fresh;
  }
}
