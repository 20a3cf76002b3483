/**
 * A session's index written straight into its stored columns (index-codec.ts reads them back), one
 * entry at a time, and what a landed record's entry is (`entryFromRecord`). A pass that lands a large
 * session holds its index this way until the batch commits: a few numbers per record and each
 * distinct string once, instead of an object graph per record that survives every scavenge until the
 * end (a 100 MB transcript's peak RSS followed its size by 70 MB).
 */
import type { FileKind, PartKind, PartState, SdRecord } from '../formats/session-data/types.js';
import { Float64Column, Int32Column } from '../util/growable-column.js';
import { FigureColumnWriter, PAIR_STRIDE, recordFigures, type FigureWriterMark } from './index-figures.js';
import { INDEX_MAGIC, INDEX_PREFIX_BYTES, INDEX_SCHEMA } from './index-file.js';
import { INDEX_STRING_FIELDS as STRING_FIELDS, type IndexEntry, type IndexedFile, type IndexedPart } from './index-types.js';

export const PART_KINDS: readonly PartKind[] = ['text', 'reasoning', 'call', 'result', 'media', 'data', 'unknown'];
export const PART_STATES: readonly PartState[] = ['available', 'truncated', 'redacted', 'omitted', 'unavailable'];
/** Per entry: seq, row, file kind, stream, file batch, the string fields, flags, first figure pair. */
export const ROW_STRIDE = 5 + STRING_FIELDS.length + 2;
/** Per part: block, kind, state, id, name, of, failed; a part whose block is -2 ends an entry's parts. */
export const PART_STRIDE = 7;
export const PARTS_END = -2;
/** The parts assembly can use; data, media and unknown parts name nothing it joins on. */
const INDEXED_KINDS: ReadonlySet<PartKind> = new Set(['text', 'reasoning', 'call', 'result']);

/** The file a record was landed in, as its entry names it. */
export interface EntryFile {
  kind: FileKind;
  stream?: string;
  batch?: string;
}

/** Frozen: an entry's lists are never written after it is built. */
const NO_FLAGS: string[] = Object.freeze([]) as unknown as string[];
const NO_PARTS: IndexedPart[] = Object.freeze([]) as unknown as IndexedPart[];

/** A landed record's index entry: its identifiers, roles, indexed parts and figures, never its text. */
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

/** Where a builder stood (`mark`), to go back to when the records after it were not kept (`rollback`). */
export interface BuilderMark {
  entries: number;
  parts: number;
  strings: number;
  figures: FigureWriterMark;
}

export class IndexBuilder {
  private readonly strings: string[] = [];
  private readonly stringAt = new Map<string, number>();
  private readonly rows = new Int32Column(64 * ROW_STRIDE);
  private readonly times = new Float64Column(64);
  private readonly parts = new Int32Column(64 * PART_STRIDE);
  private readonly figures = new FigureColumnWriter((v) => this.s(v));
  /** Entries held. */
  entries = 0;

  /** A string's number in the table (-1: none); the table numbers strings in the order they are first met. */
  private s(v: string | undefined): number {
    if (v === undefined) return -1;
    let i = this.stringAt.get(v);
    if (i === undefined) {
      i = this.strings.push(v) - 1;
      this.stringAt.set(v, i);
    }
    return i;
  }

  private part(
    block: number,
    k: PartKind,
    state: PartState,
    id: string | undefined,
    name: string | undefined,
    of: string | undefined,
    failed: boolean | undefined,
  ): void {
    const p = this.parts;
    p.push(block);
    p.push(PART_KINDS.indexOf(k));
    p.push(PART_STATES.indexOf(state));
    p.push(this.s(id));
    p.push(this.s(name));
    p.push(this.s(of));
    p.push(failed === undefined ? -1 : failed ? 1 : 0);
  }

  private endParts(): void {
    this.parts.push(PARTS_END);
    for (let i = 1; i < PART_STRIDE; i++) this.parts.push(0);
  }

  /** One entry as an object holds it (an index loaded, or rebuilt from landed files). */
  addEntry(e: IndexEntry): void {
    const r = this.rows;
    r.push(e.seq);
    r.push(e.row);
    r.push(this.s(e.fileKind));
    r.push(this.s(e.stream));
    r.push(this.s(e.fileBatch));
    for (const f of STRING_FIELDS) r.push(this.s(e[f]));
    r.push(this.s(e.flags.length ? e.flags.join(' ') : undefined));
    r.push(this.figures.write(e.figures));
    this.times.push(e.time ?? NaN);
    for (const q of e.parts) this.part(q.block, q.k, q.state, q.id, q.name, q.of, q.failed);
    this.endParts();
    this.entries++;
  }

  /** One landed record's entry; the entry is garbage at once, so a pass holds only the columns. */
  addRecord(rec: SdRecord, seq: number, row: number, file: EntryFile): void {
    this.addEntry(entryFromRecord(rec, seq, row, file));
  }

  mark(): BuilderMark {
    return { entries: this.entries, parts: this.parts.length, strings: this.strings.length, figures: this.figures.mark() };
  }

  /** Forgets every entry added since `m` (a landed file that was abandoned), and the strings only they used. */
  rollback(m: BuilderMark): void {
    this.entries = m.entries;
    this.rows.truncate(m.entries * ROW_STRIDE);
    this.times.truncate(m.entries);
    this.parts.truncate(m.parts);
    for (const v of this.strings.splice(m.strings)) this.stringAt.delete(v);
    this.figures.truncate(m.figures);
  }

  /** The stored index in pieces (a file's content as written): a prefix, a JSON head (files, figure keys, string table), then the typed columns. */
  encodePieces(head: { session: string; indexedSeq: number; files: IndexedFile[] }): Buffer[] {
    const figures = this.figures.columns();
    // The string table is one NUL-separated blob: a split is several times faster than a JSON array.
    const text = Buffer.from(
      JSON.stringify({
        schema: INDEX_SCHEMA,
        session: head.session,
        indexed_seq: head.indexedSeq,
        files: head.files,
        entries: this.entries,
        parts: this.parts.length / PART_STRIDE,
        figure_keys: this.figures.keys,
        figure_pairs: figures.pairs.length / PAIR_STRIDE,
        figure_numbers: figures.numbers.length,
      }) +
        '\n' +
        this.strings.join('\u0000'),
      'utf8',
    );
    const pad = (8 - ((INDEX_PREFIX_BYTES + text.length) % 8)) % 8; // the typed columns start 8-aligned
    const pre = Buffer.alloc(INDEX_PREFIX_BYTES);
    pre.writeUInt32LE(INDEX_MAGIC, 0);
    pre.writeUInt32LE(INDEX_SCHEMA, 4);
    pre.writeUInt32LE(text.length, 8);
    // Views of the columns, not copies: a large session's index is written without a second copy of it in memory.
    const bytes = (a: Int32Array | Float64Array) => Buffer.from(a.buffer, a.byteOffset, a.byteLength);
    return [
      pre,
      text,
      Buffer.alloc(pad),
      bytes(this.times.view()),
      bytes(figures.numbers),
      bytes(this.rows.view()),
      bytes(this.parts.view()),
      bytes(figures.pairs),
    ];
  }

  /** The stored index as one buffer. */
  encode(head: { session: string; indexedSeq: number; files: IndexedFile[] }): Buffer {
    return Buffer.concat(this.encodePieces(head));
  }
}
