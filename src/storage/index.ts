/**
 * The derived index of a session: identifiers and roles of every landed record, never text.
 * Assembly reads only this. It is disposable: deleted, it is rebuilt from the landed files;
 * a schema change discards it. Its file's head records how far it reaches (`indexed_seq`, index-file.ts).
 */
import { manifestOf } from '../formats/session-data/provider-body.js';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { readSessionData } from '../formats/session-data/decode.js';
import { isChangeRecord } from '../formats/session-data/changes.js';
import type { FileKind, PartKind, PartState, SdRecord } from '../formats/session-data/types.js';
import {
  ColumnFigures,
  errorFigures,
  FigureColumnWriter,
  FigureList,
  PAIR_STRIDE,
  telemetryFigures,
  type ColumnCoded,
  type FigureColumns,
  type Figures,
} from './index-figures.js';
import { listLanded } from './landed-files.js';
import { replaceAtomically } from './write-once.js';
import type { SyncBatch } from './sync-batch.js';
import type { StringCoded } from './string-codes.js';
import { INDEX_MAGIC, INDEX_PREFIX_BYTES, INDEX_SCHEMA, indexDir, indexFilePath, removeLegacyIndexState } from './index-file.js';

export { INDEX_SCHEMA, indexDir, readIndexState } from './index-file.js';

/** A part assembly can use (text, reasoning, call, result), with its position in the record's parts. */
export interface IndexedPart {
  block: number;
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
  /**
   * A runtime telemetry record's (`otlp_log`, `otlp_span`) figures — the data part's name, ids,
   * times and scalar attributes, long strings left out — or a failed attempt's (`api_error`)
   * scalars. Assembly joins on these (see storage/index-figures.ts).
   */
  figures?: Figures;
}

export interface IndexedFile {
  seq: number;
  kind: FileKind;
  rel: string;
  digest: string;
  records: number;
  stream?: string;
  batch?: string;
  /**
   * How many of its records carry a workspace change (`changes/1`): a round's header counts them
   * without reading a file that has none. Absent in an index written before it was kept: read.
   */
  changes?: number;
}

export interface SessionIndex {
  session: string;
  indexedSeq: number;
  files: IndexedFile[];
  entries: IndexEntry[];
}

const KINDS: readonly PartKind[] = ['text', 'reasoning', 'call', 'result', 'media', 'data', 'unknown'];
const STATES: readonly PartState[] = ['available', 'truncated', 'redacted', 'omitted', 'unavailable'];
const ROW_STRIDE = 19;
const PART_STRIDE = 7;
const INDEXED_KINDS: ReadonlySet<PartKind> = new Set(['text', 'reasoning', 'call', 'result']);
const STRING_FIELDS = ['id', 'parent', 'call', 'run', 'continues', 'tool', 'child', 'batch', 'started_by', 'label', 'from', 'trigger'] as const;
const TELEMETRY_KINDS: ReadonlySet<FileKind> = new Set(['otlp_log', 'otlp_span']);

/** Whether a record carries a workspace change (a `changes/1` data part), for `IndexedFile.changes`. */
export function carriesChanges(r: SdRecord): boolean {
  return r.parts.some((p) => p.k === 'data' && isChangeRecord(p.data));
}

export function entryFromRecord(r: SdRecord, seq: number, row: number, file: { kind: FileKind; stream?: string; batch?: string }): IndexEntry {
  const t = r.time ? Date.parse(r.time) : NaN;
  const e: IndexEntry = { seq, row, fileKind: file.kind, flags: r.flags ?? [], parts: [] };
  if (file.stream) e.stream = file.stream;
  if (file.batch) e.fileBatch = file.batch;
  for (const f of STRING_FIELDS) if (r[f]) (e as unknown as Record<string, unknown>)[f] = r[f];
  if (!Number.isNaN(t)) e.time = t;
  for (const [block, p] of r.parts.entries()) {
    if (!INDEXED_KINDS.has(p.k)) continue; // data, media and unknown parts name nothing assembly joins on
    const ip: IndexedPart = { block, k: p.k, state: p.state };
    if (p.id) ip.id = p.id;
    if (p.name) ip.name = p.name;
    if (p.of) ip.of = p.of;
    if (p.failed !== undefined) ip.failed = p.failed;
    e.parts.push(ip);
  }
  const data = () => r.parts.find((p) => p.k === 'data')?.data;
  const figures = TELEMETRY_KINDS.has(file.kind)
    ? telemetryFigures(data())
    : e.flags.includes('api_error')
      ? errorFigures(data())
      : file.kind === 'provider_body'
        ? providerBodyFigures(r)
        : undefined;
  if (figures) e.figures = figures;
  return e;
}

