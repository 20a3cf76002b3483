/**
 * Landed files and the small state files that point at them (cursors, the index, session.state),
 * made durable together rather than one sync after another. The crash-safe order is kept for the
 * whole batch: every landed file is synced under its temporary name, then installed under its
 * final name and its directory synced; only then are the state files replaced. A crash before the
 * end leaves temporaries (swept by the next pass) or landed files no cursor counts yet (landed
 * again, and dropped as duplicates by assembly), never a cursor past what is on disk.
 */
import { chmodSync, closeSync, fsyncSync, linkSync, openSync, renameSync, unlinkSync } from 'node:fs';
import { dirname } from 'node:path';
import { fsyncAsync, fsyncDir, fsyncDirAsync, tempPath, writeAll, type FileBytes } from './write-once.js';
import type { FilesystemSync } from './filesystem-sync.js';

interface StagedFile {
  fd: number;
  tmp: string;
  final: string;
}

/** How many landed files a batch holds open before its owner should commit it. */
export const BATCH_FILES = 96;

/** Points of a whole commit: landed bytes durable but not installed; state files half renamed. */
export type CommitStep = 'files-synced' | 'state-half-moved';

export class SyncBatch {
  private files: StagedFile[] = [];
  private replaces = new Map<string, FileBytes>();

  /**
   * With `whole`, a commit syncs the filesystem twice instead of every file and directory once
   * (filesystem-sync.ts). `step` is the crash tests' hook, told each point a whole commit passes.
   */
  constructor(
    private readonly whole?: FilesystemSync,
    private readonly step?: (at: CommitStep) => void,
  ) {}

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
  stageReplace(final: string, content: FileBytes): void {
    this.replaces.set(final, content);
  }

  /**
   * Makes everything staged durable, syncs side by side on the thread pool. `afterLand` runs once
   * the landed files are installed and before any state file moves (the crash test's point).
   */
  async commit(afterLand?: () => void): Promise<void> {
    const whole = await this.wholeSync();
    if (whole) return this.commitWhole(whole, undefined, afterLand);
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

  /**
   * Two steps in one: this batch's files made durable and installed, then `between` (which stages
   * the state files that follow from them: an index, a session state), then everything staged made
   * durable and the state files moved. With a filesystem sync that is one commit of two syncs; file
   * by file, two commits as before.
   */
  async commitAround(between: () => void, afterLand?: () => void): Promise<void> {
    const whole = await this.wholeSync();
    if (whole) return this.commitWhole(whole, between, afterLand);
    await this.commit(afterLand);
    between();
    await this.commit();
  }

  /**
   * The same order with two syncs of the whole filesystem: the first makes every landed file's
   * bytes durable under its temporary name; the files are installed and the state files written to
   * their temporaries; the second makes the installed names and the state files' bytes durable; only
   * then are the state files renamed into place. When the first sync fails, the files are still open
   * and are synced one by one instead; when the second fails, nothing is renamed (the cursors stay,
   * the next pass lands those bytes again and assembly drops the copies).
   */
  private async commitWhole(whole: FilesystemSync, between: (() => void) | undefined, afterLand?: () => void): Promise<void> {
    const files = this.take();
    let temps: TempFile[] = [];
    try {
      // `bySyncfs`: the landed bytes were made durable by the first sync, so the second may do the rest.
      const bySyncfs = files.files.length === 0 || (await whole.sync());
      if (!bySyncfs) await Promise.all(files.files.map((f) => fsyncAsync(f.fd)));
      this.step?.('files-synced');
      const dirs = this.install(files.files);
      if (between) {
        between();
        const more = this.take();
        // Only state files may follow: a landed file staged now would be installed without its own sync.
        if (more.files.length > 0) {
          discard(more.files);
          throw new Error('a landed file was staged after its batch was installed');
        }
        for (const [path, content] of more.replaces) files.replaces.set(path, content);
      }
      if (files.files.length === 0 && files.replaces.size === 0) return afterLand?.();
      temps = writeTemps(files.replaces);
      if (bySyncfs) {
        // A failure now may have lost what was just installed: no state file moves (never synced again the long way,
        // as a descriptor opened after a write-back error does not report it).
        if (!(await whole.sync())) throw new Error(`the batch was not made durable: ${whole.takeNote() ?? 'the filesystem sync failed'}`);
      } else {
        await Promise.all([...dirs].map((d) => fsyncDirAsync(d)));
        await Promise.all(temps.map((t) => fsyncAsync(t.fd)));
      }
      closeAll(temps);
      afterLand?.();
      const half = Math.ceil(temps.length / 2);
      renameAll(temps.slice(0, half));
      this.step?.('state-half-moved');
      renameAll(temps.slice(half));
    } catch (err) {
      discard(files.files);
      closeAll(temps);
      for (const t of temps) unlinkQuietly(t.tmp);
      throw err;
    }
  }

  /** The filesystem sync this commit may use: given, working here, and covering every directory it changes; else file by file. */
  private async wholeSync(): Promise<FilesystemSync | undefined> {
    return this.whole && (await this.whole.ready()) && this.whole.usable && this.whole.covers(this.directories()) ? this.whole : undefined;
  }

  /** The directories a commit changes: the landed files' and the state files'. */
  private directories(): Set<string> {
    const dirs = new Set<string>();
    for (const f of this.files) dirs.add(dirname(f.final));
    for (const final of this.replaces.keys()) dirs.add(dirname(final));
    return dirs;
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

  private take(): { files: StagedFile[]; replaces: Map<string, FileBytes> } {
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

function writeTemps(replaces: Map<string, FileBytes>): TempFile[] {
  const temps: TempFile[] = [];
  try {
    for (const [final, content] of replaces) {
      const tmp = tempPath(final);
      const fd = openSync(tmp, 'wx', 0o644);
      temps.push({ fd, tmp, final });
      writeAll(fd, content);
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
