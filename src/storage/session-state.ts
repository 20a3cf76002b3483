/**
 * A session's counter lives in two places: `session.state`, written by the OTLP receiver, the plugin's
 * landing and the body collector, and the head of `sources.cursor`, where the local receiver keeps it
 * (so a session it lands needs no file of its own for it). Either may be missing or behind the other;
 * the counter is the larger of the two.
 */
import { readTextIfPresent } from './read-if-present.js';
import { formatKv, parseKv } from './kv-text.js';
import { replaceAtomically } from './write-once.js';
import type { SyncBatch } from './sync-batch.js';
import { highestSeqOnDisk, sessionStatePath } from './layout.js';
import { readCursorsHead, sessionCursorsPath, type CursorsHead } from './session-cursors.js';

export interface SessionState {
  next_seq: number;
  /** Always `unknown`: nothing tells whether a session is still running. */
  liveness: 'unknown';
  last_scan?: string;
}

/** The session's counter from both of its places, or undefined when neither holds it. */
export function loadSessionState(root: string, session: string, fromCursors?: CursorsHead): SessionState | undefined {
  return mergeStates(loadStateFile(root, session), fromCursors ?? readCursorsHead(root, session));
}

/** `session.state` alone (the file the other writers keep). */
function loadStateFile(root: string, session: string): SessionState | undefined {
  const text = readTextIfPresent(sessionStatePath(root, session));
  if (text === undefined) return undefined;
  const m = parseKv(text);
  return { next_seq: Number(m.get('next_seq') ?? 1) || 1, liveness: 'unknown', last_scan: m.get('last_scan') };
}

function mergeStates(file: SessionState | undefined, head: CursorsHead | undefined): SessionState | undefined {
  if (head?.nextSeq === undefined) return file;
  const later = (a?: string, b?: string) => (a === undefined ? b : b === undefined || a > b ? a : b);
  return { next_seq: Math.max(file?.next_seq ?? 1, head.nextSeq), liveness: 'unknown', last_scan: later(file?.last_scan, head.lastScan) };
}

/**
 * The text of both places of a session's counter: a writer that remembers a session between rounds
 * compares it to know whether another writer has moved the counter since.
 */
export function counterFilesText(root: string, session: string): string {
  return `${readTextOrEmpty(sessionStatePath(root, session))}\0${readTextOrEmpty(sessionCursorsPath(root, session))}`;
}

const readTextOrEmpty = (path: string) => readTextIfPresent(path) ?? '';

export function saveSessionState(root: string, session: string, s: SessionState, batch?: SyncBatch): void {
  (batch ? (p: string, c: string) => batch.stageReplace(p, c) : replaceAtomically)(
    sessionStatePath(root, session),
    formatKv([
      ['schema', 1],
      ['next_seq', s.next_seq],
      ['liveness', s.liveness],
      ['last_scan', s.last_scan],
    ]),
  );
}

/**
 * Hands out landed sequence numbers for one session, monotonic across all its streams. It is
 * raised above the highest sequence already on disk when it starts, so a crash between landing
 * a file and saving state can never reissue a number. Use only under the session's lock.
 */
export class SequenceCounter {
  private next: number;
  /**
   * `isNew`: the session's directory was seen to hold only its lock, so there is no state or landed file
   * to read. `fromCursors`: the head of `sources.cursor` when the caller has read it already.
   */
  constructor(
    readonly root: string,
    readonly session: string,
    isNew = false,
    fromCursors?: CursorsHead,
  ) {
    if (isNew) {
      this.next = 1;
      return;
    }
    const saved = loadSessionState(root, session, fromCursors)?.next_seq ?? 1;
    this.next = Math.max(saved, highestSeqOnDisk(root, session) + 1);
  }
  take(): number {
    return this.next++;
  }
  peek(): number {
    return this.next;
  }
}
