import {
  FigureColumnWriter,
  PAIR_BOOLEAN,
  PAIR_END,
  PAIR_NUMBER,
  PAIR_OWN,
  PAIR_STRIDE,
  PAIR_STRING,
  type FigureColumns,
  type Figures,
} from '../../storage/index-figures.js';
import type { IdCodes } from '../../storage/string-codes.js';
import { ATTRIBUTES, attemptStarts, bool, EVENT_KINDS, num, SPAN_KINDS, type Observation, type ObservationKind, type Settable } from './otlp-figures.js';

/**
 * Claude Code's events and spans as columns: one row per record, with no object per record (the
 * first reader made one each; it is kept as the tests' reference join): a join over tens of
 * thousands of events leaves a few typed arrays to the collector instead of one observation each
 * (that garbage was half of the join's cost). A column is made when its field is first written.
 * Strings are kept as their codes in the join's numbering (storage/string-codes.ts), and a loaded
 * index's records are read straight from its pair columns (`readColumns`): an id, a name or a time
 * is a number copied, never a string looked up or stored.
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
const OTHER = KIND_CODE.get('other')!,
  CALL_SPAN = KIND_CODE.get('call_span')!;

/** Where each attribute a join reads goes: a string or number column, or success (how each reads: otlp-figures.ts's str, num and bool). */
type Slot = { type: 'string'; column: number } | { type: 'number'; column: number } | { type: 'boolean' };
const slotOf = (field: Settable): Slot => {
  const s = STRING_FIELDS.indexOf(field as StringField);
  if (s >= 0) return { type: 'string', column: s };
  const n = NUMBER_FIELDS.indexOf(field as NumberField);
  if (n >= 0) return { type: 'number', column: n };
  if (field === 'success') return { type: 'boolean' };
  throw new Error(`the observation field ${field} has no column`);
};
const SLOTS = new Map(Object.entries(ATTRIBUTES).map(([key, [field]]) => [key, slotOf(field)]));

const STRING_COLUMN = Object.fromEntries(STRING_FIELDS.map((f, i) => [f, i])) as Record<StringField, number>;
const NUMBER_COLUMN = Object.fromEntries(NUMBER_FIELDS.map((f, i) => [f, i])) as Record<NumberField, number>;

/**
 * What a key does, as one small integer, for the column reader's plan: the data part's own fields
 * (read only in the record's leading own pairs), `error_type`, a string or number column, success.
 */
const OWN_FIELDS = ['event', 'name', 'duration_ns', 'events', 'span_id', 'parent_span_id', 'start', 'end'] as const;
const [OWN_EVENT, OWN_NAME, OWN_DURATION_NS, OWN_EVENTS, OWN_SPAN_ID, OWN_PARENT_SPAN_ID, OWN_START, OWN_END] = OWN_FIELDS.map((_, i) => i + 1) as number[];
const ACT_ERROR_TYPE = 16,
  ACT_SUCCESS = 17,
  ACT_STRING = 32, // + the string column
  ACT_NUMBER = 64; // + the number column
const attributeAction = (key: string): number => {
  const slot = SLOTS.get(key);
  if (!slot) return key === 'error_type' ? ACT_ERROR_TYPE : 0;
  return slot.type === 'string' ? ACT_STRING + slot.column : slot.type === 'number' ? ACT_NUMBER + slot.column : ACT_SUCCESS;
};
const ownAction = (key: string): number => OWN_FIELDS.indexOf(key as (typeof OWN_FIELDS)[number]) + 1;

/** A pair's value as `num` reads it: a number, or a string holding one. */
function pairNumber(type: number, v: number, c: FigureColumns): number | undefined {
  if (type === PAIR_NUMBER) return c.numbers[v]!;
  return type === PAIR_STRING ? num(c.str[v]!) : undefined;
}
/** A pair's value as `bool` reads it. */
function pairBoolean(type: number, v: number, c: FigureColumns): boolean | undefined {
  if (type === PAIR_BOOLEAN) return v === 1;
  return type === PAIR_STRING ? bool(c.str[v]!) : undefined;
}

export class ObservationTable {
  length = 0;
  private readonly capacity: number;
  private readonly kinds: Uint8Array;
  /** The event's or span's name, as a code. */
  private readonly names: Int32Array;
  /** Where each row was landed: the record's file sequence and row. */
  readonly seqs: Int32Array;
  readonly rows: Int32Array;
  /** The record's own time (an event's timestamp, a span's start), ms since the epoch; NaN when it has none. */
  private readonly times: Float64Array;
  /** Each string field's code + 1; 0 where absent. */
  private readonly strings: (Int32Array | undefined)[] = STRING_FIELDS.map(() => undefined);
  /** NaN where absent. */
  private readonly numbers: (Float64Array | undefined)[] = NUMBER_FIELDS.map(() => undefined);
  /** 1, 0, or -1 where absent. */
  private readonly success: Int8Array;
  private readonly attempts = new Map<number, { attempt: number; at: string }[]>();
  /** The kind of each name met, by the name's code. */
  private readonly kindOfName = new Map<number, number>();

