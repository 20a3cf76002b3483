/**
 * A session landed for the first time. Under its lock, a session directory that holds nothing
 * but the lock file has no temporaries to sweep, no cursor to mark pruned, no index or state to
 * read: a heavy user's first pass is mostly such sessions, and each of those checks is a few
 * directory reads. What the pass lands into it is then all there is, so its index is built from
 * memory without listing the files back.
 */
import { readdirSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { indexedFileOf, type FreshIndex } from './fresh-index.js';
import { writeIndexFile } from './index.js';
import type { SyncBatch } from './sync-batch.js';
import { sessionLockPath } from './layout.js';

/** Whether the session's directory holds only its lock file: call under that lock, before anything lands. */
export function sessionIsNew(root: string, session: string): boolean {
  try {
    const names = readdirSync(join(root, session));
    return names.length === 1 && names[0] === basename(sessionLockPath(root, session));
  } catch {
    return false; // unreadable: the full path judges it
  }
}

/**
 * The index of a session whose landed files are exactly `fresh` (a new session under the lock held
 * since `sessionIsNew`), staged in `batch`: the same bytes `extendIndex` writes after listing them,
 * encoded from the columns the pass filled, with no entry object held.
 */
export function indexNewSession(root: string, session: string, fresh: FreshIndex, batch?: SyncBatch): void {
  if (fresh.files.length === 0) return;
  const files = fresh.files.map((x) => indexedFileOf(x, relative(root, x.path).split('\\').join('/')));
  writeIndexFile(root, session, fresh.encode(session, files), batch, true);
}
