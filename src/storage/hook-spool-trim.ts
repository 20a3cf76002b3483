/**
 * Trimming a session's hook spool once its lines have landed. Hooks append to the spool by path,
 * each holding a writer marker while the file is open (hook-spool-writers.ts), so the spool is
 * never rewritten in place; it is rotated, under the session's lock:
 *
 *   1. retire   a spool whose every byte is landed (its hook cursor at its size) and that has
 *               grown to `atBytes` is renamed to `<session>.jsonl.retired`. New appends create a
 *               fresh `<session>.jsonl`; a hook that opened the old file before the rename still
 *               writes into the retired one, and the landing keeps reading it past the cursor.
 *   2. switch   once no live writer holds a marker (so nothing can still reach the retired file)
 *               and the cursor is at the retired file's size, the hook cursor moves to offset 0 of
 *               the live spool and names the retired file's inode as landed whole.
 *   3. remove   the retired file is deleted.
 *
 * A kill at any step leaves a state the next pass finishes: a retired file the cursor does not
 * name is read past the cursor (its tail lands once), and one it names is only deleted. The
 * cursor names the inode before the file is deleted, so a later spool that reuses the inode is
 * never taken for it: the next landing of the live spool writes a cursor without the name.
 */
import { readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { formatHookCursor, loadHookCursor, hookCursorPath, retiredSpoolPath, spoolPath } from './hook-landing.js';
import { liveSpoolWriters } from './hook-spool-writers.js';
import { SyncBatch } from './sync-batch.js';
import { fsyncDir } from './write-once.js';

/** A session's spool is rotated once it holds this much, all landed: small spools are left alone, so a busy session is not renamed at every pass. */
export const DEFAULT_TRIM_BYTES = 64 * 1024;

export type TrimStep = 'retired' | 'switched' | 'removed';

export interface TrimOptions {
  root: string;
  session: string;
  atBytes: number;
  now: () => string;
  /** Test hook: called after each step is durable (the crash test kills there). */
  after?: (step: TrimStep) => void;
}

function statOf(path: string): { ino: number; size: number } | undefined {
  try {
    const st = statSync(path);
    return { ino: st.ino, size: st.size };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

function removeRetired(o: TrimOptions): void {
  const path = retiredSpoolPath(o.root, o.session);
  rmSync(path, { force: true });
  fsyncDir(dirname(path));
  o.after?.('removed');
}

/**
 * Which spool file a landing pass reads past the hook cursor: the retired one while its lines are
 * not all landed, else the live one (a retired file the cursor names as landed is deleted first).
 */
export function spoolToRead(o: TrimOptions): string {
  const retired = statOf(retiredSpoolPath(o.root, o.session));
  if (!retired) return spoolPath(o.root, o.session);
  if (loadHookCursor(o.root, o.session)?.retired === retired.ino) {
    removeRetired(o);
    return spoolPath(o.root, o.session);
  }
  return retiredSpoolPath(o.root, o.session);
}

/** Whether a session has a retired spool the trim has not finished with. */
export const hasRetiredSpool = (root: string, session: string) => statOf(retiredSpoolPath(root, session)) !== undefined;

/**
 * After a landing pass committed: retires a fully landed spool, and finishes a retired one that
 * can no longer grow. `switched` means the cursor now reads the live spool, which may hold lines
 * to land in this same pass; `waiting` means the retired file waits for a writer or for its tail.
 * `torn` counts the bytes of a line a killed hook left unfinished at the retired file's end: no
 * writer can finish it, so it goes with the file, and the caller says so.
 */
export function trimSpool(o: TrimOptions): { state: 'none' | 'waiting' } | { state: 'switched'; torn: number } {
  const none = { state: 'none' as const };
  const waiting = { state: 'waiting' as const };
  const cursor = loadHookCursor(o.root, o.session);
  if (!cursor) return none;
  const retiredPath = retiredSpoolPath(o.root, o.session);
  if (!statOf(retiredPath)) {
    const live = statOf(spoolPath(o.root, o.session));
    if (!live || live.size === 0 || live.size < o.atBytes || cursor.retired !== undefined) return none;
    if (cursor.offset !== live.size || cursor.ino !== live.ino) return none;
    renameSync(spoolPath(o.root, o.session), retiredPath);
    fsyncDir(dirname(retiredPath));
    o.after?.('retired');
  }
  // A hook that opened the spool before the rename holds its marker since before it: none left
  // means every line that can reach the retired file is in it now, and its size is final.
  if (liveSpoolWriters(dirname(retiredPath)) > 0) return waiting;
  const retired = statOf(retiredPath)!;
  if (cursor.ino !== retired.ino || cursor.offset > retired.size) return waiting;
  const tail = cursor.offset < retired.size ? readFileSync(retiredPath).subarray(cursor.offset) : Buffer.alloc(0);
  // Complete lines past the cursor land first (the caller lands again and calls back).
  if (tail.includes(10)) return waiting;
  const switched = new SyncBatch();
  switched.stageReplace(
    hookCursorPath(o.root, o.session),
    formatHookCursor(o.session, { ...cursor, offset: 0, ino: 0, retired: retired.ino, updated_at: o.now() }),
  );
  switched.commitSync();
  o.after?.('switched');
  removeRetired(o);
  return { state: 'switched', torn: tail.length };
}