/** A body's manifest without its segments (the body itself): what assembly joins it to a call by. */
function providerBodyFigures(r: SdRecord): FigureList | undefined {
  const m = manifestOf(r);
  if (!m) return undefined;
  const out = new FigureList();
  const fields: [string, string | number | undefined][] = [
    ['role', m.role],
    ['src', m.src],
    ['call', m.call],
    ['request', m.request],
    ['bytes', m.bytes],
    ['why', m.why],
  ];
  // Pushed directly: a file name or a reason may be longer than a figure string, and is still one.
  for (const [k, v] of fields) {
    if (v === undefined) continue;
    out.keys.push(k);
    out.values.push(v);
    out.owned.push(false);
  }
  return out;
}

/**
 * Stored binary: a JSON head (files, figure keys, string table) and typed columns — record times
 * and figure numbers as float64, record fields as string-table indices, parts, figure pairs — so
 * loading is one JSON.parse of the head, a split of the strings and a copy of the columns, not a
 * parse of every number. An index of 60,000 entries
 * loads in tens of milliseconds.
 */
function encodeIndex(ix: SessionIndex): Buffer {
  const strings: string[] = [];
  const at = new Map<string, number>();
  const s = (v: string | undefined) => {
    if (v === undefined) return -1;
    let i = at.get(v);
    if (i === undefined) {
      i = strings.length;
      strings.push(v);
      at.set(v, i);
    }
    return i;
  };
  const rows = new Int32Array(ix.entries.length * ROW_STRIDE);
  const times = new Float64Array(ix.entries.length);
  let partCount = 0;
  for (const e of ix.entries) partCount += e.parts.length + 1;
  const parts = new Int32Array(partCount * PART_STRIDE);
  const figureWriter = new FigureColumnWriter(s);
  let r = 0,
    p = 0;
  ix.entries.forEach((e, i) => {
    rows[r++] = e.seq;
    rows[r++] = e.row;
    rows[r++] = s(e.fileKind);
    rows[r++] = s(e.stream);
    rows[r++] = s(e.fileBatch);
    for (const f of STRING_FIELDS) rows[r++] = s(e[f]);
    rows[r++] = s(e.flags.length ? e.flags.join(' ') : undefined);
    rows[r++] = figureWriter.write(e.figures);
    times[i] = e.time ?? NaN;
    for (const q of e.parts) {
      parts[p++] = q.block;
      parts[p++] = KINDS.indexOf(q.k);
      parts[p++] = STATES.indexOf(q.state);
      parts[p++] = s(q.id);
      parts[p++] = s(q.name);
      parts[p++] = s(q.of);
      parts[p++] = q.failed === undefined ? -1 : q.failed ? 1 : 0;
    }
    parts[p++] = -2;
    p += PART_STRIDE - 1; // end of this entry's parts
  });
  const figures = figureWriter.columns();
  // The string table is one NUL-separated blob: a split is several times faster than a JSON array.
  let head = Buffer.from(
    JSON.stringify({
      schema: INDEX_SCHEMA,
      session: ix.session,
      indexed_seq: ix.indexedSeq,
      files: ix.files,
      entries: ix.entries.length,
      parts: partCount,
      figure_keys: figureWriter.keys,
      figure_pairs: figures.pairs.length / PAIR_STRIDE,
      figure_numbers: figures.numbers.length,
    }) +
      '\n' +
      strings.join('\u0000'),
    'utf8',
  );
  const headLen = head.length;
  const pad = (8 - ((INDEX_PREFIX_BYTES + headLen) % 8)) % 8; // the typed columns start 8-aligned
  head = Buffer.concat([head, Buffer.alloc(pad)]);
  const pre = Buffer.alloc(INDEX_PREFIX_BYTES);
  pre.writeUInt32LE(INDEX_MAGIC, 0);
  pre.writeUInt32LE(INDEX_SCHEMA, 4);
  pre.writeUInt32LE(headLen, 8);
  return Buffer.concat([
    pre,
    head,
    Buffer.from(times.buffer),
    Buffer.from(figures.numbers.buffer),
    Buffer.from(rows.buffer),
    Buffer.from(parts.buffer),
    Buffer.from(figures.pairs.buffer),
  ]);
}

