import { chmodSync, closeSync, fsync, fsyncSync, openSync, readdirSync, renameSync, writeSync, unlinkSync, mkdirSync, linkSync } from 'node:fs';
import { promisify } from 'node:util';
import { dirname, basename, join } from 'node:path';
import type { Hash } from 'node:crypto';
import { ScratchBuffer } from '../util/scratch-buffer.js';
import { processAlive } from '../util/process-alive.js';

/**
 * A temporary name beside `final`, unique to this process and call (its pid in the name tells a leftover's owner).
 * The suffix only has to differ between this process's threads and calls (every temporary is opened with O_EXCL, so a
 * clash fails loudly): 32 bits of the thread's own Math.random do that without a call into the crypto library per
 * file, which a first collect made several times per session.
 */
export function tempPath(final: string): string {
  const suffix = Math.floor(Math.random() * 0x1_0000_0000)
    .toString(16)
    .padStart(8, '0');
  return join(dirname(final), `.tmp-${basename(final)}-${process.pid}-${suffix}`);
}

/** `tempPath`'s shape: `.tmp-<final name>-<writer pid>-<hex>`. */
const TEMP_NAME = /^\.tmp-.+-(\d+)-[0-9a-f]+$/;

/** The writer's pid a temporary name carries; undefined for a name that is not a temporary one or names no pid. */
export function tempWriterPid(name: string): number | undefined {
  const m = TEMP_NAME.exec(name);
  return m ? Number(m[1]) : undefined;
}

/**
 * Removes the temporary files in `dir` whose writer process is gone: what a killed run left.
 * A live writer's file is left alone (it may be mid-write); `only` narrows the names considered
 * (a directory two kinds of writer share). Returns the paths removed.
 */
export function removeDeadTemporaries(dir: string, only: (name: string) => boolean = () => true): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return []; // no directory, nothing left in it
  }
  const removed: string[] = [];
  for (const name of names) {
    const pid = tempWriterPid(name);
    if (pid === undefined || processAlive(pid) || !only(name)) continue;
    try {
      unlinkSync(join(dir, name));
      removed.push(join(dir, name));
    } catch {
      /* removed by another sweeper meanwhile */
    }
  }
  return removed;
}

/**
 * Makes a directory's entries (a rename, a link, an unlink in it) durable. Best effort, as some
 * filesystems refuse fsync on a directory; `strict` callers, whose answer depends on it, get the error.
 */
export function fsyncDir(dir: string, opts: { strict?: boolean } = {}): void {
  try {
    const fd = openSync(dir, 'r');
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if (opts.strict) throw err;
  }
}

/** fsync on the thread pool. */
export const fsyncAsync = promisify(fsync);

/** Errors by which a filesystem says it does not sync directories: fsyncDir's best effort passes over these. */
const DIR_SYNC_REFUSED = new Set(['EINVAL', 'EPERM', 'EACCES', 'ENOTSUP', 'EOPNOTSUPP', 'EISDIR', 'EBADF']);

/**
 * fsyncDir with the sync on the thread pool, for many directories synced side by side. A
 * filesystem that refuses to sync a directory is passed over, as by fsyncDir; any other failure
 * (out of descriptors, an I/O error) is thrown, for the caller to say.
 */
export async function fsyncDirAsync(dir: string): Promise<void> {
  let fd: number | undefined;
  try {
    fd = openSync(dir, 'r');
    await fsyncAsync(fd);
  } catch (err) {
    if (!DIR_SYNC_REFUSED.has((err as NodeJS.ErrnoException).code ?? '')) throw err;
  } finally {
    if (fd !== undefined)
      try {
        closeSync(fd);
      } catch {
        /* closed */
      }
  }
}

/**
 * Creates `dir` and any missing parents, syncing the parent of each one it created, so that a
 * file later made durable in it cannot vanish with its directory in a crash.
 */
export function ensureDirDurable(dir: string): void {
  const created = mkdirSync(dir, { recursive: true });
  if (created === undefined) return;
  // `created` is the first directory made; every directory from its parent down to `dir` changed.
  for (let d = dir; ; d = dirname(d)) {
    fsyncDir(dirname(d));
    if (d === created || dirname(d) === d) break;
  }
}

/** A small file's whole content: text, bytes, or bytes in pieces written one after another (no copy joins them). */
export type FileBytes = Buffer | string | readonly Buffer[];