  /** `capacity`: at most this many rows (the telemetry records to read); `codes`: the numbering every string is kept in. */
  constructor(
    capacity: number,
    private readonly codes: IdCodes,
  ) {
    this.capacity = capacity;
    this.kinds = new Uint8Array(capacity);
    this.names = new Int32Array(capacity);
    this.seqs = new Int32Array(capacity);
    this.rows = new Int32Array(capacity);
    this.times = new Float64Array(capacity).fill(NaN);
    this.success = new Int8Array(capacity).fill(-1);
  }

  /** What each key of a loaded index's key table does, by the key's number: as an own field, and as an attribute. */
  private keyTable: readonly string[] | undefined;
  private ownPlan: Int8Array = new Int8Array(0);
  private attributePlan: Int8Array = new Int8Array(0);
  private planFor(keys: readonly string[]): void {
    if (keys === this.keyTable) return;
    this.keyTable = keys;
    this.ownPlan = Int8Array.from(keys, ownAction);
    this.attributePlan = Int8Array.from(keys, attributeAction);
  }

  /** The join's code of string number `v` of the columns `c`: `v` itself, or through `own` (see `readColumns`). */
  private joinCode(own: Int32Array | undefined, c: FigureColumns, v: number): number {
    if (own === undefined) return v;
    const known = own[v]!;
    return known >= 0 ? known : (own[v] = this.codes.of(c.str[v]!, -1));
  }

  private setCode(column: number, r: number, code: number): void {
    (this.strings[column] ??= new Int32Array(this.capacity))[r] = code + 1;
  }
  private setNumber(column: number, r: number, value: number): void {
    (this.numbers[column] ??= new Float64Array(this.capacity).fill(NaN))[r] = value;
  }
  /** The kind a record's name makes it, as a code, from its name's code and text. */
  private kindOf(isEvent: boolean, nameCode: number, name: string): number {
    // Event and span names never share text in the runtime's vocabulary; the key keeps them apart anyway.
    const key = isEvent ? nameCode : -2 - nameCode;
    let kind = this.kindOfName.get(key);
    if (kind === undefined) this.kindOfName.set(key, (kind = KIND_CODE.get((isEvent ? EVENT_KINDS[name] : SPAN_KINDS[name]) ?? 'other')!));
    return kind;
  }
  /** Starts row `r` with what every row has. */
  private open(r: number, kind: number, name: number, seq: number, row: number, time: number | undefined): void {
    this.length++;
    this.kinds[r] = kind;
    this.names[r] = name;
    this.seqs[r] = seq;
    this.rows[r] = row;
    if (time !== undefined) this.times[r] = time;
  }

  /**
   * Reads one record's figures (from pair `start` of the columns `c`) as the next row, in one pass,
   * own fields first. Its strings are kept as codes in the join's numbering: a loaded index's
   * string numbers when they are the join's (`IdCodes.sharedTable === c.str`, `own` undefined),
   * else through `own`, one slot per string number of `c` (-1 until first met), filled as strings
   * are met (see `FigureColumnsOf`). Returns false (and adds no row) when they are not an event or
   * span of this runtime's. An event or span no join reads is a row with its kind (`other`) and
   * name only.
   */
  readColumns(c: FigureColumns, start: number, seq: number, row: number, time: number | undefined, own?: Int32Array): boolean {
    this.planFor(c.keys);
    const { pairs, str: text } = c;
    const ownPlan = this.ownPlan,
      attributePlan = this.attributePlan;
    const r = this.length;
    let kind = -1,
      name = -1,
      isEvent = false,
      spanNs: number | undefined,
      events = -1,
      errorType = -1,
      spanId = -1,
      parentSpanId = -1,
      spanStart = -1,
      spanEnd = -1;
    let p = start * PAIR_STRIDE;
    for (; pairs[p] !== PAIR_END && (pairs[p + 1]! & PAIR_OWN) !== 0; p += PAIR_STRIDE) {
      const type = pairs[p + 1]! & ~PAIR_OWN,
        v = pairs[p + 2]!;
      const act = ownPlan[pairs[p]!]!;
      // Only a non-empty string names, sets an id or a time (str); a duration may be a number or a string (num).
      const isText = type === PAIR_STRING && text[v] !== '';
      if (act === OWN_EVENT || act === OWN_NAME) {
        if (!isText || kind >= 0 || (act === OWN_NAME && isEvent)) continue;
        isEvent = act === OWN_EVENT;
        name = this.joinCode(own, c, v);
        kind = this.kindOf(isEvent, name, text[v]!);
        if (kind === OTHER) break;
      } else if (act === OWN_DURATION_NS) spanNs = pairNumber(type, v, c);
      else if (!isText) continue;
      else if (act === OWN_EVENTS) events = v;
      else if (act === OWN_SPAN_ID) spanId = this.joinCode(own, c, v);
      else if (act === OWN_PARENT_SPAN_ID) parentSpanId = this.joinCode(own, c, v);
      else if (act === OWN_START) spanStart = this.joinCode(own, c, v);
      else if (act === OWN_END) spanEnd = this.joinCode(own, c, v);
    }
    if (kind < 0) return false;
    this.open(r, kind, name, seq, row, time);
    if (kind === OTHER) return true;
    for (; pairs[p] !== PAIR_END; p += PAIR_STRIDE) {
      const act = attributePlan[pairs[p]!]!;
      if (act === 0) continue;
      const type = pairs[p + 1]! & ~PAIR_OWN,
        v = pairs[p + 2]!;
      if (act >= ACT_NUMBER) {
        const n = pairNumber(type, v, c);
        if (n !== undefined) this.setNumber(act - ACT_NUMBER, r, n);
      } else if (act >= ACT_STRING) {
        if (type === PAIR_STRING && text[v] !== '') this.setCode(act - ACT_STRING, r, this.joinCode(own, c, v));
      } else if (act === ACT_SUCCESS) {
        const b = pairBoolean(type, v, c);
        if (b !== undefined) this.success[r] = b ? 1 : 0;
      } else if (type === PAIR_STRING && text[v] !== '') errorType = this.joinCode(own, c, v);
    }
    this.finishRow(r, kind, isEvent, spanNs, errorType, spanId, parentSpanId, spanStart, spanEnd, events < 0 ? undefined : text[events]);
    return true;
  }

