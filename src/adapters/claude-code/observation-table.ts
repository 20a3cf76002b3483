import type { ColumnFigures, Figures } from '../../storage/index-figures.js';
import type { IdCodes } from '../../storage/string-codes.js';
import { ChunkedList } from '../../util/chunked-list.js';
import {
  ATTRIBUTES,
  attemptStarts,
  type bool,
  EVENT_KINDS,
  num,
  SPAN_KINDS,
  str,
  type Observation,
  type ObservationKind,
  type Settable,
} from './otlp-figures.js';

/**
 * Claude Code's events and spans as columns: one row per record, with no object per record (the
 * first reader made one each; it is kept as the tests' reference join): a join over tens of
 * thousands of events leaves a few typed arrays to the collector instead of one observation each
 * (that garbage was half of the join's cost). A column is made when its field is first written, and
 * strings go in small chunks: large JS arrays are costly to allocate (see util/chunked-list.ts).
 */

const STRING_FIELDS = [
  'session',
  'prompt',
  'request',
  'toolUse',
  'record',
  'spanId',
  'parentSpanId',
  'start',
  'end',
  'speed',
  'model',
  'error',
  'decision',
  'decisionSource',
  'toolName',
  'mcpServer',
  'querySource',
] as const satisfies readonly (keyof Observation)[];
const NUMBER_FIELDS = [
  'durationMs',
  'ttftMs',
  'costUsd',
  'inputTokens',
  'outputTokens',
  'cacheReadTokens',
  'cacheCreationTokens',
  'statusCode',
  'attempt',
  'resultBytes',
] as const satisfies readonly (keyof Observation)[];
type StringField = (typeof STRING_FIELDS)[number];
type NumberField = (typeof NUMBER_FIELDS)[number];

const KINDS: readonly ObservationKind[] = [...new Set<ObservationKind>([...Object.values(EVENT_KINDS), ...Object.values(SPAN_KINDS), 'other'])];
const KIND_CODE = new Map(KINDS.map((k, i) => [k, i]));

/** Where each attribute a join reads goes: a string, number or boolean column, and how its value reads. */
type Slot =
  { type: 'string'; column: number; read: typeof str } | { type: 'number'; column: number; read: typeof num } | { type: 'boolean'; read: typeof bool };
const slotOf = (field: Settable, read: (typeof ATTRIBUTES)[string][1]): Slot => {
  const s = STRING_FIELDS.indexOf(field as StringField);
  if (s >= 0) return { type: 'string', column: s, read: read as typeof str };
  const n = NUMBER_FIELDS.indexOf(field as NumberField);
  if (n >= 0) return { type: 'number', column: n, read: read as typeof num };
  if (field === 'success') return { type: 'boolean', read: read as typeof bool };
  throw new Error(`the observation field ${field} has no column`);
};
const SLOTS = new Map(Object.entries(ATTRIBUTES).map(([key, [field, read]]) => [key, slotOf(field, read)]));

const STRING_COLUMN = Object.fromEntries(STRING_FIELDS.map((f, i) => [f, i])) as Record<StringField, number>;
const NUMBER_COLUMN = Object.fromEntries(NUMBER_FIELDS.map((f, i) => [f, i])) as Record<NumberField, number>;

export class ObservationTable {
  length = 0;
  private readonly capacity: number;
  private readonly kinds: Uint8Array;
  private readonly names = new ChunkedList<string>();
  /** Where each row was landed: the record's file sequence and row. */
  readonly seqs: Int32Array;
  readonly rows: Int32Array;
  /** The record's own time (an event's timestamp, a span's start), ms since the epoch; NaN when it has none. */
  private readonly times: Float64Array;
  private readonly strings: (ChunkedList<string | undefined> | undefined)[] = STRING_FIELDS.map(() => undefined);
  /** NaN where absent. */
  private readonly numbers: (Float64Array | undefined)[] = NUMBER_FIELDS.map(() => undefined);
  /** 1, 0, or -1 where absent. */
  private readonly success: Int8Array;
  private readonly attempts = new Map<number, { attempt: number; at: string }[]>();
  /** The request and tool use ids' codes (+1; 0 where absent), when the table was given a numbering: the join keys arrays by them. */
  private readonly requestCodes: Int32Array | undefined;
  private readonly toolUseCodes: Int32Array | undefined;

