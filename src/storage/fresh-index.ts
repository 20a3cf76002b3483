/**
 * The index brought up to files this process has just landed, from the records it wrote rather
 * than by reading the files back: the collector's pass parses every line once, not twice.
 */
import type { FileKind, SdRecord } from '../formats/session-data/types.js';
import { decodeIndex } from './index-codec.js';
import { IndexBuilder, type BuilderMark, type EntryFile } from './index-builder.js';
import { listLanded } from './landed-files.js';
import { loadIndex, saveIndex, updateIndex, type IndexedFile, type SessionIndex } from './index.js';
import type { SyncBatch } from './sync-batch.js';

/** A file as it was landed: what its index row needs (its records' entries are in the `FreshIndex`'s columns). */
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
}

/**
 * What one session's pass has landed, in landing order: its files, and its records' index entries
 * written straight into columns (index-builder.ts), no object per record.
 */
export class FreshIndex {
  readonly files: FreshlyLanded[] = [];
  private readonly builder = new IndexBuilder();
  private open: { mark: BuilderMark; seq: number } | undefined;

  /** A file is being landed as `seq`: its records follow, then `landed` or `abandoned`. */
  begin(seq: number): void {
    this.open = { mark: this.builder.mark(), seq };
  }
  /** The `row`th record of the file begun. */
  add(r: SdRecord, row: number, file: EntryFile): void {
    this.builder.addRecord(r, this.open!.seq, row, file);
  }
  landed(f: FreshlyLanded): void {
    const last = this.files[this.files.length - 1];
    // Entries are held in landing order; the index lists files, and their entries, by sequence.
    if (last && f.seq <= last.seq) throw new Error(`landed file ${f.seq} after ${last.seq}: a session's files land in sequence order`);
    this.files.push(f);
    this.open = undefined;
  }
  /** The file begun did not land: its records' entries go. */
  abandoned(): void {
    if (this.open) this.builder.rollback(this.open.mark);
    this.open = undefined;
  }
  /** The stored index of these files alone, in pieces (`FileBytes`). */
  encode(session: string, files: IndexedFile[]): Buffer[] {
    return this.builder.encodePieces({ session, indexedSeq: this.files[this.files.length - 1]?.seq ?? 0, files });
  }
  /** The entries as objects read from their columns, to follow an index already on disk. */
  entries(session: string): SessionIndex['entries'] {
    return decodeIndex(Buffer.concat(this.encode(session, [])))!.entries;
  }
}

/** A landed file's row in the index, at `rel` under the root. */
export function indexedFileOf(x: FreshlyLanded, rel: string): IndexedFile {
  const file: IndexedFile = { seq: x.seq, kind: x.kind, rel, digest: x.digest, records: x.records };
  if (x.stream) file.stream = x.stream;
  if (x.batch) file.batch = x.batch;
  if (x.changes !== undefined) file.changes = x.changes;
  if (x.src !== undefined) file.src = x.src;
  return file;
}

/**
 * Adds `fresh` to the session's index. Only when the files on disk above `indexed_seq` are exactly
 * these (same sequences, same paths) are they taken from memory; anything else (a killed pass's
 * files, an index deleted or damaged, another writer's files) is read from disk by `updateIndex`.
 * Call under the session's lock, after the files are installed.
 */
export function extendIndex(root: string, session: string, fresh: FreshIndex, batch?: SyncBatch): { index: SessionIndex; added: number; problems: string[] } {
  const loaded = loadIndex(root, session);
  const ix: SessionIndex = loaded && loaded.session === session ? loaded : { session, indexedSeq: 0, files: [], entries: [] };
  const known = new Set(ix.files.map((f) => f.seq));
  const onDisk = listLanded(root, session).filter((f) => f.seq > ix.indexedSeq && !known.has(f.seq));
  const bySeq = new Map(fresh.files.map((f) => [f.seq, f]));
  if (onDisk.length !== fresh.files.length || onDisk.some((f) => bySeq.get(f.seq)?.path !== f.path)) return updateIndex(root, session, batch);
  if (onDisk.length === 0) return { index: ix, added: 0, problems: [] };
  for (const f of onDisk) ix.files.push(indexedFileOf(bySeq.get(f.seq)!, f.rel));
  for (const e of fresh.entries(session)) ix.entries.push(e);
  ix.indexedSeq = onDisk[onDisk.length - 1]!.seq;
  saveIndex(root, ix, batch);
  return { index: ix, added: onDisk.length, problems: [] };
}
