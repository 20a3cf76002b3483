import { openSync, writeSync, closeSync, readFileSync, renameSync, unlinkSync, linkSync, mkdirSync } from 'node:fs';
import { basename, dirname } from 'node:path';
import { hostname } from 'node:os';
import { randomBytes, randomUUID } from 'node:crypto';
import { LockBusyError } from '../util/errors.js';
import { processAlive } from '../util/process-alive.js';
import { removeDeadTemporaries, tempPath } from './write-once.js';

/**
 * A cross-process lock file, created whole (its holder written, then linked into place, so it is
 * never seen empty). Node has no flock(2), so liveness is judged
 * by the holder's pid: a lock whose process is gone (on this host) is taken over. The takeover
 * moves the stale file aside by rename and checks that what it moved is the stale holder's,
 * so two processes that both found the lock stale cannot both end up holding it.
 */
/** The longest pause between two tries of a waiting acquire. */
const POLL_MS = 20;
/** This machine's name, asked once (a system call each time): a lock's holder names it. */
const HOST = hostname();

export class FileLock {
  private held = false;
  // randomUUID draws from a buffered pool; randomBytes asked the kernel each time, and a first pass takes a lock per session.
  private readonly token = `${process.pid} ${HOST} ${randomUUID().replace('-', '').slice(0, 12)}`;

  constructor(readonly path: string) {}

  tryAcquire(): boolean {
    mkdirSync(dirname(this.path), { recursive: true });
    for (let attempt = 0; attempt < 3; attempt++) {
      if (this.create()) return (this.held = true);
      const holder = this.readHolder();
      if (holder === undefined) continue; // released between our attempts
      if (!isStale(holder)) return false;
      const aside = `${this.path}.stale-${process.pid}-${randomBytes(4).toString('hex')}`;
      try {
        renameSync(this.path, aside);
      } catch {
        continue;
      }
      let moved = '';
      try {
        moved = readFileSync(aside, 'utf8');
      } catch {
        /* gone */
      }
      if (moved !== holder) {
        // We moved a live holder's fresh lock: put it back where it was.
        try {
          linkSync(aside, this.path);
        } catch {
          /* someone else created one meanwhile */
        }
      }
      try {
        unlinkSync(aside);
      } catch {
        /* ignore */
      }
    }
    return false;
  }

  acquire(): void {
    if (!this.tryAcquire()) throw new LockBusyError(this.path, this.readHolder() ?? 'another process');
  }

  /** Tries for up to `waitMs`, blocking the thread between tries (for synchronous callers off the event loop). */
  acquireWithinSync(waitMs: number): boolean {
    const deadline = Date.now() + waitMs;
    for (let delay = 2; !this.tryAcquire(); delay = Math.min(delay * 2, POLL_MS)) {
      if (Date.now() >= deadline) return false;
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, Math.min(delay, Math.max(1, deadline - Date.now())));
    }
    return true;
  }

  /** Tries for up to `waitMs` (or until `signal` aborts), yielding to the event loop between tries. */
  async acquireWithin(waitMs: number, signal?: AbortSignal): Promise<boolean> {
    const deadline = Date.now() + waitMs;
    for (let delay = 2; !this.tryAcquire(); delay = Math.min(delay * 2, POLL_MS)) {
      if (Date.now() >= deadline || signal?.aborted) return false;
      await new Promise((res) => setTimeout(res, Math.min(delay, Math.max(1, deadline - Date.now()))));
    }
    return true;
  }

  release(): void {
    if (!this.held) return;
    this.held = false;
    try {
      if (readFileSync(this.path, 'utf8') === this.token) unlinkSync(this.path);
    } catch {
      /* already gone */
    }
  }

  /**
   * Creates the lock file with its holder already in it: the token goes into a file of our own,
   * which is then hard-linked to the lock's name (EEXIST when held). Opening the lock with O_EXCL
   * and writing after left a moment when another process read an empty holder, judged it stale,
   * and took the lock too.
   */
  private create(): boolean {
    const mine = tempPath(this.path); // a name the sweep of a dead writer's leftovers knows
    let fd: number;
    try {
      fd = openSync(mine, 'wx', 0o644);
    } catch (err) {
      throw namingPath(err as NodeJS.ErrnoException, this.path);
    }
    try {
      try {
        writeSync(fd, this.token);
      } finally {
        closeSync(fd);
      }
      linkSync(mine, this.path);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw namingPath(err as NodeJS.ErrnoException, this.path);
    } finally {
      try {
        unlinkSync(mine);
      } catch {
        /* gone */
      }
    }
  }

  /**
   * Removes what a process killed while creating this lock left beside it (its holder's temporary
   * file); a live creator's is left alone. Owners call it where they first take the lock.
   */
  removeDeadLeftovers(): void {
    const prefix = `.tmp-${basename(this.path)}-`;
    removeDeadTemporaries(dirname(this.path), (name) => name.startsWith(prefix));
  }

  private readHolder(): string | undefined {
    try {
      return readFileSync(this.path, 'utf8');
    } catch {
      return undefined;
    }
  }
}

function isStale(holder: string): boolean {
  const [pidText, host] = holder.split(' ');
  const pid = Number(pidText);
  if (!Number.isInteger(pid) || pid <= 0) return holder.length > 0 ? false : true;
  if (host !== HOST) return false; // cannot judge a process on another host
  return !processAlive(pid);
}

/** The error of a system call on `path` that did not say which (a write on a descriptor), saying it, errno kept. */
function namingPath(err: NodeJS.ErrnoException, path: string): NodeJS.ErrnoException {
  if (err.path || !err.code) return err;
  return Object.assign(new Error(`cannot write the lock file ${path}: ${err.message}`), { code: err.code, syscall: err.syscall, path });
}
