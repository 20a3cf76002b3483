/**
 * The figures the derived index keeps of a record assembly joins on without reading its text: a
 * runtime telemetry record's name, ids, times and scalar attributes, and the scalars of a record
 * flagged `api_error` (a failed provider attempt). Kept as typed pairs — a key from a small key
 * table, a value from the index's string table or a float64 column — so a round reads them with no
 * JSON to parse, and a request id shared by several events is stored once.
 */

import type { FileKind, SdRecord, Usage } from '../formats/session-data/types.js';
import { manifestOf } from '../formats/session-data/provider-body.js';
import { Float64Column, Int32Column } from '../util/growable-column.js';

export type FigureValue = string | number | boolean;

/**
 * One record's figures, in the record's order, the data part's own fields (name, span ids, times,
 * events) first, then its attributes. Read by position, so a reader allocates nothing per figure.
 */
export interface Figures {
  readonly count: number;
  key(i: number): string;
  value(i: number): FigureValue;
  /** The data part's own field, not an attribute. */
  own(i: number): boolean;
}

/** A string longer than this is text (a prompt, an error body), not a figure or an id. */
const MAX_FIGURE_STRING = 200;
/** The data part's own fields a telemetry record is joined and timed by. */
const OWN_KEYS = ['event', 'name', 'span_id', 'parent_span_id', 'duration_ns', 'start', 'end'] as const;
/** A span's events (a retried request's attempts) are kept as compact JSON, at most this many. */
const MAX_SPAN_EVENTS = 32;

const isScalar = (v: unknown): v is FigureValue =>
  typeof v === 'number' ? Number.isFinite(v) : typeof v === 'boolean' || (typeof v === 'string' && v.length <= MAX_FIGURE_STRING);

/** Figures built from a record as it is indexed: plain arrays. */
export class FigureList implements Figures {
  readonly keys: string[] = [];
  readonly values: FigureValue[] = [];
  readonly owned: boolean[] = [];
  add(key: string, value: unknown, own: boolean): void {
    if (!isScalar(value)) return;
    this.keys.push(key);
    this.values.push(value);
    this.owned.push(own);
  }
  get count(): number {
    return this.keys.length;
  }
  key(i: number): string {
    return this.keys[i]!;
  }
  value(i: number): FigureValue {
    return this.values[i]!;
  }
  own(i: number): boolean {
    return this.owned[i]!;
  }
}

/** A telemetry data part's figures: its own fields, its span events' names, times and scalars, and its scalar attributes. */
export function telemetryFigures(data: unknown): FigureList | undefined {
  if (!data || typeof data !== 'object') return undefined;
  const d = data as Record<string, unknown>;
  const out = new FigureList();
  for (const k of OWN_KEYS) out.add(k, d[k], true);
  if (Array.isArray(d.events) && d.events.length) {
    const events = (d.events as unknown[]).slice(0, MAX_SPAN_EVENTS).map((ev) => {
      const e = (ev && typeof ev === 'object' ? ev : {}) as Record<string, unknown>;
      return { name: e.name, time: e.time, attributes: scalarsOf(e.attributes) };
    });
    // Not text but figures, so longer than a text-sized string may be.
    out.keys.push('events');
    out.values.push(JSON.stringify(events));
    out.owned.push(true);
  }
  const attrs = scalarsOf(d.attributes);
  for (const k in attrs) out.add(k, attrs[k], false);
  return out;
}

/** A failed attempt's record (flagged `api_error`): its data part's scalars, one level of nesting named `outer.inner`. */
export function errorFigures(data: unknown): FigureList | undefined {
  if (!data || typeof data !== 'object') return undefined;
  const out = new FigureList();
  for (const [k, v] of Object.entries(data as Record<string, unknown>)) {
    if (v && typeof v === 'object' && !Array.isArray(v)) for (const [k2, v2] of Object.entries(v as Record<string, unknown>)) out.add(`${k}.${k2}`, v2, false);
    else out.add(k, v, false);
  }
  return out.keys.length ? out : undefined;
}

/** The key a transcript record's provider usage is kept under, as `in,out,cache_read,cache_write` (an absent count empty). */
export const USAGE_FIGURE = 'usage';
/** The key of the model that answered, beside its usage. */
export const MODEL_FIGURE = 'model';

/**
 * A transcript record's usage and model: what a usage report counts, kept so it reads no landed
 * file. Stored as one string per usage, not four numbers: a message's fragments repeat one usage,
 * and the index's string table stores a repeated string once. Most transcript records carry one,
 * and a pass holds every entry until its batch commits, so until the index is written the figures
 * are the record's own usage object, its text made only when asked.
 */
