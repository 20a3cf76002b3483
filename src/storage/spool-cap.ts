/**
 * Bounding a `_metrics/` spool that nothing consumes: no exporter sends its files and no reader
 * reads them, so the sweep that removes sent files (spool-removal.ts) never runs for them. Files
 * older than `maxAgeMs` go, then the oldest until what is left fits in `maxBytes`. Names order
 * the files in time (their received-at stamp), so "oldest" needs no stat of every file's time.
 *
 * The removal holds `_metrics/.lock` (the lock the receiver's landing thread writes under) and
 * notes it in spool.state, so the receiver counts its spool again, as after any removal.
 */
import { existsSync, lstatSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { listDir } from './layout.js';
import { FileLock } from './lock.js';
import { noteRemoval } from './spool-state.js';
import { fsyncDir } from './write-once.js';

export interface SpoolCapOptions {
  /** The spool directory (`<root>/_metrics`). */
  dir: string;
  /** The files this cap may take: one kind of spool file. */
  names: RegExp;
  /** The receiver's request number in a name, for spool.state's counter (undefined: not numbered). */
  seqOf: (name: string) => number | undefined;
  /** 0: no age limit. */
  maxAgeMs: number;
  /** 0: no size limit. */
  maxBytes: number;
  now?: () => number;
  lockWaitMs?: number;
  signal?: AbortSignal;
}

export interface SpoolCapReport {
  removed: number;
  removedBytes: number;
  /** Removed for their age, and (of `removed`) to bring the spool under its size. */
  byAge: number;
  bySize: number;
  /** What is left of this kind. */
  keptFiles: number;
  keptBytes: number;
  /** Another process held the spool's lock past the wait: the cap applies on a later pass. */
  busy: boolean;
  problems: string[];
}

const DEFAULT_LOCK_WAIT_MS = 2000;

export async function capSpool(o: SpoolCapOptions): Promise<SpoolCapReport> {
  const r: SpoolCapReport = { removed: 0, removedBytes: 0, byAge: 0, bySize: 0, keptFiles: 0, keptBytes: 0, busy: false, problems: [] };
  if ((o.maxAgeMs <= 0 && o.maxBytes <= 0) || !existsSync(o.dir)) return r;
  const lock = new FileLock(join(o.dir, '.lock'));
  if (!(await lock.acquireWithin(o.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS, o.signal))) {
    r.busy = !o.signal?.aborted;
    return r;
  }
  try {
    const now = (o.now ?? Date.now)();
    const files: { name: string; size: number; mtimeMs: number }[] = [];
    for (const name of listDir(o.dir)
      .filter((n) => o.names.test(n))
      .sort()) {
      try {
        const st = lstatSync(join(o.dir, name));
        if (st.isFile()) files.push({ name, size: st.size, mtimeMs: st.mtimeMs });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') r.problems.push(`${name}: cannot be read: ${(err as Error).message}`);
      }
    }
    let total = files.reduce((a, f) => a + f.size, 0);
    const going: { name: string; size: number; why: 'age' | 'size' }[] = [];
    for (const f of files) {
      if (o.maxAgeMs > 0 && now - f.mtimeMs > o.maxAgeMs) going.push({ ...f, why: 'age' });
      else if (o.maxBytes > 0 && total > o.maxBytes) going.push({ ...f, why: 'size' });
      else continue;
      total -= f.size;
    }
    r.keptFiles = files.length - going.length;
    r.keptBytes = total;
    if (going.length === 0) return r;
    let highest = 0;
    for (const n of listDir(o.dir)) highest = Math.max(highest, o.seqOf(n) ?? 0);
    noteRemoval(o.dir, highest + 1, going.length);
    for (const g of going) {
      try {
        unlinkSync(join(o.dir, g.name));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') r.problems.push(`${g.name}: cannot be removed: ${(err as Error).message}`);
        continue;
      }
      r.removed++;
      r.removedBytes += g.size;
      if (g.why === 'age') r.byAge++;
      else r.bySize++;
    }
    fsyncDir(o.dir);
  } catch (err) {
    r.problems.push((err as Error).message);
  } finally {
    lock.release();
  }
  return r;
}
