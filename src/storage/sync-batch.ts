/**
 * Landed files and the small state files that point at them (cursors, the index, session.state),
 * made durable together rather than one sync after another. The crash-safe order is kept for the
 * whole batch: every landed file is synced under its temporary name, then installed under its
 * final name and its directory synced; only then are the state files replaced. A crash before the
 * end leaves temporaries (swept by the next pass) or landed files no cursor counts yet (landed
 * again, and dropped as duplicates by assembly), never a cursor past what is on disk.
 */
import { chmodSync, closeSync, fsyncSync, linkSync, openSync, renameSync, unlinkSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { fsyncAsync, fsyncDir, fsyncDirAsync, tempPath } from './write-once.js';

interface StagedFile {
  fd: number;
  tmp: string;
  final: string;
}

/** How many landed files a batch holds open before its owner should commit it. */
export const BATCH_FILES = 96;

export class SyncBatch {
  private files: StagedFile[] = [];
  private replaces = new Map<string, string | Buffer>();

  /** Landed files waiting for their sync. */
  get pendingFiles(): number {
    return this.files.length;
  }

  get empty(): boolean {
    return this.files.length === 0 && this.replaces.size === 0;
  }

  /** A write-once file fully written under `tmp` (its descriptor still open): installed as `final` at commit. */
  stageFile(fd: number, tmp: string, final: string): void {
    this.files.push({ fd, tmp, final });
  }

  /** A small state file to replace atomically at commit, after every staged file is durable; the last content staged for a path wins. */
  stageReplace(final: string, content: string | Buffer): void {
    this.replaces.set(final, content);
  }

  /**
   * Makes everything staged durable, syncs side by side on the thread pool. `afterLand` runs once
   * the landed files are installed and before any state file moves (the crash test's point).
   */
  async commit(afterLand?: () => void): Promise<void> {
    const files = this.take();
    try {
      await Promise.all(files.files.map((f) => fsyncAsync(f.fd)));
      const dirs = this.install(files.files);
      await Promise.all([...dirs].map((d) => fsyncDirAsync(d)));
      afterLand?.();
      const temps = writeTemps(files.replaces);
      try {
        await Promise.all(temps.map((t) => fsyncAsync(t.fd)));
      } finally {
        closeAll(temps);
      }
      renameAll(temps);
    } catch (err) {
      discard(files.files);
      throw err;
    }
  }

  /** The same order on this thread, one sync after another (a pass without workers). */
  commitSync(afterLand?: () => void): void {
    const files = this.take();
    try {
      for (const f of files.files) fsyncSync(f.fd);
      for (const d of this.install(files.files)) fsyncDir(d);
      afterLand?.();
      const temps = writeTemps(files.replaces);
      try {
        for (const t of temps) fsyncSync(t.fd);
      } finally {
        closeAll(temps);
      }
      renameAll(temps);
    } catch (err) {
      discard(files.files);
      throw err;
    }
  }

  /** Drops everything staged: temporaries removed, nothing installed. */
  abort(): void {
    discard(this.take().files);
  }

  private take(): { files: StagedFile[]; replaces: Map<string, string | Buffer> } {
    const out = { files: this.files, replaces: this.replaces };
    this.files = [];
    this.replaces = new Map();
    return out;
  }

  /** Closes, makes read-only and installs each synced file exclusively; returns the directories that changed. */
  private install(files: StagedFile[]): Set<string> {
    const dirs = new Set<string>();
    for (const f of files) {
      closeSync(f.fd);
      f.fd = -1;
      chmodSync(f.tmp, 0o444);
      try {
        linkSync(f.tmp, f.final); // refuses an existing name: a landed file is never replaced
      } finally {
        unlinkSync(f.tmp);
      }
      dirs.add(dirname(f.final));
    }
    return dirs;
  }
}

interface TempFile {
  fd: number;
  tmp: string;
  final: string;
}

function writeTemps(replaces: Map<string, string | Buffer>): TempFile[] {
  const temps: TempFile[] = [];
  try {
    for (const [final, content] of replaces) {
      const tmp = tempPath(final);
      const fd = openSync(tmp, 'wx', 0o644);
      temps.push({ fd, tmp, final });
      const buf = typeof content === 'string' ? Buffer.from(content, 'utf8') : content;
      for (let done = 0; done < buf.length;) done += writeSync(fd, buf, done, buf.length - done);
    }
    return temps;
  } catch (err) {
    closeAll(temps);
    for (const t of temps) unlinkQuietly(t.tmp);
    throw err;
  }
}

function closeAll(temps: { fd: number }[]): void {
  for (const t of temps) {
    if (t.fd < 0) continue;
    try {
      closeSync(t.fd);
    } catch {
      /* already closed */
    }
    t.fd = -1;
  }
}

function renameAll(temps: TempFile[]): void {
  for (const [i, t] of temps.entries()) {
    try {
      renameSync(t.tmp, t.final);
    } catch (err) {
      for (const rest of temps.slice(i)) unlinkQuietly(rest.tmp);
      throw err;
    }
  }
}

function discard(files: StagedFile[]): void {
  closeAll(files);
  for (const f of files) unlinkQuietly(f.tmp);
}

function unlinkQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    /* gone already */
  }
}
