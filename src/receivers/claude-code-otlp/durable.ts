/**
 * Durable writes for a receiver that answers only after its bytes are on disk. The same
 * write-once discipline as storage/write-once.ts (temporary name, fsync, read-only, exclusive
 * hard link, so a landed name is never overwritten), but the waits — fsync, and the write of a
 * large body — run on libuv's thread pool, so the event loop keeps taking requests while a
 * batch is synced. Cheap metadata calls stay synchronous.
 */
import { chmodSync, closeSync, fsync, linkSync, openSync, unlinkSync, write, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { FileLock } from '../../storage/lock.js';
import { OtlpRequestError } from '../../otlp/codec.js';

const fsyncAsync = promisify(fsync);
const writeAsync = (fd: number, buf: Buffer, off: number, len: number): Promise<number> =>
  new Promise((res, rej) => write(fd, buf, off, len, null, (err, n) => (err ? rej(err) : res(n))));

/** Above this a write goes to the thread pool; below it the copy into the page cache is cheaper than the hop. */
const ASYNC_WRITE_BYTES = 64 * 1024;

export const tempPathFor = (final: string) => join(dirname(final), `.tmp-${basename(final)}-${process.pid}-${randomBytes(4).toString('hex')}`);

/**
 * Lands `bytes` under `final` (its directory must exist): complete and read-only from the moment
 * the name appears. The directory entry is made durable by `syncDir`, once per batch.
 */
export async function writeOnceDurable(final: string, bytes: Buffer): Promise<void> {
  const tmp = tempPathFor(final);
  const fd = openSync(tmp, 'wx', 0o600);
  try {
    let done = 0;
    if (bytes.length > ASYNC_WRITE_BYTES) {
      while (done < bytes.length) done += await writeAsync(fd, bytes, done, bytes.length - done);
    } else {
      while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done);
    }
    await fsyncAsync(fd);
  } catch (err) {
    closeSync(fd);
    try { unlinkSync(tmp); } catch { /* gone */ }
    throw err;
  }
  closeSync(fd);
  try {
    chmodSync(tmp, 0o444);
    linkSync(tmp, final);
  } finally {
    unlinkSync(tmp);
  }
}

/** Makes new directory entries durable; a filesystem that refuses fsync on a directory is tolerated. */
export async function syncDir(dir: string): Promise<void> {
  let fd: number;
  try {
    fd = openSync(dir, 'r');
  } catch {
    return;
  }
  try {
    await fsyncAsync(fd);
  } catch { /* best effort, as storage/write-once.ts */ } finally {
    closeSync(fd);
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Takes a cross-process lock, waiting up to `waitMs` while another collector holds it (the
 * local receiver's pass holds a session's lock for a moment). Past that the request is refused
 * as retryable rather than dropped: the client sends it again later.
 */
export async function acquireWithin(lock: FileLock, waitMs: number, what: string): Promise<void> {
  const deadline = Date.now() + waitMs;
  let delay = 5;
  for (;;) {
    let got: boolean;
    try {
      got = lock.tryAcquire();
    } catch (err) {
      throw new OtlpRequestError('storage_error', `cannot take the lock of ${what}: ${(err as Error).message}`, 5);
    }
    if (got) return;
    if (Date.now() >= deadline) {
      throw new OtlpRequestError('busy', `${what} is locked by another collector (${lock.path}); try again`, Math.max(1, Math.ceil(waitMs / 1000)));
    }
    await sleep(Math.min(delay, Math.max(1, deadline - Date.now())));
    delay = Math.min(delay * 2, 100);
  }
}

/** Turns a filesystem failure into a retryable refusal that says what failed. */
export function storageError(err: unknown, what: string): OtlpRequestError {
  if (err instanceof OtlpRequestError) return err;
  return new OtlpRequestError('storage_error', `could not land ${what}: ${(err as Error).message}`, 5);
}