  /** What is left once a row's attributes are read: the error's fallback, and a span's own fields. */
  private finishRow(
    r: number,
    kind: number,
    isEvent: boolean,
    spanNs: number | undefined,
    errorType: number,
    spanId: number,
    parentSpanId: number,
    spanStart: number,
    spanEnd: number,
    events: string | undefined,
  ): void {
    if (errorType >= 0 && this.code('error', r) < 0) this.setCode(STRING_COLUMN.error, r, errorType);
    if (isEvent) return;
    if (spanId >= 0) this.setCode(STRING_COLUMN.spanId, r, spanId);
    if (parentSpanId >= 0) this.setCode(STRING_COLUMN.parentSpanId, r, parentSpanId);
    if (spanStart >= 0) this.setCode(STRING_COLUMN.start, r, spanStart);
    if (spanEnd >= 0) this.setCode(STRING_COLUMN.end, r, spanEnd);
    // A span's own duration attribute is what the runtime measured; its start and end bound it.
    if (spanNs !== undefined && this.number('durationMs', r) === undefined) this.setNumber(NUMBER_COLUMN.durationMs, r, spanNs / 1e6);
    if (kind === CALL_SPAN && events) {
      const starts = attemptStarts(events);
      if (starts) this.attempts.set(r, starts);
    }
  }

  /** Takes back the last row read (a record of another session), leaving its place empty. */
  dropLast(): void {
    const r = --this.length;
    this.times[r] = NaN;
    for (const c of this.strings) if (c) c[r] = 0;
    for (const c of this.numbers) if (c) c[r] = NaN;
    this.success[r] = -1;
    this.attempts.delete(r);
  }

  kind(r: number): ObservationKind {
    return KINDS[this.kinds[r]!]!;
  }
  name(r: number): string {
    return this.codes.text(this.names[r]!);
  }
  /** The row's time, or undefined. */
  time(r: number): number | undefined {
    const t = this.times[r]!;
    return Number.isNaN(t) ? undefined : t;
  }
  text(field: StringField, r: number): string | undefined {
    const code = this.code(field, r);
    return code < 0 ? undefined : this.codes.text(code);
  }
  /** The code of the row's string field in the join's numbering, or -1 where absent. */
  code(field: StringField, r: number): number {
    const c = this.strings[STRING_COLUMN[field]];
    return c ? c[r]! - 1 : -1;
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

/**
 * The figures of records the join cannot read in place (built in memory, or loaded with a string
 * table that is not the join's), written once into columns of their own, so `readColumns` is the
 * one reader of every record: `starts[i]` is the i-th figures' first pair (-1: none), and `own`
 * holds the join's code of each string number, -1 until the table first meets it.
 */
export function figureColumnsOf(figures: readonly (Figures | undefined)[]): { columns: FigureColumns; starts: Int32Array; own: Int32Array } {
  const str: string[] = [];
  const numberOf = new Map<string, number>();
  const writer = new FigureColumnWriter((text) => {
    let v = numberOf.get(text);
    if (v === undefined) numberOf.set(text, (v = str.push(text) - 1));
    return v;
  });
  const starts = Int32Array.from(figures, (f) => writer.write(f));
  const { pairs, numbers } = writer.columns();
  return { columns: { keys: writer.keys, pairs, numbers, str }, starts, own: new Int32Array(str.length).fill(-1) };
}
