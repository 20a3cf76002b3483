import { chmodSync, closeSync, fsyncSync, openSync, renameSync, writeSync, unlinkSync, mkdirSync, linkSync } from 'node:fs';
import { dirname, basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';

function tempPath(final: string): string {
  return join(dirname(final), `.tmp-${basename(final)}-${process.pid}-${randomBytes(4).toString('hex')}`);
}

function fsyncDir(dir: string): void {
  // A rename is durable only once the directory entry is; some filesystems refuse fsync on a directory.
  try {
    const fd = openSync(dir, 'r');
    try { fsyncSync(fd); } finally { closeSync(fd); }
  } catch { /* best effort */ }
}

function writeTemp(final: string, bytes: Buffer | string, mode: number): string {
  mkdirSync(dirname(final), { recursive: true });
  const tmp = tempPath(final);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    const buf = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    let done = 0;
    while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  chmodSync(tmp, mode);
  return tmp;
}

/**
 * Lands an immutable file: temporary name, fsync, read-only, then an exclusive install under
 * the final name. A hard link refuses an existing name (rename would silently replace it), so
 * a landed file can never be overwritten; the temporary name is removed afterwards. A file
 * under its final name is complete and read-only from the moment it appears.
 */
export function writeOnce(final: string, bytes: Buffer | string): void {
  const tmp = writeTemp(final, bytes, 0o444);
  try {
    linkSync(tmp, final);
  } finally {
    unlinkSync(tmp);
  }
  fsyncDir(dirname(final));
}

/** Replaces a small state file (cursor, session.state) atomically: readers see the old or the new whole file. */
export function replaceAtomically(final: string, text: string, opts: { sync?: boolean } = {}): void {
  mkdirSync(dirname(final), { recursive: true });
  const tmp = tempPath(final);
  const fd = openSync(tmp, 'wx', 0o644);
  try {
    writeSync(fd, text);
    if (opts.sync !== false) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, final);
}
