/**
 * A session with nothing to do this pass, found without its lock and without writing: every
 * source is unchanged by its cursor, no cursor lacks its source, no writer left anything behind,
 * and the index and the session's counter are current. Such a session costs a few reads and stats; any
 * doubt sends it down the full path, which takes the lock and judges each source itself.
 */
import { join } from 'node:path';
import type { DiscoveredSession } from '../../adapters/claude-code/discovery.js';
import { appendSourceQuiet } from '../../storage/append-source.js';
import { snapshotSourceQuiet } from '../../storage/snapshot-source.js';
import { SESSION_CURSORS, SessionCursors, cursorKey, oldCursorKey } from '../../storage/session-cursors.js';
import { indexDir, readIndexState } from '../../storage/index.js';
import { landedDirs, listDir, parseLandedName } from '../../storage/layout.js';
import { SESSION_STATE } from '../../storage/entry-names.js';

const isTemporary = (name: string) => name.startsWith('.tmp-');

export function quietSession(root: string, s: DiscoveredSession): boolean {
  const top = listDir(join(root, s.id));
  // A lock held now, or left by a killed holder; a temporary anywhere: the full path.
  if (top.length === 0 || top.includes('.lock') || top.some(isTemporary)) return false;
  let cursors: SessionCursors;
  try {
    cursors = SessionCursors.read(root, s.id, top.includes(SESSION_CURSORS));
  } catch {
    return false; // a cursor file that does not read: the full path says why
  }
  // No counter saved in either of its places (session-state.ts): the full path writes one.
  if (cursors.counter.nextSeq === undefined && !top.includes(SESSION_STATE)) return false;
  // The names of the session's cursors: its cursor file's entries and an older root's per-source files.
  const keys = new Set(cursors.keys({ oldLayout: false }));
  let highest = 0;
  const base = join(root, s.id);
  for (const { dir, otlp } of landedDirs(root, s.id)) {
    for (const name of listDir(dir)) {
      if (isTemporary(name)) return false;
      const key = otlp ? undefined : oldCursorKey(base, dir, name);
      if (key) keys.add(key);
      const seq = parseLandedName(name)?.seq ?? 0;
      if (seq > highest) highest = seq;
    }
  }
  // One cursor per source and no other: a cursor whose source is gone is the full path's to mark.
  if (keys.size !== s.sources.length) return false;
  if (listDir(indexDir(root, s.id)).some(isTemporary) || (top.includes('metrics') && listDir(join(root, s.id, 'metrics')).some(isTemporary))) return false;
  if ((readIndexState(root, s.id)?.indexedSeq ?? -1) < highest) return false;
  for (const src of s.sources) {
    const c = cursors.get(cursorKey(src.area, src.areaName, src.prefix));
    if (!(src.reading === 'append' ? appendSourceQuiet(src.path, src.rel, c) : snapshotSourceQuiet(src.path, src.rel, c))) return false;
  }
  return true;
}

/**
 * The sessions that may have something to do, the quiet ones counted into `report` as looked at
 * (every source unchanged). Judged on the caller's thread before any worker starts, so a pass with
 * nothing new starts no worker and loads no converter; a worker judges each remaining session again
 * under its own rules, so a doubt here only costs that second look.
 */
export function sessionsWithWork(root: string, sessions: DiscoveredSession[], report: { sessions: number; sources: number }): DiscoveredSession[] {
  const out: DiscoveredSession[] = [];
  for (const s of sessions) {
    if (!quietSession(root, s)) {
      out.push(s);
      continue;
    }
    report.sessions++;
    report.sources += s.sources.length;
  }
  return out;
}
