/**
 * The derived index of a session: identifiers and roles of every landed record, never text.
 * Assembly reads only this. It is disposable: deleted, it is rebuilt from the landed files;
 * a schema change discards it. `index.state` records how far it reaches (`indexed_seq`).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { readSessionData } from '../formats/session-data/decode.js';
import type { FileKind, PartKind, PartState, SdRecord } from '../formats/session-data/types.js';
import { formatKv, parseKv } from './kv-text.js';
import { listLanded } from './landed-files.js';
import { replaceAtomically } from './write-once.js';

export const INDEX_SCHEMA = 2;

export interface IndexedPart {
  k: PartKind;
  state: PartState;
  id?: string;
  name?: string;
  of?: string;
  failed?: boolean;
}

export interface IndexEntry {
  seq: number;
  row: number;
  fileKind: FileKind;
  /** The stream the file was landed in (`main`, an agent id), from the header; absent for run files. */
  stream?: string;
  /** The header's batch: the workflow run of a run file or of a workflow child. */
  fileBatch?: string;
  id?: string;
  parent?: string;
  call?: string;
  run?: string;
  continues?: string;
  tool?: string;
  child?: string;
  batch?: string;
  started_by?: string;
  label?: string;
  from?: string;
  /** Milliseconds since the epoch, parsed from `time`. */
  time?: number;
  trigger?: string;
  flags: string[];
  parts: IndexedPart[];
}

export interface IndexedFile {
  seq: number;
  kind: FileKind;
  rel: string;
  digest: string;
  records: number;
  stream?: string;
  batch?: string;
}

export interface SessionIndex {
  session: string;
  indexedSeq: number;
  files: IndexedFile[];
  entries: IndexEntry[];
}

const indexDir = (root: string, session: string) => join(root, session, 'index');
const KINDS: readonly PartKind[] = ['text', 'reasoning', 'call', 'result', 'media', 'data', 'unknown'];
const STATES: readonly PartState[] = ['available', 'truncated', 'redacted', 'omitted', 'unavailable'];
const ROW_STRIDE = 19;
const PART_STRIDE = 6;
const STRING_FIELDS = ['id', 'parent', 'call', 'run', 'continues', 'tool', 'child', 'batch', 'started_by', 'label', 'from', 'trigger'] as const;

export function entryFromRecord(r: SdRecord, seq: number, row: number, file: { kind: FileKind; stream?: string; batch?: string }): IndexEntry {
  const t = r.time ? Date.parse(r.time) : NaN;
  const e: IndexEntry = { seq, row, fileKind: file.kind, flags: r.flags ?? [], parts: [] };
  if (file.stream) e.stream = file.stream;
  if (file.batch) e.fileBatch = file.batch;
  for (const f of STRING_FIELDS) if (r[f]) (e as unknown as Record<string, unknown>)[f] = r[f];
  if (!Number.isNaN(t)) e.time = t;
  for (const p of r.parts) {
    const ip: IndexedPart = { k: p.k, state: p.state };
    if (p.id) ip.id = p.id;
    if (p.name) ip.name = p.name;
    if (p.of) ip.of = p.of;
    if (p.failed !== undefined) ip.failed = p.failed;
    e.parts.push(ip);
  }
  return e;
}

/**
 * Stored as flat integer arrays over a string table: one JSON.parse of numbers loads far faster
 * than an object per record, which keeps an index of 60,000 entries loading in milliseconds.
 */
function encodeIndex(ix: SessionIndex): string {
  const strings: string[] = [];
  const at = new Map<string, number>();
  const s = (v: string | undefined) => {
    if (v === undefined) return -1;
    let i = at.get(v);
    if (i === undefined) { i = strings.length; strings.push(v); at.set(v, i); }
    return i;
  };
  const rows: number[] = [];
  const parts: number[] = [];
  for (const e of ix.entries) {
    rows.push(e.seq, e.row, s(e.fileKind), s(e.stream), s(e.fileBatch));
    for (const f of STRING_FIELDS) rows.push(s(e[f]));
    rows.push(e.time ?? -1, s(e.flags.length ? e.flags.join(' ') : undefined));
    for (const p of e.parts) parts.push(KINDS.indexOf(p.k), STATES.indexOf(p.state), s(p.id), s(p.name), s(p.of), p.failed === undefined ? -1 : p.failed ? 1 : 0);
    parts.push(-2, 0, 0, 0, 0, 0); // end of this entry's parts
  }
  return JSON.stringify({ schema: INDEX_SCHEMA, session: ix.session, indexed_seq: ix.indexedSeq, files: ix.files, strings, rows, parts });
}

