/**
 * The stored form of a session's index (`index/entries.bin`) and its reader. The file is a JSON head
 * (files, figure keys, string table) and typed columns; index.ts decides when it is read or written.
 */
import type { FileKind } from '../formats/session-data/types.js';
import { ColumnFigures, PAIR_STRIDE, type ColumnCoded, type FigureColumns, type Figures } from './index-figures.js';
import { IndexBuilder, PART_KINDS as KINDS, PART_STATES as STATES, PART_STRIDE, PARTS_END, ROW_STRIDE } from './index-builder.js';
import type { StringCoded } from './string-codes.js';
import { INDEX_MAGIC, INDEX_PREFIX_BYTES, INDEX_SCHEMA } from './index-file.js';
import { type IndexEntry, type IndexedFile, type IndexedPart, type SessionIndex } from './index-types.js';

/** The stored form of `ix`: its entries written into the columns one by one (index-builder.ts). */
export function encodeIndex(ix: SessionIndex): Buffer {
  const b = new IndexBuilder();
  for (const e of ix.entries) b.addEntry(e);
  return b.encode(ix);
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
    for (let pi = partStart[this.i]!; parts[pi] !== PARTS_END; pi += PART_STRIDE) {
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

export function decodeIndex(buf: Buffer): SessionIndex | undefined {
  if (buf.length < INDEX_PREFIX_BYTES || buf.readUInt32LE(0) !== INDEX_MAGIC || buf.readUInt32LE(4) !== INDEX_SCHEMA) return undefined;
  const headLen = buf.readUInt32LE(8);
  // UTF-8 even when ASCII: latin1 is faster to decode, but a large latin1 string is external, and the
  // table's strings (slices of it) then measured a few percent slower in assembly's joins.
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
  const column = <T extends Float64Array | Int32Array>(C: TypedColumn<T>, n: number): T => {
    const out = columnOf(buf, off, n, C);
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
    while (parts[pi] !== PARTS_END) if ((pi += PART_STRIDE) >= parts.length) throw new RangeError(`entry ${i}'s parts have no end`);
    pi += PART_STRIDE;
    partStart[i + 1] = pi;
  }
  const cols: Columns = { str, rows, times, parts, partStart, flags: new Map(), figures: { keys: o.figure_keys, pairs, numbers, str } };
  const entries: IndexEntry[] = new Array(o.entries);
  for (let i = 0; i < o.entries; i++) entries[i] = new IndexedRecord(cols, i);
  return { session: o.session, indexedSeq: o.indexed_seq, files: o.files, entries };
}

interface TypedColumn<T> {
  new (n: number): T;
  new (buffer: ArrayBufferLike, byteOffset: number, length: number): T;
  readonly BYTES_PER_ELEMENT: number;
}

/**
 * `n` values of a column from the file's bytes at `off`. The encoder starts every column 8-aligned
 * in the file, so when the read buffer itself starts aligned (readFileSync's own allocation does) the
 * column is a view of it: no copy, and no second allocation of the index's size for the collector
 * to account. Otherwise (a pooled or sliced buffer) the bytes are copied into an aligned array.
 * Truncated bytes fail here either way, and a damaged index is rebuilt.
 */
function columnOf<T extends Float64Array | Int32Array>(buf: Buffer, off: number, n: number, C: TypedColumn<T>): T {
  const bytes = n * C.BYTES_PER_ELEMENT;
  if (off + bytes > buf.length) throw new RangeError(`an index column runs past the file's ${buf.length} bytes`);
  if ((buf.byteOffset + off) % C.BYTES_PER_ELEMENT === 0) return new C(buf.buffer, buf.byteOffset + off, n);
  const out = new C(n);
  new Uint8Array(out.buffer).set(buf.subarray(off, off + bytes));
  return out;
}