  /** `capacity`: at most this many rows (the telemetry records to read); `codes`: the numbering the join keys ids by. */
  constructor(
    capacity: number,
    private readonly codes?: IdCodes,
  ) {
    this.capacity = capacity;
    if (codes) {
      this.requestCodes = new Int32Array(capacity);
      this.toolUseCodes = new Int32Array(capacity);
    }
    this.kinds = new Uint8Array(capacity);
    this.seqs = new Int32Array(capacity);
    this.rows = new Int32Array(capacity);
    this.times = new Float64Array(capacity).fill(NaN);
    this.success = new Int8Array(capacity).fill(-1);
  }

  /** The slot of each key of a loaded index's key table, by the key's number: one array read per figure, not a map lookup by text. */
  private keyTable: readonly string[] | undefined;
  private keySlots: (Slot | undefined)[] = [];
  private slotsFor(keys: readonly string[]): (Slot | undefined)[] {
    if (keys !== this.keyTable) {
      this.keyTable = keys;
      this.keySlots = keys.map((k) => SLOTS.get(k));
    }
    return this.keySlots;
  }

  private setText(column: number, r: number, value: string | undefined): void {
    (this.strings[column] ??= new ChunkedList<string | undefined>()).set(r, value);
  }
  private setNumber(column: number, r: number, value: number): void {
    (this.numbers[column] ??= new Float64Array(this.capacity).fill(NaN))[r] = value;
  }

  /**
   * Reads one record's figures as the next row, in one pass, own fields first. Returns false (and
   * adds no row) when they are not an event or span of this runtime's. An event or span no join
   * reads is a row with its kind (`other`) and name only.
   */
  read(figures: Figures, seq: number, row: number, time: number | undefined): boolean {
    const r = this.length;
    let kind: ObservationKind | undefined;
    let name: string | undefined;
    let isEvent = false,
      spanNs: number | undefined,
      events: string | undefined,
      errorType: string | undefined,
      spanId: string | undefined,
      parentSpanId: string | undefined,
      start: string | undefined,
      end: string | undefined;
    const n = figures.count;
    const columnFigures = 'valueCode' in figures ? (figures as ColumnFigures) : undefined;
    let i = 0;
    for (; i < n && figures.own(i); i++) {
      const key = figures.key(i);
      const value = figures.value(i);
      if (key === 'event' || key === 'name') {
        const named = str(value);
        if (!named || kind || (key === 'name' && isEvent)) continue;
        isEvent = key === 'event';
        kind = (isEvent ? EVENT_KINDS[named] : SPAN_KINDS[named]) ?? 'other';
        name = named;
        if (kind === 'other') break;
      } else if (key === 'duration_ns') spanNs = num(value);
      else if (key === 'events') events = str(value);
      else if (key === 'span_id') spanId = str(value);
      else if (key === 'parent_span_id') parentSpanId = str(value);
      else if (key === 'start') start = str(value);
      else if (key === 'end') end = str(value);
    }
    if (!kind || name === undefined) return false;
    this.length++;
    this.kinds[r] = KIND_CODE.get(kind)!;
    this.names.set(r, name);
    this.seqs[r] = seq;
    this.rows[r] = row;
    if (time !== undefined) this.times[r] = time;
    if (kind === 'other') return true;
    const slots = columnFigures ? this.slotsFor(columnFigures.keyNames) : undefined;
    for (; i < n; i++) {
      const slot = slots ? slots[columnFigures!.keyCode(i)] : SLOTS.get(figures.key(i));
      if (!slot) {
        if (figures.key(i) === 'error_type') errorType = str(figures.value(i));
        continue;
      }
      const value = figures.value(i);
      if (slot.type === 'string') {
        const read = slot.read(value);
        if (read === undefined) continue;
        this.setText(slot.column, r, read);
        const codes = slot.column === STRING_COLUMN.request ? this.requestCodes : slot.column === STRING_COLUMN.toolUse ? this.toolUseCodes : undefined;
        if (codes) codes[r] = this.codes!.of(read, columnFigures ? columnFigures.valueCode(i) : -1) + 1;
      } else if (slot.type === 'number') {
        const read = slot.read(value);
        if (read !== undefined) this.setNumber(slot.column, r, read);
      } else {
        const read = slot.read(value);
        if (read !== undefined) this.success[r] = read ? 1 : 0;
      }
    }
    if (errorType !== undefined && this.text('error', r) === undefined) this.setText(STRING_COLUMN.error, r, errorType);
    if (!isEvent) {
      if (spanId) this.setText(STRING_COLUMN.spanId, r, spanId);
      if (parentSpanId) this.setText(STRING_COLUMN.parentSpanId, r, parentSpanId);
      if (start) this.setText(STRING_COLUMN.start, r, start);
      if (end) this.setText(STRING_COLUMN.end, r, end);
      // A span's own duration attribute is what the runtime measured; its start and end bound it.
      if (spanNs !== undefined && this.number('durationMs', r) === undefined) this.setNumber(NUMBER_COLUMN.durationMs, r, spanNs / 1e6);
      if (kind === 'call_span' && events) {
        const starts = attemptStarts(events);
        if (starts) this.attempts.set(r, starts);
      }
    }
    return true;
  }

