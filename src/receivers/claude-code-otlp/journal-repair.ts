/**
 * Reading the journal's segments back to find where their good entries end: at start (a crash
 * may have left a torn last write), and after a sync failed while running. Linux reports a failed write-back once and may then mark the pages clean, so a
 * second sync on the same descriptor can succeed while the bytes never reached the disk. The
 * bytes written since the last good sync are therefore read back, checked entry by entry, written
 * again through a fresh descriptor (which makes them dirty anew) and synced; only then are they
 * counted as kept. What cannot be read back whole is cut, as a restart would cut it.
 */
import { closeSync, existsSync, fdatasync, fsyncSync, ftruncateSync, openSync, readFileSync, statSync, truncateSync, unlinkSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { formatKv, parseKv } from '../../storage/kv-text.js';
import { listDir } from '../../storage/layout.js';
import { replaceAtomically } from '../../storage/write-once.js';
import { LANDED_STATE, keepAside, nextGoodEntry, readEntry, readFileRange, segmentBase, segmentName } from './journal-format.js';

const fdatasyncAsync = promisify(fdatasync);

/**
 * The good entries' end in `buf` (a segment's bytes from position `base`), and how many bytes
 * after it are a torn write. A bad entry (damaged, or with a length past the end) followed by a
 * good one is damage, left for the landing thread to report and keep aside; with no good entry
 * after it, it is the last write, cut short before it was synced, so never answered.
 */
export function goodEnd(buf: Buffer, base: number): { end: number; torn: number } {
  let off = 0;
  for (;;) {
    const r = readEntry(buf, off, base);
    if (r.ok) {
      off = r.entry.end - base;
      continue;
    }
    const next = off < buf.length ? nextGoodEntry(buf, off + 1, base) : -1;
    if (next < 0) return { end: base + off, torn: buf.length - off };
    off = next;
  }
}

/**
 * Rewrites in place the entries of the segment at `path` (first position `base`) from `from` (an
 * entry boundary up to which a sync succeeded) to `upTo`, then syncs them. With `cut`, the file
 * also ends at the last good entry (the segment being appended to: what follows was refused to
 * its client or cannot be read back); a closed segment keeps its length, so that positions stay
 * contiguous, and any damage in it is left for the landing thread to set aside. Resolves with
 * the position after the last good entry; throws while the disk still refuses.
 */
export async function rewriteUnsynced(path: string, base: number, from: number, upTo: number, cut: boolean): Promise<number> {
  const fd = openSync(path, 'r+');
  try {
    const buf = readFileRange(path, from - base, Math.max(0, upTo - from));
    const end = goodEnd(buf, from).end;
    const keep = buf.subarray(0, end - from);
    for (let done = 0; done < keep.length;) done += writeSync(fd, keep, done, keep.length - done, from - base + done);
    if (cut) ftruncateSync(fd, end - base);
    await fdatasyncAsync(fd);
    return end;
  } finally {
    closeSync(fd);
  }
}

function syncFile(path: string): void {
  const fd = openSync(path, 'r+');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

/**
 * At start: where landing stands (`landed`), where the good entries end (`end`), the torn bytes
 * cut from segments' ends (kept aside first), and the segments left, oldest first.
 */
export function recoverSegments(dir: string): { landed: number; end: number; tornBytes: number; bases: number[] } {
  const statePath = join(dir, LANDED_STATE);
  const state = parseKv(existsSync(statePath) ? readFileSync(statePath, 'utf8') : '');
  let landed = Number(state.get('landed_through') ?? 0);
  if (!Number.isSafeInteger(landed) || landed < 0) landed = 0;
  const bases = listDir(dir)
    .map(segmentBase)
    .filter((b): b is number => b !== undefined)
    .sort((a, b) => a - b);
  // Segments wholly before the landed position were landed; one left by a crash before its removal goes now.
  while (bases.length > 1 && bases[1]! <= landed) unlinkSync(join(dir, segmentName(bases.shift()!)));
  let tornBytes = 0;
  let end = Math.max(landed, bases.length ? bases[0]! : 0);
  // Every segment's end is checked, not only the last: a crash just after a new segment began
  // can leave the one before it without its last, unsynced (so never answered) entries.
  for (const [k, base] of bases.entries()) {
    const path = join(dir, segmentName(base));
    const next = bases[k + 1];
    const size = statSync(path).size;
    if (next !== undefined && base + size === next) continue;
    const buf = readFileRange(path, 0, size);
    const g = goodEnd(buf, base);
    if (g.torn > 0) {
      keepAside(dir, base, g.end, buf.subarray(g.end - base));
      truncateSync(path, g.end - base);
      tornBytes += g.torn;
    }
    // The recovered end is answered from now on: make sure it is on disk, not only in the page cache.
    syncFile(path);
    end = g.end;
  }
  if (landed > end) {
    // A state ahead of the entries (the journal lost its tail): positions from `end` will be
    // issued again, so the state must not keep pointing past them.
    landed = end;
    replaceAtomically(
      statePath,
      formatKv([
        ['schema', 1],
        ['landed_through', landed],
      ]),
    );
  }
  return { landed, end, tornBytes, bases };
}
