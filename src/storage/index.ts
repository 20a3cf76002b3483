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
import { recordFigures } from './index-figures.js';
import { INDEXED_KINDS, type EntryFile } from './index-builder.js';
import { listLanded, type LandedFileRef } from './landed-files.js';
import { replaceAtomically, type FileBytes } from './write-once.js';
import type { SyncBatch } from './sync-batch.js';
import { indexDir, indexFilePath, removeLegacyIndexState } from './index-file.js';
import { decodeIndex, encodeIndex } from './index-codec.js';
import { INDEX_STRING_FIELDS as STRING_FIELDS, type IndexEntry, type IndexedFile, type IndexedPart, type SessionIndex } from './index-types.js';

export { INDEX_SCHEMA, indexDir, readIndexState } from './index-file.js';
export type { IndexEntry, IndexedFile, IndexedPart, SessionIndex } from './index-types.js';

/** Frozen: an entry's lists are never written after it is built. */
const NO_FLAGS: string[] = Object.freeze([]) as unknown as string[];
const NO_PARTS: IndexedPart[] = Object.freeze([]) as unknown as IndexedPart[];

/** Whether a record carries a workspace change (a `changes/1` data part), for `IndexedFile.changes`. */
export function carriesChanges(r: SdRecord): boolean {
  return r.parts.some((p) => p.k === 'data' && isChangeRecord(p.data));
}

export function entryFromRecord(r: SdRecord, seq: number, row: number, file: EntryFile): IndexEntry {
  const t = r.time ? Date.parse(r.time) : NaN;
  // A record with no flags or no indexed part shares one empty list.
  const e: IndexEntry = { seq, row, fileKind: file.kind, flags: r.flags ?? NO_FLAGS, parts: NO_PARTS };
  if (file.stream) e.stream = file.stream;
  if (file.batch) e.fileBatch = file.batch;
  for (const f of STRING_FIELDS) if (r[f]) (e as unknown as Record<string, unknown>)[f] = r[f];
  if (!Number.isNaN(t)) e.time = t;
  for (const [block, p] of r.parts.entries()) {
    if (!INDEXED_KINDS.has(p.k)) continue;
    const ip: IndexedPart = { block, k: p.k, state: p.state };
    if (p.id) ip.id = p.id;
    if (p.name) ip.name = p.name;
    if (p.of) ip.of = p.of;
    if (p.failed !== undefined) ip.failed = p.failed;
    if (e.parts === NO_PARTS) e.parts = [ip];
    else e.parts.push(ip);
  }
  const figures = recordFigures(r, file.kind, e.flags);
  if (figures) e.figures = figures;
  return e;
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
