/**
 * A strict reader of the protobuf wire format, driven by the message types loaded from proto/.
 *
 * Why not only protobufjs's decoder: it materialises every object (a 4 MB metrics request
 * becomes millions of small objects just to be counted and stored as bytes) and, as protobuf
 * parsers should, it keeps going past bytes it does not recognise. A receiver that lands
 * requests must refuse random bytes rather than land them, so this walker checks every tag,
 * wire type, length and nested message against the schema, validates UTF-8 in string fields,
 * counts the items a receiver reports (log records, metric points, spans) and, without building
 * objects, finds the byte ranges of the messages a receiver lands one by one.
 *
 * Unknown fields with a well-formed wire type are allowed (a newer OTLP may add fields); groups
 * (wire types 3 and 4) and the undefined wire types 6 and 7 are refused: OTLP has none.
 */
import { isUtf8 } from 'node:buffer';
import protobuf from 'protobufjs';
import type { Type } from './proto.js';

export class WireError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path || '(message)'}: ${reason}`);
    this.name = 'WireError';
  }
}

const WT_VARINT = 0;
const WT_I64 = 1;
const WT_LEN = 2;
const WT_I32 = 5;

type Kind = 'message' | 'string' | 'bytes' | 'varint' | 'i64' | 'i32';
/** The kinds as small integers for the hot loop (a switch on integers, no string compares). */
const K_MESSAGE = 0,
  K_STRING = 1,
  K_BYTES = 2,
  K_VARINT = 3,
  K_I64 = 4,
  K_I32 = 5;
const KIND_CODE: Record<Kind, number> = { message: K_MESSAGE, string: K_STRING, bytes: K_BYTES, varint: K_VARINT, i64: K_I64, i32: K_I32 };

interface FieldInfo {
  name: string;
  kind: Kind;
  code: number;
  repeated: boolean;
  child?: Table;
}

interface Table {
  type: Type;
  /** A small number for this table, indexing the per-call count slots. */
  idx: number;
  /** Fields by number; OTLP's numbers are small, so an array indexed by number beats a Map. */
  byId: (FieldInfo | undefined)[];
}

const SCALAR_KIND: Record<string, Kind> = {
  double: 'i64',
  fixed64: 'i64',
  sfixed64: 'i64',
  float: 'i32',
  fixed32: 'i32',
  sfixed32: 'i32',
  int32: 'varint',
  int64: 'varint',
  uint32: 'varint',
  uint64: 'varint',
  sint32: 'varint',
  sint64: 'varint',
  bool: 'varint',
  string: 'string',
  bytes: 'bytes',
};

const WIRE_OF: Record<Kind, number> = { message: WT_LEN, string: WT_LEN, bytes: WT_LEN, varint: WT_VARINT, i64: WT_I64, i32: WT_I32 };

/**
 * The field tables of the message types, built once per type on first use: derived from the
 * immutable schema, so one memo serves every walk. Each table gets a small number for the
 * per-walk count slots.
 */
class FieldTableMemo {
  private readonly tables = new WeakMap<Type, Table>();
  private numbered = 0;

  /** How many tables have been numbered so far (every `idx` is below it). */
  get size(): number {
    return this.numbered;
  }

  of(type: Type): Table {
    const known = this.tables.get(type);
    if (known) return known;
    const t: Table = { type, idx: this.numbered++, byId: [] };
    this.tables.set(type, t); // before recursing: AnyValue refers to itself through ArrayValue and KeyValueList
    for (const f of type.fieldsArray) {
      f.resolve();
      let kind: Kind;
      let child: Table | undefined;
      if (f.resolvedType instanceof protobuf.Type) {
        kind = 'message';
        child = this.of(f.resolvedType);
      } else if (f.resolvedType instanceof protobuf.Enum) {
        kind = 'varint';
      } else {
        const k = SCALAR_KIND[f.type];
        if (!k) throw new Error(`wire: field ${type.fullName}.${f.name} has a type this reader does not know: ${f.type}`);
        kind = k;
      }
      if (f.id > 4096) throw new Error(`wire: field number ${f.id} of ${type.fullName} is larger than this reader's table`);
      t.byId[f.id] = { name: f.name, kind, code: KIND_CODE[kind], repeated: f.repeated, child };
    }
    return t;
  }
}

/** One per thread: a table never changes once built, so every walk can share them. */
const fieldTableMemo = new FieldTableMemo();

/** The deepest nesting accepted; AnyValue can nest through arrays and maps, and an attacker could nest forever. */
export const MAX_DEPTH = 64;