interface Columns {
  str: (string | undefined)[];
  rows: Int32Array;
  times: Float64Array;
  parts: Int32Array;
  partStart: Int32Array;
  flags: Map<number, string[]>;
  figures: FigureColumns;
}

const NO_FLAGS: string[] = [];

/**
 * An index entry read straight from the loaded columns. Loading creates one small object per
 * record and no strings or arrays: fields are read on access, so a 60,000-record index loads in
 * a few tens of milliseconds and leaves little for the collector.
 */
class IndexedRecord implements IndexEntry, StringCoded, ColumnCoded {
  private cachedParts: IndexedPart[] | undefined;
  constructor(
    private readonly c: Columns,
    private readonly i: number,
  ) {}
  private s(field: number): string | undefined {
    return this.c.str[this.c.rows[this.i * ROW_STRIDE + field]!];
  }
  get seq(): number {
    return this.c.rows[this.i * ROW_STRIDE]!;
  }
  get row(): number {
    return this.c.rows[this.i * ROW_STRIDE + 1]!;
  }
  get fileKind(): FileKind {
    return this.s(2) as FileKind;
  }
  get stream() {
    return this.s(3);
  }
  get fileBatch() {
    return this.s(4);
  }
  get id() {
    return this.s(5);
  }
  get parent() {
    return this.s(6);
  }
  get call() {
    return this.s(7);
  }
  get run() {
    return this.s(8);
  }
  get continues() {
    return this.s(9);
  }
  get tool() {
    return this.s(10);
  }
  get child() {
    return this.s(11);
  }
  get batch() {
    return this.s(12);
  }
  get started_by() {
    return this.s(13);
  }
  get label() {
    return this.s(14);
  }
  get from() {
    return this.s(15);
  }
  get trigger() {
    return this.s(16);
  }
  /** The loaded string table (equal strings, one number), a field's number in it and a part id's (-1: none): stage 9 joins on numbers. */
  get strings(): readonly (string | undefined)[] {
    return this.c.str;
  }
  code(field: 'call' | 'id'): number {
    return this.c.rows[this.i * ROW_STRIDE + (field === 'call' ? 7 : 5)]!;
  }
  partIdCode(index: number): number {
    return this.c.parts[this.c.partStart[this.i]! + index * PART_STRIDE + 3]!;
  }
  get time(): number | undefined {
    const t = this.c.times[this.i]!;
    return Number.isNaN(t) ? undefined : t;
  }
  get flags(): string[] {
    const fl = this.c.rows[this.i * ROW_STRIDE + 17]!;
    if (fl < 0) return NO_FLAGS;
    let f = this.c.flags.get(fl);
    if (!f) this.c.flags.set(fl, (f = this.c.str[fl]!.split(' ')));
    return f;
  }
  get figures(): Figures | undefined {
    const start = this.c.rows[this.i * ROW_STRIDE + 18]!;
    return start < 0 ? undefined : new ColumnFigures(this.c.figures, start);
  }
  get figureColumns(): FigureColumns {
    return this.c.figures;
  }
  figureStart(): number {
    return this.c.rows[this.i * ROW_STRIDE + 18]!;
  }
  get parts(): IndexedPart[] {
    if (this.cachedParts) return this.cachedParts;
    const { parts, str, partStart } = this.c;
    const out: IndexedPart[] = [];
    for (let pi = partStart[this.i]!; parts[pi] !== -2; pi += PART_STRIDE) {
      const failed = parts[pi + 6]!;
      const p: IndexedPart = { block: parts[pi]!, k: KINDS[parts[pi + 1]!]!, state: STATES[parts[pi + 2]!]! };
      const id = str[parts[pi + 3]!],
        name = str[parts[pi + 4]!],
        of = str[parts[pi + 5]!];
      if (id !== undefined) p.id = id;
      if (name !== undefined) p.name = name;
      if (of !== undefined) p.of = of;
      if (failed !== -1) p.failed = failed === 1;
      out.push(p);
    }
    return (this.cachedParts = out);
  }
}

