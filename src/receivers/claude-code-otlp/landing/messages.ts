/**
 * What the landing thread (land-worker.ts) and the request thread (lander.ts) say to each other,
 * and what the landing thread is started with.
 */

export interface LandWorkerInit {
  root: string;
  journalDir: string;
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
  /** Records parked in the quarantine since the previous progress message, by reason (errno). */
  quarantined: Record<string, number>;
  /** Set while landing is failing for a reason that may pass (a full or read-only disk): what, and since when (wall-clock ms). */
  failing?: { message: string; sinceMs: number };
}

/** Landing thread → request thread. */
export type WorkerMessage =
  | { op: 'ready'; spoolBytes: number }
  | { op: 'failed'; message: string }
  | LandProgress
  | { op: 'reply'; id: number; ok: boolean; message?: string }
  | { op: 'log'; level: 'info' | 'warn' | 'error'; msg: string; fields?: Record<string, unknown> };

/** How the landing classes say something: sent to the request thread, which logs it. */
export type LandLog = (level: 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;
