/**
 * One landing round's files, landed in phases: write all under temporary names, sync all, link
 * all under their final names, sync their directories. Each file's outcome is reported to its
 * owner; one failing file does not fail the others.
 */
import { chmodSync, closeSync, linkSync, openSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { fsyncAsync, fsyncDirAsync, tempPath } from '../../../storage/write-once.js';
import type { LandLog } from './messages.js';

/** Files (and directories) a round has open at once, at most. */
export const OPEN_AT_ONCE = 128;
/**
 * Syncs a round has on the thread pool at once. The pool (4 threads) is the process's: the
 * request thread's journal sync and gunzip of compressed requests run there too, and must not
 * queue behind a round's hundred file syncs.
 */
export const SYNCS_AT_ONCE = 3;

/** Runs `run` over `items`, `limit` at a time; resolves with the items that failed and why. */
export async function inFlight<T>(items: T[], limit: number, run: (item: T) => Promise<void>): Promise<[T, Error][]> {
  const failed: [T, Error][] = [];
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++]!;
      try {
        await run(item);
      } catch (err) {
        failed.push([item, err as Error]);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return failed;
}

interface RoundFile {
  final: string;
  tmp: string;
  fd?: number;
  parts: (string | Uint8Array)[];
  error?: Error;
  done: (err?: Error) => void;
}

export class Round {
  private readonly files: RoundFile[] = [];

  constructor(private readonly log: LandLog) {}

  get size(): number {
    return this.files.length;
  }

  /** Adds a file to land at `final`; `done` hears how it went once the round has landed. */
  add(final: string, parts: (string | Uint8Array)[], done: (err?: Error) => void): void {
    this.files.push({ final, tmp: tempPath(final), parts, done });
  }

  /**
   * The syncs of a round's files and of their directories overlap on the thread pool
   * (SYNCS_AT_ONCE at a time): measured here, 400 small files synced one after another took
   * 190–215 µs each, four side by side 40–85 µs, and a round of metrics requests is one file per
   * request. Files are written and synced OPEN_AT_ONCE at a time: a round may hold thousands (a
   * spool file per metrics request), and holding them all open would run the process out of file
   * descriptors.
   */
  async land(): Promise<void> {
    for (let i = 0; i < this.files.length; i += OPEN_AT_ONCE) await this.writeAndSync(this.files.slice(i, i + OPEN_AT_ONCE));
    const dirs = new Set<string>();
    for (const f of this.files) {
      if (!f.error) {
        try {
          chmodSync(f.tmp, 0o444);
          linkSync(f.tmp, f.final);
          dirs.add(dirname(f.final));
        } catch (err) {
          f.error = err as Error;
        }
      }
      try {
        unlinkSync(f.tmp);
      } catch {
        /* never created */
      }
    }
    const dirList = [...dirs];
    for (let i = 0; i < dirList.length; i += OPEN_AT_ONCE) {
      const failed = await inFlight(dirList.slice(i, i + OPEN_AT_ONCE), SYNCS_AT_ONCE, fsyncDirAsync);
      // The files are in place and their bytes synced; only their names might not survive a crash
      // of the machine. Said, once per directory (the next round's sync of it covers them again).
      for (const [dir, err] of failed) this.log('error', `could not sync the directory ${dir} after landing files in it: ${err.message}`, { dir });
    }
    for (const f of this.files) f.done(f.error);
  }

  /** Writes each file under its temporary name, syncs them side by side, and closes them. */
  private async writeAndSync(files: RoundFile[]): Promise<void> {
    for (const f of files) {
      try {
        f.fd = openSync(f.tmp, 'wx', 0o600);
        for (const p of f.parts) {
          const buf = typeof p === 'string' ? Buffer.from(p, 'utf8') : p;
          let done = 0;
          while (done < buf.length) done += writeSync(f.fd, buf, done, buf.length - done);
        }
      } catch (err) {
        f.error = err as Error;
      }
      f.parts = [];
    }
    const failed = await inFlight(
      files.filter((f) => f.fd !== undefined && !f.error),
      SYNCS_AT_ONCE,
      (f) => fsyncAsync(f.fd!),
    );
    for (const [f, err] of failed) f.error = err;
    for (const f of files) {
      if (f.fd !== undefined)
        try {
          closeSync(f.fd);
        } catch {
          /* closed */
        }
      f.fd = undefined;
    }
  }
}