/**
 * Whether `buf[start, stop)` is valid UTF-8. Short strings (attribute keys, most values) are
 * checked for plain ASCII in place, which needs no view object; anything else goes to the
 * native validator.
 */
function utf8(buf: Uint8Array, start: number, stop: number): boolean {
  if (stop - start <= 64) {
    let i = start;
    while (i < stop && buf[i]! < 0x80) i++;
    if (i === stop) return true;
  }
  return isUtf8(buf.subarray(start, stop));
}

/** What a walk found: how many messages of each counted type, by the index given in `count`. */
export interface WalkResult {
  counts: number[];
}

/**
 * Checks `buf[start, end)` as a message of `type`. `count` lists message types to count
 * wherever they occur (for example every NumberDataPoint, HistogramDataPoint …).
 */
export function validateMessage(buf: Uint8Array, type: Type, count: Type[] = [], start = 0, end = buf.length, opts: { envelope?: boolean } = {}): WalkResult {
  const table = fieldTableMemo.of(type);
  for (const t of count) fieldTableMemo.of(t);
  // Which count (if any) each table adds to, by table number: -1 for none.
  const slots = new Int16Array(fieldTableMemo.size + 1).fill(-1);
  count.forEach((t, i) => (slots[fieldTableMemo.of(t).idx] = i));
  const walker = new WireWalker(buf, opts.envelope === true, new Array<number>(count.length).fill(0), slots);
  walker.walk(start, end, table, 0);
  return { counts: walker.counts };
}

/**
 * One walk over one buffer. The read position is a field here, advanced in place instead of
 * returned in a tuple (a walk over a large request reads millions of varints and must not
 * allocate for each), and it belongs to this walk alone: two walks alive at once cannot move
 * each other's. Fields set in the constructor keep V8's property access monomorphic. Exported for
 * tests that step two walkers by hand.
 */
export class WireWalker {
  readonly buf: Uint8Array;
  at: number;
  /**
   * Whether the outermost message is an envelope (an export request): its only field is the list
   * of resources, so an unknown field there is not a newer OTLP but bytes that are not a request
   * at all. Without this, random bytes that happen to read as unknown fields would pass.
   */
  readonly envelope: boolean;
  readonly counts: number[];
  readonly slots: Int16Array;
  /**
   * The names of the fields the walk is inside, kept as a stack and joined only for an error
   * message: building a path string for every nested message would allocate on the way.
   */
  readonly stack: string[];

  constructor(buf: Uint8Array, envelope: boolean, counts: number[], slots: Int16Array) {
    this.buf = buf;
    this.at = 0;
    this.envelope = envelope;
    this.counts = counts;
    this.slots = slots;
    this.stack = [];
  }

  /** Reads a varint at `at` and advances it; the value is exact below 2^53, which covers every length and tag. */
  varint(end: number, depth: number): number {
    const buf = this.buf;
    let at = this.at;
    // Most varints here (tags, short lengths) are one byte.
    if (at < end && buf[at]! < 0x80) {
      this.at = at + 1;
      return buf[at]!;
    }
    let value = 0;
    let mul = 1;
    for (let i = 0; i < 10; i++) {
      if (at >= end) throw new WireError(this.pathAt(depth), 'truncated varint');
      const b = buf[at++]!;
      if (i === 9 && b > 1) throw new WireError(this.pathAt(depth), 'varint longer than 64 bits');
      value += (b & 0x7f) * mul;
      if (b < 0x80) {
        this.at = at;
        return value;
      }
      mul *= 128;
    }
    throw new WireError(this.pathAt(depth), 'varint longer than 10 bytes');
  }

  pathAt(depth: number, f?: FieldInfo, id?: number): string {
    const parts = this.stack.slice(0, depth);
    if (id !== undefined) parts.push(f ? f.name : `#${id}`);
    return parts.join('.');
  }

