import { readFileSync } from 'node:fs';
import { formatKv, parseKv } from './kv-text.js';
import { replaceAtomically } from './write-once.js';
import type { SyncBatch } from './sync-batch.js';
import { highestSeqOnDisk, sessionStatePath } from './layout.js';

export interface SessionState {
  next_seq: number;
  /** Always `unknown`: nothing tells whether a session is still running. */
  liveness: 'unknown';
  last_scan?: string;
}

export function loadSessionState(root: string, session: string): SessionState | undefined {
  try {
    const m = parseKv(readFileSync(sessionStatePath(root, session), 'utf8'));
    return { next_seq: Number(m.get('next_seq') ?? 1) || 1, liveness: 'unknown', last_scan: m.get('last_scan') };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

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
  /** `isNew`: the session's directory was seen to hold only its lock, so there is no state or landed file to read. */
  constructor(
    readonly root: string,
    readonly session: string,
    isNew = false,
  ) {
    if (isNew) {
      this.next = 1;
      return;
    }
    const saved = loadSessionState(root, session)?.next_seq ?? 1;
    this.next = Math.max(saved, highestSeqOnDisk(root, session) + 1);
  }
  take(): number {
    return this.next++;
  }
  peek(): number {
    return this.next;
  }
}
