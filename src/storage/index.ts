/**
 * The derived index of a session: identifiers and roles of every landed record, never text.
 * Assembly reads only this. It is disposable: deleted, it is rebuilt from the landed files;
 * a schema change discards it. Its file's head records how far it reaches (`indexed_seq`, index-file.ts).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { readSessionData } from '../formats/session-data/decode.js';
import { isChangeRecord } from '../formats/session-data/changes.js';
import type { SdRecord } from '../formats/session-data/types.js';
import { entryFromRecord } from './index-builder.js';
import { listLanded, type LandedFileRef } from './landed-files.js';
import { replaceAtomically, type FileBytes } from './write-once.js';
import type { SyncBatch } from './sync-batch.js';
import { indexDir, indexFilePath, removeLegacyIndexState } from './index-file.js';
import { decodeIndex, encodeIndex } from './index-codec.js';
import type { IndexedFile, SessionIndex } from './index-types.js';

export { INDEX_SCHEMA, indexDir, readIndexState } from './index-file.js';
export { entryFromRecord } from './index-builder.js';
export type { IndexEntry, IndexedFile, IndexedPart, SessionIndex } from './index-types.js';

/** Whether a record carries a workspace change (a `changes/1` data part), for `IndexedFile.changes`. */
export function carriesChanges(r: SdRecord): boolean {
  return r.parts.some((p) => p.k === 'data' && isChangeRecord(p.data));
}

export function loadIndex(root: string, session: string): SessionIndex | undefined {
  let buf: Buffer;
  try {
    buf = readFileSync(indexFilePath(root, session));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return decodeIndex(buf);
  } catch {
    return undefined; // a damaged index is rebuilt, never trusted
  }
}

/**
 * Writes the session's index: one file whose head says how far it reaches, so the index and its state
 * move together. `fresh`: the session's directory was new under this lock, so there is no old
 * layout's `index.state` to remove.
 */
export function saveIndex(root: string, ix: SessionIndex, batch?: SyncBatch, fresh = false): void {
  writeIndexFile(root, ix.session, encodeIndex(ix), batch, fresh);
}

/** Writes a session's index already encoded (`saveIndex`'s second half). */
export function writeIndexFile(root: string, session: string, bytes: FileBytes, batch?: SyncBatch, fresh = false): void {
  mkdirSync(indexDir(root, session), { recursive: true });
  if (!fresh) removeLegacyIndexState(root, session);
  const path = indexFilePath(root, session);
  if (batch) batch.stageReplace(path, bytes);
  else replaceAtomically(path, bytes);
}

export function discardIndex(root: string, session: string): void {
  rmSync(indexDir(root, session), { recursive: true, force: true });
}

/**
 * The session's index when it already covers every landed file, as a collect that has just landed
 * them leaves it; undefined when there is none, it is damaged or a landed file lies beyond it. Read
 * without the session's lock: nothing is written, and the file is only ever replaced whole.
 */
export function indexIfCurrent(root: string, session: string): SessionIndex | undefined {
  const ix = loadIndex(root, session);
  return ix && ix.session === session && landedBeyond(root, session, ix).length === 0 ? ix : undefined;
}

/** The session's landed files `ix` does not hold: above its reach and not among its files, in sequence order. */
function landedBeyond(root: string, session: string, ix: SessionIndex): LandedFileRef[] {
  const held = new Set(ix.files.map((f) => f.seq));
  return listLanded(root, session).filter((f) => f.seq > ix.indexedSeq && !held.has(f.seq));
}

/**
 * Brings a session's index up to the landed files: every file above `indexed_seq` is read and
 * added. Call under the session's lock; with a `batch`, the index is written when it commits. Returns the index, and how many files it added.
 * A landed file that does not read stops indexing at the sequence before it, so parse never
 * reaches past evidence it could not check.
 */
export function updateIndex(root: string, session: string, batch?: SyncBatch): { index: SessionIndex; added: number; problems: string[] } {
  let ix = loadIndex(root, session);
  if (!ix || ix.session !== session) ix = { session, indexedSeq: 0, files: [], entries: [] };
  const problems: string[] = [];
  let added = 0;
  for (const f of landedBeyond(root, session, ix)) {
    if (f.seq <= ix.indexedSeq) continue; // a second file of a sequence just indexed
    let read;
    let bytes: Buffer;
    try {
      bytes = readFileSync(f.path);
      read = readSessionData(f.path);
    } catch (err) {
      problems.push((err as Error).message);
      break;
    }
    const h = read.header;
    const file: IndexedFile = { seq: f.seq, kind: h.kind, rel: f.rel, digest: createHash('sha256').update(bytes).digest('hex'), records: read.records.length };
    if (h.stream) file.stream = h.stream;
    if (h.batch) file.batch = h.batch;
    file.changes = read.records.filter(carriesChanges).length;
    if (h.kind === 'transcript' && typeof h.src === 'string') file.src = h.src;
    ix.files.push(file);
    read.records.forEach((r, i) => ix!.entries.push(entryFromRecord(r, f.seq, i + 1, { kind: h.kind, stream: h.stream, batch: h.batch })));
    ix.indexedSeq = f.seq;
    added++;
  }
  if (added) saveIndex(root, ix, batch);
  return { index: ix, added, problems };
}
