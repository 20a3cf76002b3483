import { closeSync, constants, fstatSync, lstatSync, openSync, readSync, readlinkSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { SdRecord } from '../formats/session-data/types.js';
import type { AppendCursor, Cursor, CursorSlot } from './cursor.js';
import type { SyncBatch } from './sync-batch.js';
import type { FreshIndex } from './fresh-index.js';
import { landLines, type LandingTarget, type SourceLine } from './landing.js';
import { ScratchBuffer } from '../util/scratch-buffer.js';

export const TAIL_WINDOW = 1 << 20;
export const MAX_WINDOWS_PER_PASS = 65;

export type SourceOutcome =
  | { status: 'unchanged' }
  | { status: 'landed'; files: number; records: number; bytes: number; pending: boolean }
  | { status: 'waiting' }
  | { status: 'source_gone' }
  | { status: 'conflict'; reason: string; known: boolean };

export interface AppendSourceSpec {
  path: string;
  rel: string;
  target: LandingTarget;
  maxDeltaBytes: number;
  maxWindows?: number;
  nextSeq: () => number;
  convert: (line: Buffer) => Omit<SdRecord, 'ord' | 'off' | 'sha' | 'bytes'>;
  now: () => string;
  /** Test hook: called after a file landed and before its cursor commits (a crash there lands records twice). */
  afterLand?: () => void;
  /** Lands into this batch: files and cursor writes are made durable together when its owner commits it (`afterLand` is then the batch's). */
  batch?: SyncBatch;
  /** Collects each landed file's index entries, for `extendIndex`. */
  fresh?: FreshIndex;
}

/**
 * Opens a source file discovery chose by its real path, refusing what changed since: the file
 * itself swapped for a link (`O_NOFOLLOW` fails with ELOOP), for a FIFO or device (not a regular
 * file; `O_NONBLOCK` keeps a FIFO from blocking the open), or a directory on its way swapped for a
 * link (the kernel's name for the opened file, `/proc/self/fd/N`, is not the path asked for). The
 * fd's name is read after the open, so no swap between check and read is possible; where `/proc`
 * is absent only the first two hold. ENOENT is thrown as is: the caller's "source gone".
 */
export function openSourceFile(path: string): number {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ELOOP')
      throw new Error(`${path} is a symbolic link now (discovery found a file): not followed`, { cause: err });
    throw err;
  }
  try {
    if (!fstatSync(fd).isFile()) throw new Error(`${path} is no longer a regular file: not read`);
    let opened: string | undefined;
    try {
      opened = readlinkSync(`/proc/self/fd/${fd}`).replace(/ \(deleted\)$/, '');
    } catch {
      opened = undefined; // no /proc here
    }
    if (opened !== undefined && opened !== path) throw new Error(`${path} opened as ${opened}: a directory on its way became a link after discovery; not read`);
    return fd;
  } catch (err) {
    closeSync(fd);
    throw err;
  }
}

function tailDigest(fd: number, offset: number): string {
  const start = Math.max(0, offset - TAIL_WINDOW);
  const buf = Buffer.allocUnsafe(offset - start);
  let got = 0;
  while (got < buf.length) {
    const n = readSync(fd, buf, got, buf.length - got, start + got);
    if (n === 0) break;
    got += n;
  }
  return createHash('sha256').update(buf.subarray(0, got)).digest('hex');
}

/** One window buffer per thread, reused across sources: a pass over a thousand sources allocates once. */
const windowScratch = new ScratchBuffer();

/**
 * Reads windows of one source into one reused buffer (it grows only for a line longer than the
 * budget), so memory stays flat however large the file is.
 */
class WindowReader {
  private buf: Buffer;
  constructor(
    private readonly fd: number,
    private readonly budget: number,
  ) {
    // A window grown far past the budget (one huge line) is not kept for every source after it.
    windowScratch.trim(4 * budget);
    this.buf = windowScratch.take(budget);
  }

  /**
   * The next window: from `offset`, at most `budget` bytes, cut at the last complete newline.
   * A single line longer than the budget is read whole, so a source can never get stuck behind
   * it. Undefined when no complete line is there yet (a write in progress). The returned bytes
   * are valid until the next call.
   */
  read(offset: number): Buffer | undefined {
    const budget = this.budget;
    let buf = this.buf;
    let n = 0;
    while (n < budget) {
      const r = readSync(this.fd, buf, n, budget - n, offset + n);
      if (r === 0) break;
      n += r;
    }
    if (n === 0) return undefined;
    const last = buf.lastIndexOf(10, n - 1);
    if (last >= 0) return buf.subarray(0, last + 1);
    if (n < budget) return undefined; // end of file inside an unterminated line
    for (;;) {
      if (n === buf.length) {
        this.buf = buf = windowScratch.take(buf.length * 2, n);
      }
      const r = readSync(this.fd, buf, n, buf.length - n, offset + n);
      if (r === 0) return undefined;
      const nl = buf.indexOf(10, n);
      n += r;
      if (nl >= 0 && nl < n) return buf.subarray(0, nl + 1);
    }
  }

  /** Whether a complete line follows `offset`, reading only until the first newline. */
  hasCompleteLine(offset: number): boolean {
    const probe = Buffer.allocUnsafe(1 << 16);
    for (let pos = offset; ;) {
      const r = readSync(this.fd, probe, 0, probe.length, pos);
      if (r === 0) return false;
      const nl = probe.indexOf(10);
      if (nl >= 0 && nl < r) return true;
      pos += r;
    }
  }
}

function* splitLines(window: Buffer, baseOff: number, baseOrd: number): Generator<SourceLine> {
  let from = 0;
  let ord = baseOrd;
  while (from < window.length) {
    const nl = window.indexOf(10, from);
    const end = nl < 0 ? window.length : nl;
    yield { line: window.subarray(from, end), off: baseOff + from, ord: ++ord };
    from = end + 1;
  }
}

