/**
 * The receiver's write-ahead journal on disk: append-only segment files of framed entries, one
 * entry per accepted request (its checked protobuf bytes), shared by the writer on the request
 * thread (journal.ts) and the landing thread that reads it back (landing/).
 *
 * A position in the journal is one number: the count of bytes ever appended. A segment's file
 * name is the position of its first byte (`<16 hex digits>.wal`), so a position names a segment
 * and an offset in it without a table, and the bytes waiting to be landed are a subtraction.
 *
 * Entry layout (little-endian), 24 bytes of frame, then the body:
 *
 *     magic u32 "AJ01" · length u32 (body) · crc32 u32 (of every byte after it) ·
 *     signal u8 · format u8 (0) · names-rule u16 · received-at u64 (ns since the epoch) · body
 *
 * `names-rule` is the version of the names rule (storage/entry-names.ts) the request was checked
 * against when it was answered; 0 in entries written before it was stamped.
 *
 * The magic lets a reader that meets a damaged entry find the next good one; the CRC tells a
 * torn or damaged entry from a good one.
 */
import { closeSync, mkdirSync, openSync, readSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import type { Signal } from '../../otlp/proto.js';
import { NAMES_RULE_VERSION, ROOT_NAMES } from '../../storage/entry-names.js';

export const ENTRY_MAGIC = 0x3130_4a41; // "AJ01" as bytes in the file
export const FRAME_BYTES = 24;
/** A segment is closed once it holds this much; a larger entry goes alone into its own. */
export const SEGMENT_BYTES = 64 * 1024 * 1024;
export const SEGMENT_NAME = /^([0-9a-f]{16})\.wal$/;
export const JOURNAL_DIR = ROOT_NAMES.journal;
/** How far the landing thread has landed, durably: entries before it may be forgotten. */
export const LANDED_STATE = 'landed.state';
/** Where damaged entries are copied, byte for byte, for a person to look at. */
export const DAMAGED_DIR = 'damaged';

const SIGNAL_CODE: Record<Signal, number> = { logs: 1, metrics: 2, traces: 3 };
const CODE_SIGNAL: (Signal | undefined)[] = [undefined, 'logs', 'metrics', 'traces'];

export const segmentName = (base: number) => `${base.toString(16).padStart(16, '0')}.wal`;

export function segmentBase(name: string): number | undefined {
  const m = SEGMENT_NAME.exec(name);
  return m ? parseInt(m[1]!, 16) : undefined;
}

/** The 24-byte frame of an entry; the body is written after it as it is (no copy). `namesRule` other than the current only in tests of old journals. */
export function entryFrame(signal: Signal, receivedAtNs: bigint, body: Uint8Array, namesRule = NAMES_RULE_VERSION): Buffer {
  const f = Buffer.allocUnsafe(FRAME_BYTES);
  f.writeUInt32LE(ENTRY_MAGIC, 0);
  f.writeUInt32LE(body.length, 4);
  f.writeUInt8(SIGNAL_CODE[signal], 12);
  f.writeUInt8(0, 13);
  f.writeUInt16LE(namesRule, 14);
  f.writeBigUInt64LE(receivedAtNs, 16);
  f.writeUInt32LE(crc32(body, crc32(f.subarray(12, FRAME_BYTES))), 8);
  return f;
}

export interface JournalEntry {
  signal: Signal;
  receivedAtNs: bigint;
  body: Buffer;
  /** The names rule's version its items were checked against when answered (0: written before entries said). */
  namesRule: number;
  /** The entry's position (of its frame's first byte) and the position just past it. */
  at: number;
  end: number;
}

export type EntryRead =
  | { ok: true; entry: JournalEntry }
  /** Not enough bytes for a whole entry: the end of what was written (or a torn last write). */
  | { ok: false; short: true }
  /** The bytes here are not a good entry. */
  | { ok: false; short: false; reason: string };

/**
 * Reads the entry starting at `off` in `buf` (which holds a segment's bytes from `base`).
 * `buf` may end mid-entry; that is reported as `short`, not as damage.
 */
export function readEntry(buf: Buffer, off: number, base: number): EntryRead {
  if (buf.length - off < FRAME_BYTES) return { ok: false, short: true };
  if (buf.readUInt32LE(off) !== ENTRY_MAGIC) return { ok: false, short: false, reason: 'no entry starts here (bad magic)' };
  const len = buf.readUInt32LE(off + 4);
  if (buf.length - off - FRAME_BYTES < len) return { ok: false, short: true };
  const body = buf.subarray(off + FRAME_BYTES, off + FRAME_BYTES + len);
  const want = buf.readUInt32LE(off + 8);
  if (crc32(body, crc32(buf.subarray(off + 12, off + FRAME_BYTES))) !== want) return { ok: false, short: false, reason: 'checksum mismatch' };
  const signal = CODE_SIGNAL[buf.readUInt8(off + 12)];
  if (!signal) return { ok: false, short: false, reason: `unknown signal code ${buf.readUInt8(off + 12)}` };
  return {
    ok: true,
    entry: {
      signal,
      receivedAtNs: buf.readBigUInt64LE(off + 16),
      body,
      namesRule: buf.readUInt16LE(off + 14),
      at: base + off,
      end: base + off + FRAME_BYTES + len,
    },
  };
}

/** The offset of the next place at or after `from` where a good entry starts, or -1. */
export function nextGoodEntry(buf: Buffer, from: number, base: number): number {
  const magic = Buffer.allocUnsafe(4);
  magic.writeUInt32LE(ENTRY_MAGIC, 0);
  for (let at = buf.indexOf(magic, from); at >= 0; at = buf.indexOf(magic, at + 1)) {
    if (readEntry(buf, at, base).ok) return at;
  }
  return -1;
}

/** `len` bytes of a file from `offset`, fewer where the file ends first. */
export function readFileRange(path: string, offset: number, len: number): Buffer {
  const buf = Buffer.allocUnsafe(len);
  const fd = openSync(path, 'r');
  try {
    let got = 0;
    while (got < len) {
      const n = readSync(fd, buf, got, len - got, offset + got);
      if (n === 0) return buf.subarray(0, got);
      got += n;
    }
    return buf;
  } finally {
    closeSync(fd);
  }
}

/**
 * Copies bytes of the journal that cannot be landed (damage, a torn write) into `damaged/`,
 * named by their segment and position, for a person to look at; returns the copy's path.
 * Best effort: the caller's log line says where the bytes were either way.
 */
export function keepAside(journalDir: string, base: number, position: number, bytes: Uint8Array): string {
  const dir = join(journalDir, DAMAGED_DIR);
  const path = join(dir, `${segmentName(base)}-${position.toString(16)}.bin`);
  try {
    mkdirSync(dir, { recursive: true });
    writeFileSync(path, bytes);
  } catch {
    /* see above */
  }
  return path;
}
