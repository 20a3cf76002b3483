/**
 * Who may still be writing into a spool file. Every appender leaves a marker in the spool
 * directory (`.writer-<pid>-<hex>`) before it opens a spool file and takes it away after it closed
 * it, so the trim (hook-spool-trim.ts) can tell when a spool it renamed aside can no longer grow:
 * a hook that opened the file before the rename held its marker since before the rename.
 *
 * A marker whose process is gone (a hook killed mid-append) no longer counts and is swept.
 */
import { randomBytes } from 'node:crypto';
import { closeSync, openSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { processAlive } from '../util/process-alive.js';

const MARKER_PREFIX = '.writer-';

/** Leaves this process's marker in `dir` (which must exist); call `endSpoolWrite` with the answer once the spool file is closed. */
export function beginSpoolWrite(dir: string): string {
  const path = join(dir, `${MARKER_PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`);
  closeSync(openSync(path, 'wx', 0o644));
  return path;
}

export function endSpoolWrite(marker: string): void {
  rmSync(marker, { force: true });
}

/** How many appenders of live processes hold a marker in `dir`; the markers of dead ones are removed. */
export function liveSpoolWriters(dir: string): number {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return 0;
  }
  let live = 0;
  for (const name of names) {
    if (!name.startsWith(MARKER_PREFIX)) continue;
    const pid = Number(name.slice(MARKER_PREFIX.length).split('-')[0]);
    if (Number.isInteger(pid) && pid > 0 && processAlive(pid)) live++;
    else rmSync(join(dir, name), { force: true });
  }
  return live;
}