export function usageFigures(usage: Usage, model: string | undefined): Figures {
  return new UsageFigures(usage, model && isScalar(model) ? model : undefined);
}

class UsageFigures implements Figures {
  constructor(
    readonly usage: Usage,
    readonly model: string | undefined,
  ) {}
  /** Whether `other` states the same usage and model: a message's fragments repeat them, and the index writes them once. */
  same(other: UsageFigures): boolean {
    const a = this.usage,
      b = other.usage;
    return a.in === b.in && a.out === b.out && a.cache_read === b.cache_read && a.cache_write === b.cache_write && this.model === other.model;
  }
  get count(): number {
    return this.model === undefined ? 1 : 2;
  }
  key(i: number): string {
    return i === 0 ? USAGE_FIGURE : MODEL_FIGURE;
  }
  value(i: number): FigureValue {
    if (i !== 0) return this.model!;
    const u = this.usage;
    const n = (v: number | undefined) => (v === undefined ? '' : String(v));
    return `${n(u.in)},${n(u.out)},${n(u.cache_read)},${n(u.cache_write)}`;
  }
  own(): boolean {
    return false;
  }
}

/** The usage and model `usageFigures` kept; undefined when the record's figures hold no usage (another kind of record, or an older index). */
export function readUsageFigures(f: Figures): { usage: Usage; model?: string } | undefined {
  let text: FigureValue | undefined, model: FigureValue | undefined;
  for (let i = 0; i < f.count; i++) {
    const k = f.key(i);
    if (k === USAGE_FIGURE) text = f.value(i);
    else if (k === MODEL_FIGURE) model = f.value(i);
  }
  if (typeof text !== 'string') return undefined;
  const counts = text.split(',');
  if (counts.length !== 4) return undefined;
  const usage: Usage = {};
  const names = ['in', 'out', 'cache_read', 'cache_write'] as const;
  for (let i = 0; i < 4; i++) {
    if (counts[i] === '') continue;
    const v = Number(counts[i]);
    if (!Number.isFinite(v)) return undefined;
    usage[names[i]!] = v;
  }
  return typeof model === 'string' ? { usage, model } : { usage };
}

const TELEMETRY_KINDS: ReadonlySet<FileKind> = new Set(['otlp_log', 'otlp_span']);

