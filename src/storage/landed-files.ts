import { readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { isSessionEntryName, landedDirs, listDir, parseLandedName } from './layout.js';

export interface LandedFileRef {
  seq: number;
  /** Absolute path. */
  path: string;
  /** Relative to the storage root, forward slashes. */
  rel: string;
  prefix: string;
}

/** Every landed file of a session, by sequence. Two files with one sequence are both listed; verify reports them. */
export function listLanded(root: string, session: string): LandedFileRef[] {
  const out: LandedFileRef[] = [];
  for (const { dir } of landedDirs(root, session)) {
    for (const name of listDir(dir)) {
      const p = parseLandedName(name);
      if (!p) continue;
      const path = join(dir, name);
      out.push({ seq: p.seq, path, rel: relative(root, path).split('\\').join('/'), prefix: p.prefix });
    }
  }
  return out.sort((a, b) => a.seq - b.seq);
}

/** The sessions landed under a root, by name; none when the root does not exist yet. */
export function landedSessions(root: string): string[] {
  try {
    return readdirSync(root, { withFileTypes: true })
      .filter((e) => e.isDirectory() && isSessionEntryName(e.name))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}
