import { closeSync, fstatSync, readFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import type { SdRecord } from '../formats/session-data/types.js';
import { loadCursor, saveCursor, type SnapshotCursor } from './cursor.js';
import { landLines, type LandingTarget } from './landing.js';
import { openSourceFile, type SourceOutcome } from './append-source.js';

export interface SnapshotSourceSpec {
  path: string;
  rel: string;
  target: LandingTarget;
  nextSeq: () => number;
  convert: (doc: Buffer) => Omit<SdRecord, 'ord' | 'off' | 'sha' | 'bytes'>;
  now: () => string;
}

/** Trailing newlines are not content: an editor's final newline must not make a new version. */
function trimTrailingNewlines(buf: Buffer): Buffer {
  let end = buf.length;
  while (end > 0 && (buf[end - 1] === 10 || buf[end - 1] === 13)) end--;
  return buf.subarray(0, end);
}

/**
 * A source rewritten whole (sidecar, manifest, script) is tracked by a digest of its content.
 * A changed digest lands the whole document as a new one-record file: a new immutable version,
 * never an edit. An empty file lands nothing.
 */
export function collectSnapshotSource(spec: SnapshotSourceSpec, cursorPath: string): SourceOutcome {
  const prev = loadCursor(cursorPath);
  if (prev && prev.kind !== 'snapshot') return { status: 'conflict', reason: `cursor ${cursorPath} is not a snapshot cursor`, known: false };
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
      if (prev && prev.state !== 'source_gone') saveCursor(cursorPath, { ...prev, state: 'source_gone', updated_at: spec.now() });
      return { status: 'source_gone' };
    }
    throw err;
  }
  const doc = trimTrailingNewlines(raw);
  const c: SnapshotCursor = prev
    ? { ...prev, state: 'active' }
    : { kind: 'snapshot', source: spec.rel, size: 0, mtime: 0, last_seq: 0, updated_at: '', state: 'active' };
  if (doc.length === 0) {
    if (prev?.state === 'source_gone') saveCursor(cursorPath, { ...c, updated_at: spec.now() });
    return { status: 'unchanged' };
  }
  const digest = createHash('sha256').update(doc).digest('hex');
  if (digest === c.content_sha256) {
    if (prev?.state === 'source_gone') saveCursor(cursorPath, { ...c, updated_at: spec.now() });
    return { status: 'unchanged' };
  }
  const seq = spec.nextSeq();
  landLines(spec.target, seq, [{ line: doc, off: 0, ord: 1 }], spec.convert);
  saveCursor(cursorPath, { ...c, content_sha256: digest, size: raw.length, mtime, last_seq: seq, updated_at: spec.now() });
  return { status: 'landed', files: 1, records: 1, bytes: raw.length, pending: false };
}