  walk(pos: number, end: number, table: Table, depth: number): void {
    if (depth > MAX_DEPTH) throw new WireError(this.pathAt(depth), `nested deeper than ${MAX_DEPTH} messages`);
    const buf = this.buf;
    const slots = this.slots;
    const slot = table.idx < slots.length ? slots[table.idx]! : -1;
    if (slot >= 0) this.counts[slot]!++;
    this.at = pos;
    while (this.at < end) {
      const tag = this.varint(end, depth);
      const id = Math.floor(tag / 8);
      const wt = tag & 7;
      if (id < 1 || id > 536_870_911) throw new WireError(this.pathAt(depth), `field number ${id} is not valid`);
      const f = id < table.byId.length ? table.byId[id] : undefined;
      if (!f && this.envelope && depth === 0) throw new WireError(this.pathAt(depth, f, id), `field ${id} is not part of an OTLP export request`);
      switch (wt) {
        case WT_VARINT:
          if (f && f.code !== K_VARINT) throw new WireError(this.pathAt(depth, f, id), `wire type varint does not fit a ${f.kind} field`);
          this.varint(end, depth);
          break;
        case WT_I64:
          if (f && f.code !== K_I64) throw new WireError(this.pathAt(depth, f, id), `wire type 64-bit does not fit a ${f.kind} field`);
          if (this.at + 8 > end) throw new WireError(this.pathAt(depth, f, id), 'truncated 64-bit value');
          this.at += 8;
          break;
        case WT_I32:
          if (f && f.code !== K_I32) throw new WireError(this.pathAt(depth, f, id), `wire type 32-bit does not fit a ${f.kind} field`);
          if (this.at + 4 > end) throw new WireError(this.pathAt(depth, f, id), 'truncated 32-bit value');
          this.at += 4;
          break;
        case WT_LEN: {
          const len = this.varint(end, depth);
          const start = this.at;
          if (len > end - start) throw new WireError(this.pathAt(depth, f, id), `length ${len} runs past the end of the message (${end - start} bytes left)`);
          const stop = start + len;
          if (f) {
            switch (f.code) {
              case K_MESSAGE:
                this.stack[depth] = f.name;
                this.walk(start, stop, f.child!, depth + 1);
                break;
              case K_STRING:
                if (!utf8(buf, start, stop)) throw new WireError(this.pathAt(depth, f, id), 'string is not valid UTF-8');
                break;
              case K_BYTES:
                break;
              default:
                // A packed repeated scalar: a run of varints or fixed-size values.
                if (!f.repeated) throw new WireError(this.pathAt(depth, f, id), `a length-delimited value does not fit a single ${f.kind} field`);
                if (f.code === K_VARINT) {
                  while (this.at < stop) this.varint(stop, depth);
                } else if (len % (f.code === K_I64 ? 8 : 4) !== 0) {
                  throw new WireError(this.pathAt(depth, f, id), `packed ${f.kind} values of ${len} bytes do not divide evenly`);
                }
            }
          }
          this.at = stop;
          break;
        }
        default:
          throw new WireError(this.pathAt(depth, f, id), wt === 3 || wt === 4 ? 'groups are not part of OTLP' : `wire type ${wt} does not exist`);
      }
    }
    if (this.at !== end) throw new WireError(this.pathAt(depth), 'message overran its length');
  }
}

/** One length-delimited field occurrence: its number and the byte range of its payload. */
export interface FieldSlice {
  id: number;
  start: number;
  end: number;
}

/**
 * The length-delimited fields of a message already validated by `validateMessage`, in wire order,
 * with the byte range of each payload; other wire types are skipped. No objects are built.
 */
export function lengthDelimitedFields(buf: Uint8Array, start = 0, end = buf.length): FieldSlice[] {
  const out: FieldSlice[] = [];
  const cursor = new SliceCursor(buf, start);
  while (cursor.at < end) {
    const tag = cursor.varint(end);
    const wt = tag & 7;
    if (wt === WT_VARINT) cursor.varint(end);
    else if (wt === WT_I64) cursor.at += 8;
    else if (wt === WT_I32) cursor.at += 4;
    else if (wt === WT_LEN) {
      const len = cursor.varint(end);
      out.push({ id: Math.floor(tag / 8), start: cursor.at, end: cursor.at + len });
      cursor.at += len;
    } else throw new WireError('', `wire type ${wt} does not exist`);
  }
  return out;
}

/** A read position over bytes a walk already checked: only a cut short varint is refused, so a misuse cannot loop. */
class SliceCursor {
  readonly buf: Uint8Array;
  at: number;

  constructor(buf: Uint8Array, at: number) {
    this.buf = buf;
    this.at = at;
  }

  varint(end: number): number {
    const buf = this.buf;
    let at = this.at;
    let value = 0;
    let mul = 1;
    for (;;) {
      if (at >= end) throw new WireError('', 'truncated varint');
      const b = buf[at++]!;
      value += (b & 0x7f) * mul;
      if (b < 0x80) {
        this.at = at;
        return value;
      }
      mul *= 128;
    }
  }
}

/** `wireOf` is exported for tests that build messages by hand. */
export const wireOf = (kind: Kind) => WIRE_OF[kind];
