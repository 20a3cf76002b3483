/**
 * `_conversations/collect.quiet`: what a one-shot `aszcol collect` left with nothing to do, so the
 * next one can tell by a stat per source and per session directory that nothing moved, instead of
 * listing each session's landed directories and reading its cursors and index state. A cache only:
 * unsynced, written whole, and ignored when it does not read or was written for another key (the
 * build, the source root, the filter); nothing is landed on its word.
 *
 * Why a stat is enough: a source's size, time and inode change with any write to it; every writer
 * of a session's landed files, cursors, index or state takes the session's lock, whose file is
 * made and removed in the session directory, which sets that directory's time. A time is only
 * trusted when it lies further in the past than the clock's grain at the moment it was read, so a
 * change in the same clock tick as the read cannot keep the old time.
 */
import { mkdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT_NAMES } from './entry-names.js';
import { replaceAtomically } from './write-once.js';

/** A filesystem with sub-second times stamps at the kernel's tick (a few ms); one with whole seconds (FAT: 2 s) gets the coarse grain. */
const FINE_GRAIN_MS = 100;
const COARSE_GRAIN_MS = 2500;

export interface CollectQuiet<Found> {
  /** Whose memory this is: the caller's key (its build and settings); another key's file is not read. */
  key: string;
  /** The sources discovery found, with every directory it listed and that directory's stat then. */
  discovery?: { dirs: [string, string][]; found: Found };
  /** Each session left with nothing to do: its sources' stats and its directory's stat in the root. */
  sessions: Record<string, { sources: string; dir: string }>;
  /** Hook spools wholly landed, by session, with their size then. */
  spools: Record<string, number>;
}

export const collectQuietPath = (root: string) => join(root, ROOT_NAMES.conversations, 'collect.quiet');

/** A stat as one string: size, the times of the last change to the content and to the entry (a chmod), inode. */
const statText = (st: { size: number; mtimeMs: number; ctimeMs: number; ino: number }) => `${st.size}/${st.mtimeMs}/${st.ctimeMs}/${st.ino}`;

/**
 * A path's stat as one string, or undefined when it cannot be stat'ed or its time is too recent to
 * trust at `nowMs` (the local clock, which a local filesystem's coarse clock never runs ahead of).
 */
export function trustedStat(path: string, nowMs: number): string | undefined {
  const st = statSync(path, { throwIfNoEntry: false });
  if (!st) return undefined;
  // Any later change to the content or the entries sets the time to the clock's tick then, so an old time cannot be kept by one.
  const grain = st.mtimeMs % 1000 === 0 ? COARSE_GRAIN_MS : FINE_GRAIN_MS;
  return st.mtimeMs < nowMs - grain ? statText(st) : undefined;
}

/** A path's stat as `trustedStat` writes it, however recent; undefined when it cannot be stat'ed. */
export function statNow(path: string): string | undefined {
  const st = statSync(path, { throwIfNoEntry: false });
  return st ? statText(st) : undefined;
}

export function loadCollectQuiet<Found>(root: string, key: string): CollectQuiet<Found> | undefined {
  try {
    const o = JSON.parse(readFileSync(collectQuietPath(root), 'utf8')) as Partial<CollectQuiet<Found>>;
    if (o.key !== key || typeof o.sessions !== 'object' || o.sessions === null || typeof o.spools !== 'object' || o.spools === null) return undefined;
    return o as CollectQuiet<Found>;
  } catch {
    return undefined;
  }
}

/** Unsynced: a memory lost in a crash only costs the next collect its full look at each session. */
export function saveCollectQuiet<Found>(root: string, memory: CollectQuiet<Found>): void {
  mkdirSync(join(root, ROOT_NAMES.conversations), { recursive: true });
  replaceAtomically(collectQuietPath(root), JSON.stringify(memory) + '\n', { sync: false });
}