  /** Takes back the last row read (a record of another session), leaving its place empty. */
  dropLast(): void {
    const r = --this.length;
    this.times[r] = NaN;
    for (const c of this.strings) if (c?.get(r) !== undefined) c.set(r, undefined);
    for (const c of this.numbers) if (c) c[r] = NaN;
    this.success[r] = -1;
    this.attempts.delete(r);
    if (this.requestCodes) this.requestCodes[r] = 0;
    if (this.toolUseCodes) this.toolUseCodes[r] = 0;
  }

  kind(r: number): ObservationKind {
    return KINDS[this.kinds[r]!]!;
  }
  name(r: number): string {
    return this.names.get(r)!;
  }
  /** The row's time, or undefined. */
  time(r: number): number | undefined {
    const t = this.times[r]!;
    return Number.isNaN(t) ? undefined : t;
  }
  text(field: StringField, r: number): string | undefined {
    return this.strings[STRING_COLUMN[field]]?.get(r);
  }
  /** The code of the row's request or tool use id in the table's numbering, or -1 (absent, or no numbering given). */
  code(field: 'request' | 'toolUse', r: number): number {
    const codes = field === 'request' ? this.requestCodes : this.toolUseCodes;
    return codes ? codes[r]! - 1 : -1;
  }
  number(field: NumberField, r: number): number | undefined {
    const c = this.numbers[NUMBER_COLUMN[field]];
    if (!c) return undefined;
    const v = c[r]!;
    return Number.isNaN(v) ? undefined : v;
  }
  succeeded(r: number): boolean | undefined {
    const s = this.success[r]!;
    return s < 0 ? undefined : s === 1;
  }
  attemptStarts(r: number): { attempt: number; at: string }[] | undefined {
    return this.attempts.get(r);
  }

  /** One row as an `Observation` object, for the few places that want one. */
  observation(r: number): Observation {
    const o: Observation = { kind: this.kind(r), name: this.name(r) };
    const w = o as unknown as Record<string, unknown>;
    for (const f of STRING_FIELDS) {
      const v = this.text(f, r);
      if (v !== undefined) w[f] = v;
    }
    for (const f of NUMBER_FIELDS) {
      const v = this.number(f, r);
      if (v !== undefined) w[f] = v;
    }
    const success = this.succeeded(r);
    if (success !== undefined) o.success = success;
    const starts = this.attempts.get(r);
    if (starts) o.attemptStarts = starts;
    return o;
  }
}
