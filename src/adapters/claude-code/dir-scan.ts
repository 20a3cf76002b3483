/**
 * The plugin's best-effort look at what a shell command changed: the entries directly inside the
 * working directory, with their size and modification time, before and after the command. It is
 * shallow and bounded (one directory level, at most `limit` entries) so a hook stays inside its
 * time budget; a change deeper down, or after the limit, is not seen, and the scan says so.
 */
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { DirScan } from './hook-event.js';

export function shallowScan(dir: string, limit: number): DirScan {
  const entries: Record<string, string> = {};
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return { dir, entries, complete: false };
  }
  names.sort();
  for (const name of names.slice(0, limit)) {
    try {
      const st = statSync(join(dir, name));
      entries[name] = st.isDirectory() ? 'dir' : `${st.size}:${Math.round(st.mtimeMs)}`;
    } catch {
      // Gone between the listing and the look: it is simply not in this scan.
    }
  }
  return { dir, entries, complete: names.length <= limit };
}

/**
 * The last name a scan looked at: a bounded scan kept the first names in sorted order, so a name
 * after its last one (or any name, when the directory could not be read) was never looked at.
 */
function horizon(scan: DirScan): string | undefined {
  if (scan.complete) return undefined;
  let last = '';
  for (const name of Object.keys(scan.entries)) if (name > last) last = name;
  return last;
}

/**
 * Names whose entry differs between two scans of the same directory: created, removed or
 * rewritten. Only names both scans looked at are compared: past a bounded scan's last name an
 * entry is unseen, not removed (a new file sorting early pushes a later one out of the bound).
 */
export function scanDifference(before: DirScan, after: DirScan): string[] {
  const limits = [horizon(before), horizon(after)].filter((h): h is string => h !== undefined);
  const seenByBoth = (n: string) => limits.every((h) => h !== '' && n <= h);
  const names = new Set([...Object.keys(before.entries), ...Object.keys(after.entries)]);
  return [...names]
    .filter((n) => seenByBoth(n) && before.entries[n] !== after.entries[n] && !(before.entries[n] === 'dir' && after.entries[n] === 'dir'))
    .sort();
}