function decodeIndex(text: string): SessionIndex | undefined {
  const o = JSON.parse(text) as { schema: number; session: string; indexed_seq: number; files: IndexedFile[]; strings: string[]; rows: number[]; parts: number[] };
  if (o.schema !== INDEX_SCHEMA) return undefined;
  const { strings, rows, parts } = o;
  const str = (i: number) => (i < 0 ? undefined : strings[i]);
  const entries: IndexEntry[] = [];
  let pi = 0;
  for (let i = 0; i < rows.length; i += ROW_STRIDE) {
    const flags = str(rows[i + 18]!);
    const e: IndexEntry = { seq: rows[i]!, row: rows[i + 1]!, fileKind: str(rows[i + 2]!) as FileKind, flags: flags ? flags.split(' ') : [], parts: [] };
    const stream = str(rows[i + 3]!), fileBatch = str(rows[i + 4]!);
    if (stream !== undefined) e.stream = stream;
    if (fileBatch !== undefined) e.fileBatch = fileBatch;
    for (let f = 0; f < STRING_FIELDS.length; f++) {
      const v = str(rows[i + 5 + f]!);
      if (v !== undefined) (e as unknown as Record<string, unknown>)[STRING_FIELDS[f]!] = v;
    }
    const time = rows[i + 17]!;
    if (time !== -1) e.time = time;
    for (; parts[pi] !== -2; pi += PART_STRIDE) {
      const p: IndexedPart = { k: KINDS[parts[pi]!]!, state: STATES[parts[pi + 1]!]! };
      const id = str(parts[pi + 2]!), name = str(parts[pi + 3]!), of = str(parts[pi + 4]!), failed = parts[pi + 5]!;
      if (id !== undefined) p.id = id;
      if (name !== undefined) p.name = name;
      if (of !== undefined) p.of = of;
      if (failed !== -1) p.failed = failed === 1;
      e.parts.push(p);
    }
    pi += PART_STRIDE;
    entries.push(e);
  }
  return { session: o.session, indexedSeq: o.indexed_seq, files: o.files, entries };
}

export function loadIndex(root: string, session: string): SessionIndex | undefined {
  let text: string;
  try {
    text = readFileSync(join(indexDir(root, session), 'entries.json'), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  try {
    return decodeIndex(text);
  } catch {
    return undefined; // a damaged index is rebuilt, never trusted
  }
}

function saveIndex(root: string, ix: SessionIndex): void {
  const dir = indexDir(root, ix.session);
  mkdirSync(dir, { recursive: true });
  replaceAtomically(join(dir, 'entries.json'), encodeIndex(ix));
  replaceAtomically(join(dir, 'index.state'), formatKv([
    ['schema', INDEX_SCHEMA], ['indexed_seq', ix.indexedSeq], ['files', ix.files.length], ['entries', ix.entries.length],
  ]));
}

export function readIndexState(root: string, session: string): { schema: number; indexedSeq: number } | undefined {
  try {
    const m = parseKv(readFileSync(join(indexDir(root, session), 'index.state'), 'utf8'));
    return { schema: Number(m.get('schema')), indexedSeq: Number(m.get('indexed_seq')) };
  } catch {
    return undefined;
  }
}

export function discardIndex(root: string, session: string): void {
  rmSync(indexDir(root, session), { recursive: true, force: true });
}

/**
 * Brings a session's index up to the landed files: every file above `indexed_seq` is read and
 * added. Call under the session's lock. Returns the index, and how many files it added.
 * A landed file that does not read stops indexing at the sequence before it, so parse never
 * reaches past evidence it could not check.
 */
export function updateIndex(root: string, session: string): { index: SessionIndex; added: number; problems: string[] } {
  let ix = loadIndex(root, session);
  if (!ix || ix.session !== session) ix = { session, indexedSeq: 0, files: [], entries: [] };
  const problems: string[] = [];
  let added = 0;
  const seen = new Set(ix.files.map((f) => f.seq));
  for (const f of listLanded(root, session)) {
    if (f.seq <= ix.indexedSeq || seen.has(f.seq)) continue;
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
    ix.files.push(file);
    seen.add(f.seq);
    read.records.forEach((r, i) => ix!.entries.push(entryFromRecord(r, f.seq, i + 1, { kind: h.kind, stream: h.stream, batch: h.batch })));
    ix.indexedSeq = f.seq;
    added++;
  }
  if (added) saveIndex(root, ix);
  return { index: ix, added, problems };
}
