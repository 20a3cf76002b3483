import { closeSync, fstatSync, lstatSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { shortSha } from '../formats/session-data/encode.js';
import { readSessionData } from '../formats/session-data/decode.js';
import type { SdRecord } from '../formats/session-data/types.js';
import type { Cursor, CursorSlot, SnapshotCursor } from './cursor.js';
import type { SyncBatch } from './sync-batch.js';
import type { FreshIndex } from './fresh-index.js';
import { landLines, type LandingTarget } from './landing.js';
import { listDir, parseLandedName } from './layout.js';
import { openSourceFile, type SourceOutcome } from './append-source.js';

export interface SnapshotSourceSpec {
  path: string;
  rel: string;
  target: LandingTarget;
  nextSeq: () => number;
  convert: (doc: Buffer) => Omit<SdRecord, 'ord' | 'off' | 'sha' | 'bytes'>;
  now: () => string;
  /** Test hook: called after the version landed and before its cursor commits (where a kill once landed it twice). */
  afterLand?: () => void;
  /** Lands into this batch: files and cursor writes are made durable together when its owner commits it (`afterLand` is then the batch's). */
  batch?: SyncBatch;
  /** Collects each landed file's index entries, for `extendIndex`. */
  fresh?: FreshIndex;
}

/**
 * The sequence of this source's newest version on disk when it lies past the cursor and holds
 * exactly `doc`: a kill between landing and the cursor's commit left it, and landing `doc` again
 * would make a second, identical version. The record's `sha` (SHA-256 prefix of the line) and
 * byte count stand for the content; the header's `src` must be this source.
 */
function uncommittedVersionOf(spec: SnapshotSourceSpec, cursorSeq: number, doc: Buffer): number | undefined {
  let newest: { seq: number; name: string } | undefined;
  for (const name of listDir(spec.target.dir)) {
    const p = parseLandedName(name);
    if (p?.prefix === spec.target.prefix && (!newest || p.seq > newest.seq)) newest = { seq: p.seq, name };
  }
  if (!newest || newest.seq <= cursorSeq) return undefined; // the cursor already accounts for every version on disk
  let landed;
  try {
    landed = readSessionData(join(spec.target.dir, newest.name));
  } catch {
    return undefined; // unreadable: verify names it; landing a good version beside it loses nothing
  }
  const [only, ...more] = landed.records;
  if (more.length || !only || landed.header.src !== spec.rel) return undefined;
  return only.bytes === doc.length && only.sha === shortSha(doc) ? newest.seq : undefined;
}

/** Trailing newlines are not content: an editor's final newline must not make a new version. */
function trimTrailingNewlines(buf: Buffer): Buffer {
  let end = buf.length;
  while (end > 0 && (buf[end - 1] === 10 || buf[end - 1] === 13)) end--;
  return buf.subarray(0, end);
}

/**
 * Whether a snapshot source is, by its cursor, certainly unchanged: an active cursor of this
 * source, a regular file, and content of the digest already landed (or empty). Read-only.
 */
export function snapshotSourceQuiet(path: string, rel: string, c: Cursor | undefined): boolean {
  if (c?.kind !== 'snapshot' || c.state !== 'active' || c.source !== rel) return false;
  try {
    if (!lstatSync(path).isFile()) return false;
    const doc = trimTrailingNewlines(readFileSync(path));
    return doc.length === 0 || createHash('sha256').update(doc).digest('hex') === c.content_sha256;
  } catch {
    return false;
  }
}

/**
 * A source rewritten whole (sidecar, manifest, script) is tracked by a digest of its content.
 * A changed digest lands the whole document as a new one-record file: a new immutable version,
 * never an edit. An empty file lands nothing.
 */
export function collectSnapshotSource(spec: SnapshotSourceSpec, cursor: CursorSlot): SourceOutcome {
  const save = (c: SnapshotCursor) => cursor.save(c);
  const prev = cursor.load();
  if (prev && prev.kind !== 'snapshot') return { status: 'conflict', reason: `cursor ${cursor.where} is not a snapshot cursor`, known: false };
  if (prev && prev.source !== spec.rel) {
    return { status: 'conflict', reason: `${spec.rel} would land where ${prev.source} already lands`, known: false };
  }
  if (prev?.state === 'conflict') return { status: 'conflict', reason: prev.reason ?? 'kept from an earlier pass', known: true };
  let raw: Buffer;
  let mtime: number;
  try {
    const fd = openSourceFile(spec.path);
    try {
      raw = readFileSync(fd);
      mtime = Math.floor(fstatSync(fd).mtimeMs / 1000);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      if (prev && prev.state !== 'source_gone') save({ ...prev, state: 'source_gone', updated_at: spec.now() });
      return { status: 'source_gone' };
    }
    throw err;
  }
  const doc = trimTrailingNewlines(raw);
  const c: SnapshotCursor = prev
    ? { ...prev, state: 'active' }
    : { kind: 'snapshot', source: spec.rel, size: 0, mtime: 0, last_seq: 0, updated_at: '', state: 'active' };
  if (doc.length === 0) {
    if (prev?.state === 'source_gone') save({ ...c, updated_at: spec.now() });
    return { status: 'unchanged' };
  }
  const digest = createHash('sha256').update(doc).digest('hex');
  if (digest === c.content_sha256) {
    if (prev?.state === 'source_gone') save({ ...c, updated_at: spec.now() });
    return { status: 'unchanged' };
  }
  const already = uncommittedVersionOf(spec, c.last_seq, doc);
  if (already !== undefined) {
    save({ ...c, content_sha256: digest, size: raw.length, mtime, last_seq: already, updated_at: spec.now() });
    return { status: 'unchanged' };
  }
  const seq = spec.nextSeq();
  landLines(spec.target, seq, [{ line: doc, off: 0, ord: 1 }], spec.convert, spec.batch, spec.fresh);
  if (!spec.batch) spec.afterLand?.();
  save({ ...c, content_sha256: digest, size: raw.length, mtime, last_seq: seq, updated_at: spec.now() });
  return { status: 'landed', files: 1, records: 1, bytes: raw.length, pending: false };
}