/** The figures the index keeps of a landed record (`flags`: its flags), by the kind of file it landed in; undefined when none. */
export function recordFigures(r: SdRecord, kind: FileKind, flags: readonly string[]): Figures | undefined {
  const data = () => r.parts.find((p) => p.k === 'data')?.data;
  if (TELEMETRY_KINDS.has(kind)) return telemetryFigures(data());
  if (flags.includes('api_error')) return errorFigures(data());
  if (kind === 'provider_body') return providerBodyFigures(r);
  return kind === 'transcript' && r.usage ? usageFigures(r.usage, r.model) : undefined;
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

function scalarsOf(v: unknown): Record<string, FigureValue> {
  const out: Record<string, FigureValue> = {};
  if (v && typeof v === 'object') for (const [k, x] of Object.entries(v as Record<string, unknown>)) if (isScalar(x)) out[k] = x;
  return out;
}

/** Pair column layout: key index, type, value (string index, number index, or 0/1). */
export const PAIR_STRIDE = 3;
/** A pair's type (its second slot, with `PAIR_OWN` set for the data part's own fields). */
export const PAIR_STRING = 0,
  PAIR_NUMBER = 1,
  PAIR_BOOLEAN = 2,
  PAIR_OWN = 4;
const STRING = PAIR_STRING,
  NUMBER = PAIR_NUMBER,
  BOOLEAN = PAIR_BOOLEAN,
  OWN = PAIR_OWN;
/** Marks the end of one record's pairs (in a pair's key slot). */
export const PAIR_END = -2;
const END = PAIR_END;

/** Where a `FigureColumnWriter` stood, to go back to (`truncate`). */
export interface FigureWriterMark {
  keys: number;
  pairs: number;
  numbers: number;
}

/** Builds the pair and number columns while the index is encoded; strings go to the index's own table. */
export class FigureColumnWriter {
  readonly keys: string[] = [];
  private readonly keyAt = new Map<string, number>();
  private readonly pairs = new Int32Column();
  private readonly numbers = new Float64Column();
  /** The last usage written, and where its pairs start: the next record of the same message points its pairs at the same strings. */
  private lastUsage?: { f: UsageFigures; start: number };
  constructor(private readonly stringIndex: (s: string) => number) {}
  /** Writes one record's figures; returns where they start, or -1 when it has none. */
  write(f: Figures | undefined): number {
    if (!f) return -1;
    const pairs = this.pairs;
    const start = pairs.length / PAIR_STRIDE;
    if (f instanceof UsageFigures) {
      const last = this.lastUsage;
      if (last && last.f.same(f)) {
        // The same text and model again: their pairs copied, no text made or looked up.
        for (let p = last.start * PAIR_STRIDE; pairs.at(p) !== END; p += PAIR_STRIDE) this.pair(pairs.at(p), pairs.at(p + 1), pairs.at(p + 2));
        this.pair(END, 0, 0);
        return start;
      }
      this.lastUsage = { f, start };
    }
    for (let i = 0; i < f.count; i++) {
      const key = f.key(i),
        value = f.value(i);
      let k = this.keyAt.get(key);
      if (k === undefined) this.keyAt.set(key, (k = this.keys.push(key) - 1));
      const flag = f.own(i) ? OWN : 0;
      if (typeof value === 'string') this.pair(k, STRING | flag, this.stringIndex(value));
      else if (typeof value === 'number') {
        this.numbers.push(value);
        this.pair(k, NUMBER | flag, this.numbers.length - 1);
      } else this.pair(k, BOOLEAN | flag, value ? 1 : 0);
    }
    this.pair(END, 0, 0);
    return start;
  }
  private pair(key: number, type: number, value: number): void {
    this.pairs.push(key);
    this.pairs.push(type);
    this.pairs.push(value);
  }
  mark(): FigureWriterMark {
    return { keys: this.keys.length, pairs: this.pairs.length, numbers: this.numbers.length };
  }
  /** Forgets everything written since `m`: the records it was written for were not kept. */
  truncate(m: FigureWriterMark): void {
    for (const key of this.keys.splice(m.keys)) this.keyAt.delete(key);
    this.pairs.truncate(m.pairs);
    this.numbers.truncate(m.numbers);
    if (this.lastUsage && this.lastUsage.start * PAIR_STRIDE >= m.pairs) this.lastUsage = undefined;
  }
  /** The columns written so far, as views: valid until the next write. */
  columns(): { pairs: Int32Array; numbers: Float64Array } {
    return { pairs: this.pairs.view(), numbers: this.numbers.view() };
  }
}

/** The loaded columns every record's figures are read from. */
export interface FigureColumns {
  keys: string[];
  pairs: Int32Array;
  numbers: Float64Array;
  str: (string | undefined)[];
}

/**
 * A loaded record whose figures a reader can walk in the columns themselves (from pair
 * `figureStart()`, to `PAIR_END`), making no object for them: stage 9 reads tens of thousands.
 */
export interface ColumnCoded {
  readonly figureColumns: FigureColumns;
  /** The record's first pair, or -1 when it has no figures. */
  figureStart(): number;
}

export const columnCodedOf = (e: object): ColumnCoded | undefined => ('figureStart' in e ? (e as ColumnCoded) : undefined);

/** One loaded record's figures, read straight from the columns. */
export class ColumnFigures implements Figures {
  readonly count: number;
  private readonly at: number;
  constructor(
    private readonly c: FigureColumns,
    start: number,
  ) {
    this.at = start * PAIR_STRIDE;
    let n = 0;
    while (c.pairs[this.at + n * PAIR_STRIDE] !== END) n++;
    this.count = n;
  }
  key(i: number): string {
    return this.c.keys[this.c.pairs[this.at + i * PAIR_STRIDE]!]!;
  }
  value(i: number): FigureValue {
    const p = this.at + i * PAIR_STRIDE;
    const type = this.c.pairs[p + 1]! & ~OWN,
      v = this.c.pairs[p + 2]!;
    return type === STRING ? this.c.str[v]! : type === NUMBER ? this.c.numbers[v]! : v === 1;
  }
  own(i: number): boolean {
    return (this.c.pairs[this.at + i * PAIR_STRIDE + 1]! & OWN) !== 0;
  }
  /** The key table, and the number of figure `i`'s key in it. */
  get keyNames(): readonly string[] {
    return this.c.keys;
  }
  keyCode(i: number): number {
    return this.c.pairs[this.at + i * PAIR_STRIDE]!;
  }
  /** The string table the values are numbered in, and a string value's number there (-1: not a string). */
  get strings(): readonly (string | undefined)[] {
    return this.c.str;
  }
  valueCode(i: number): number {
    const p = this.at + i * PAIR_STRIDE;
    return (this.c.pairs[p + 1]! & ~OWN) === STRING ? this.c.pairs[p + 2]! : -1;
  }
}