/** Writes all of `bytes` to `fd`, from where it stands. */
export function writeAll(fd: number, bytes: FileBytes): void {
  const pieces = typeof bytes === 'string' ? [Buffer.from(bytes, 'utf8')] : Buffer.isBuffer(bytes) ? [bytes] : bytes;
  for (const buf of pieces) for (let done = 0; done < buf.length;) done += writeSync(fd, buf, done, buf.length - done);
}

/** Writes all of `bytes` to a new temporary file beside `final` (fsynced unless told not to); returns its path. */
function writeTemp(final: string, bytes: FileBytes, mode: number, sync = true): string {
  mkdirSync(dirname(final), { recursive: true });
  const tmp = tempPath(final);
  const fd = openSync(tmp, 'wx', mode);
  try {
    writeAll(fd, bytes);
    if (sync) fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  return tmp;
}

/**
 * Lands an immutable file: temporary name, fsync, read-only, then an exclusive install under
 * the final name. A hard link refuses an existing name (rename would silently replace it), so
 * a landed file can never be overwritten; the temporary name is removed afterwards. A file
 * under its final name is complete and read-only from the moment it appears.
 */
export function writeOnce(final: string, bytes: Buffer | string): void {
  const tmp = writeTemp(final, bytes, 0o600);
  chmodSync(tmp, 0o444);
  try {
    linkSync(tmp, final);
  } finally {
    unlinkSync(tmp);
  }
  fsyncDir(dirname(final));
}

const OUT_CAPACITY = 1 << 20;
/** One reused output buffer per thread: landing allocates no buffer per line or per flush. */
const writeOnceOutScratch = new ScratchBuffer();

/**
 * A write-once file written in pieces, so a large landed file is never held whole in memory.
 * Bytes go to a temporary name; `commit` syncs, makes it read-only and installs it exclusively.
 */
export class WriteOnceFile {
  private readonly tmp: string;
  private fd: number | undefined;
  private used = 0;
  private readonly out: Buffer;

  constructor(readonly final: string) {
    mkdirSync(dirname(final), { recursive: true });
    this.tmp = tempPath(final);
    this.fd = openSync(this.tmp, 'wx', 0o600);
    this.out = writeOnceOutScratch.take(OUT_CAPACITY);
    this.used = 0;
  }

  write(text: string): void {
    // A UTF-16 code unit takes at most 3 bytes in UTF-8, so this bound never truncates.
    if (text.length * 3 > OUT_CAPACITY - this.used) {
      this.flush();
      if (text.length * 3 > OUT_CAPACITY) {
        writeSync(this.fd!, text, null, 'utf8');
        return;
      }
    }
    this.used += this.out.write(text, this.used, 'utf8');
  }

  writeLine(text: string, digest: Hash): void {
    // Encoded once into the output buffer and hashed from there; the newline is a byte, not a new string.
    if (text.length * 3 + 1 > OUT_CAPACITY - this.used) {
      this.flush();
      if (text.length * 3 + 1 > OUT_CAPACITY) {
        const bytes = Buffer.from(text + '\n', 'utf8');
        digest.update(bytes);
        for (let done = 0; done < bytes.length;) done += writeSync(this.fd!, bytes, done, bytes.length - done);
        return;
      }
    }
    const start = this.used;
    this.used += this.out.write(text, start, 'utf8');
    this.out[this.used++] = 10;
    digest.update(this.out.subarray(start, this.used));
  }

  private flush(): void {
    let done = 0;
    while (done < this.used) done += writeSync(this.fd!, this.out, done, this.used - done);
    this.used = 0;
  }

  commit(): void {
    this.flush();
    fsyncSync(this.fd!);
    closeSync(this.fd!);
    this.fd = undefined;
    chmodSync(this.tmp, 0o444);
    try {
      linkSync(this.tmp, this.final);
    } finally {
      unlinkSync(this.tmp);
    }
    fsyncDir(dirname(this.final));
  }

  /**
   * Hands the written file over unsynced and still under its temporary name, for a `SyncBatch`
   * to sync, install and close together with others. The file is spent afterwards.
   */
  release(): { fd: number; tmp: string; final: string } {
    this.flush();
    const fd = this.fd!;
    this.fd = undefined;
    return { fd, tmp: this.tmp, final: this.final };
  }

  abort(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
    try {
      unlinkSync(this.tmp);
    } catch {
      /* already gone */
    }
  }
}

/** Replaces a small state file (cursor, session.state) atomically: readers see the old or the new whole file. */
export function replaceAtomically(final: string, content: FileBytes, opts: { sync?: boolean } = {}): void {
  renameSync(writeTemp(final, content, 0o644, opts.sync !== false), final);
}