function lastUuid(window: Buffer): string | undefined {
  // Diagnosis only: the last `"uuid":"…"` in the window, found without parsing every line again.
  const at = window.lastIndexOf('"uuid":"');
  if (at < 0) return undefined;
  const end = window.indexOf('"', at + 8);
  return end > at ? window.subarray(at + 8, end).toString('utf8') : undefined;
}

/**
 * Whether an append source is, by its cursor, certainly unchanged: an active cursor of this
 * source, and a regular file of the same identity and exactly the size already read. Read-only
 * (one stat, no open): anything else is for `collectAppendSource` to judge.
 */
export function appendSourceQuiet(path: string, rel: string, c: Cursor | undefined): boolean {
  if (c?.kind !== 'append' || c.state !== 'active' || c.source !== rel) return false;
  try {
    const st = lstatSync(path);
    return st.isFile() && st.size === c.offset && st.ino === c.ino;
  } catch {
    return false;
  }
}

/**
 * One append source through the pass's steps: gone, cut short, unchanged, tail check, windows
 * cut at complete lines, land, then commit the cursor. Change is judged by size against offset,
 * never by mtime; a consumed byte that changed is a conflict that is kept.
 */
export function collectAppendSource(spec: AppendSourceSpec, cursor: CursorSlot): SourceOutcome {
  const save = (c: AppendCursor) => cursor.save(c);
  const prev = cursor.load();
  if (prev && prev.kind !== 'append') return { status: 'conflict', reason: `cursor ${cursor.where} is not an append cursor`, known: false };
  if (prev && prev.source !== spec.rel) {
    return { status: 'conflict', reason: `${spec.rel} would land in the stream ${prev.source} already lands in`, known: false };
  }
  if (prev?.state === 'conflict') return { status: 'conflict', reason: prev.reason ?? 'kept from an earlier pass', known: true };

  let fd: number;
  try {
    fd = openSourceFile(spec.path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      if (prev && prev.state !== 'source_gone') save({ ...prev, state: 'source_gone', updated_at: spec.now() });
      return { status: 'source_gone' };
    }
    throw err;
  }
  try {
    const st = fstatSync(fd);
    const c: AppendCursor = prev
      ? { ...prev }
      : { kind: 'append', source: spec.rel, dev: st.dev, ino: st.ino, offset: 0, ord: 0, size: 0, mtime: 0, last_seq: 0, updated_at: '', state: 'active' };
    const restored = c.state === 'source_gone';
    c.state = 'active';
    const conflict = (reason: string): SourceOutcome => {
      save({ ...c, state: 'conflict', reason, size: st.size, mtime: Math.floor(st.mtimeMs / 1000), updated_at: spec.now() });
      return { status: 'conflict', reason, known: false };
    };
    if (st.size < c.offset) return conflict(`the file is ${st.size} bytes, shorter than the ${c.offset} already read: it was cut short`);
    if (st.size === c.offset && st.ino === c.ino) {
      if (restored) save({ ...c, updated_at: spec.now() });
      return { status: 'unchanged' };
    }
    if (c.offset > 0) {
      if (!c.tail_sha256) {
        if (st.ino !== c.ino) return conflict('the file has a new identity and the cursor has no tail digest to check it by');
      } else if (tailDigest(fd, c.offset) !== c.tail_sha256) {
        return conflict(`the ${Math.min(c.offset, TAIL_WINDOW)} bytes before offset ${c.offset} changed: bytes already read were rewritten`);
      }
      c.dev = st.dev;
      c.ino = st.ino; // same bytes reached another way (bind mount, restore, copy): continue
    }

    let files = 0,
      records = 0,
      bytes = 0;
    const maxWindows = spec.maxWindows ?? MAX_WINDOWS_PER_PASS;
    const reader = new WindowReader(fd, spec.maxDeltaBytes);
    for (let w = 0; w < maxWindows; w++) {
      const window = reader.read(c.offset);
      if (!window) break;
      const seq = spec.nextSeq();
      const landed = landLines(spec.target, seq, splitLines(window, c.offset, c.ord), spec.convert, spec.batch, spec.fresh);
      if (!spec.batch) spec.afterLand?.();
      const newOffset = c.offset + window.length;
      // The tail lies inside the window unless the window is shorter than the tail and starts past 0: only then is the file read again.
      const tailStart = Math.max(0, newOffset - TAIL_WINDOW);
      c.tail_sha256 =
        tailStart >= c.offset
          ? createHash('sha256')
              .update(window.subarray(tailStart - c.offset))
              .digest('hex')
          : tailDigest(fd, newOffset);
      c.offset = newOffset;
      c.ord += landed.records;
      c.last_uuid = lastUuid(window) ?? c.last_uuid;
      c.last_seq = seq;
      const now = fstatSync(fd);
      c.size = now.size;
      c.mtime = Math.floor(now.mtimeMs / 1000);
      c.updated_at = spec.now();
      save(c);
      files++;
      records += landed.records;
      bytes += window.length;
    }
    if (files === 0) {
      if (restored || !prev) save({ ...c, size: st.size, mtime: Math.floor(st.mtimeMs / 1000), updated_at: spec.now() });
      else if (prev.ino !== c.ino) save({ ...c, updated_at: spec.now() });
      return { status: 'waiting' };
    }
    // Pending: complete lines remain after the last window this pass may read.
    const pending = files === maxWindows && reader.hasCompleteLine(c.offset);
    return { status: 'landed', files, records, bytes, pending };
  } finally {
    closeSync(fd);
  }
}
