/**
 * The index brought up to files this process has just landed, from the records it wrote rather
 * than by reading the files back: the collector's pass parses every line once, not twice.
 */
import type { FileKind } from '../formats/session-data/types.js';
import { listLanded } from './landed-files.js';
import { loadIndex, saveIndex, updateIndex, type IndexEntry, type IndexedFile, type SessionIndex } from './index.js';
import type { SyncBatch } from './sync-batch.js';

/** A file as it was landed: what its index row needs, and its records' entries. */
export interface FreshlyLanded {
  seq: number;
  /** Absolute path of the landed file. */
  path: string;
  kind: FileKind;
  stream?: string;
  batch?: string;
  /** SHA-256 of the whole file, closing line included. */
  digest: string;
  records: number;
  /** How many records carry a workspace change (see `IndexedFile.changes`). */
  changes?: number;
  /** A transcript's source path (see `IndexedFile.src`). */
  src?: string;
  entries: IndexEntry[];
}

/**
 * Adds `fresh` to the session's index. Only when the files on disk above `indexed_seq` are exactly
 * these (same sequences, same paths) are they taken from memory; anything else (a killed pass's
 * files, an index deleted or damaged, another writer's files) is read from disk by `updateIndex`.
 * Call under the session's lock, after the files are installed.
 */
export function extendIndex(
  root: string,
  session: string,
  fresh: FreshlyLanded[],
  batch?: SyncBatch,
): { index: SessionIndex; added: number; problems: string[] } {
  const loaded = loadIndex(root, session);
  const ix: SessionIndex = loaded && loaded.session === session ? loaded : { session, indexedSeq: 0, files: [], entries: [] };
  const known = new Set(ix.files.map((f) => f.seq));
  const onDisk = listLanded(root, session).filter((f) => f.seq > ix.indexedSeq && !known.has(f.seq));
  const bySeq = new Map(fresh.map((f) => [f.seq, f]));
  if (onDisk.length !== fresh.length || onDisk.some((f) => bySeq.get(f.seq)?.path !== f.path)) return updateIndex(root, session, batch);
  for (const f of onDisk) {
    appendFresh(ix, bySeq.get(f.seq)!, f.rel);
  }
  if (onDisk.length) saveIndex(root, ix, batch);
  return { index: ix, added: onDisk.length, problems: [] };
}

/** Adds one freshly landed file (at `rel` under the root) and its entries to the end of `ix`. */
export function appendFresh(ix: SessionIndex, x: FreshlyLanded, rel: string): void {
  const file: IndexedFile = { seq: x.seq, kind: x.kind, rel, digest: x.digest, records: x.records };
  if (x.stream) file.stream = x.stream;
  if (x.batch) file.batch = x.batch;
  if (x.changes !== undefined) file.changes = x.changes;
  if (x.src !== undefined) file.src = x.src;
  ix.files.push(file);
  for (const e of x.entries) ix.entries.push(e);
  ix.indexedSeq = x.seq;
}