function decodeIndex(buf: Buffer): SessionIndex | undefined {
  if (buf.length < INDEX_PREFIX_BYTES || buf.readUInt32LE(0) !== INDEX_MAGIC || buf.readUInt32LE(4) !== INDEX_SCHEMA) return undefined;
  const headLen = buf.readUInt32LE(8);
  const headText = buf.toString('utf8', INDEX_PREFIX_BYTES, INDEX_PREFIX_BYTES + headLen);
  const nl = headText.indexOf('\n');
  const o = JSON.parse(headText.slice(0, nl)) as {
    schema: number;
    session: string;
    indexed_seq: number;
    files: IndexedFile[];
    entries: number;
    parts: number;
    figure_keys: string[];
    figure_pairs: number;
    figure_numbers: number;
  };
  const strings: (string | undefined)[] = headText.length > nl + 1 ? headText.slice(nl + 1).split('\u0000') : [];
  if (o.schema !== INDEX_SCHEMA) return undefined;
  let off = INDEX_PREFIX_BYTES + headLen + ((8 - ((INDEX_PREFIX_BYTES + headLen) % 8)) % 8);
  const column = <T extends Float64Array | Int32Array>(C: { new (n: number): T; BYTES_PER_ELEMENT: number }, n: number): T => {
    const out = new C(n);
    new Uint8Array(out.buffer).set(buf.subarray(off, off + n * C.BYTES_PER_ELEMENT));
    off += n * C.BYTES_PER_ELEMENT;
    return out;
  };
  const times = column(Float64Array, o.entries);
  const numbers = column(Float64Array, o.figure_numbers);
  const rows = column(Int32Array, o.entries * ROW_STRIDE);
  const parts = column(Int32Array, o.parts * PART_STRIDE);
  const pairs = column(Int32Array, o.figure_pairs * PAIR_STRIDE);
  const str = strings;
  str[-1] = undefined; // index -1 means "none" without a branch per field
  // Where each entry's parts start: one pass over the part column.
  const partStart = new Int32Array(o.entries + 1);
  for (let i = 0, pi = 0; i < o.entries; i++) {
    partStart[i] = pi;
    while (parts[pi] !== -2) pi += PART_STRIDE;
    pi += PART_STRIDE;
    partStart[i + 1] = pi;
  }
  const cols: Columns = { str, rows, times, parts, partStart, flags: new Map(), figures: { keys: o.figure_keys, pairs, numbers, str } };
  const entries: IndexEntry[] = new Array(o.entries);
  for (let i = 0; i < o.entries; i++) entries[i] = new IndexedRecord(cols, i);
  return { session: o.session, indexedSeq: o.indexed_seq, files: o.files, entries };
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
  mkdirSync(indexDir(root, ix.session), { recursive: true });
  if (!fresh) removeLegacyIndexState(root, ix.session);
  const path = indexFilePath(root, ix.session);
  if (batch) batch.stageReplace(path, encodeIndex(ix));
  else replaceAtomically(path, encodeIndex(ix));
}

export function discardIndex(root: string, session: string): void {
  rmSync(indexDir(root, session), { recursive: true, force: true });
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
    file.changes = read.records.filter(carriesChanges).length;
    ix.files.push(file);
    seen.add(f.seq);
    read.records.forEach((r, i) => ix!.entries.push(entryFromRecord(r, f.seq, i + 1, { kind: h.kind, stream: h.stream, batch: h.batch })));
    ix.indexedSeq = f.seq;
    added++;
  }
  if (added) saveIndex(root, ix, batch);
  return { index: ix, added, problems };
}
