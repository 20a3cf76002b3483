/**
 * Decodes the parts of an OTLP request a receiver lands — log records, spans, resources, scopes —
 * straight from the wire into plain JSON-ready values, without protobufjs message objects in
 * between. Attribute lists become objects, AnyValues become JSON values (see below), ids become
 * hex. This is the receiver's hot path: one pass over the bytes, no intermediate objects to
 * convert and collect, which is several times faster than decoding and then converting.
 *
 * Only call on bytes `validateMessage` accepted: the structure is trusted here (tags, lengths,
 * UTF-8), so nothing is checked twice. Field numbers are those of proto/opentelemetry/….
 *
 * AnyValue as JSON: a string stays a string, an int64 becomes a number when it is exact in JSON
 * (else its decimal string), a double a number (NaN and infinities as strings), an array an
 * array, a key-value list an object, bytes `{ "base64": "…" }`, and an empty value `null`.
 * Repeated keys keep the first value (OTLP forbids them; aszcol keeps first copies).
 */
export type Plain = null | boolean | number | string | Plain[] | { [k: string]: Plain };
export type PlainObject = { [k: string]: Plain };

let at = 0;

function varint(buf: Buffer): number {
  let value = 0;
  let mul = 1;
  for (;;) {
    const b = buf[at++]!;
    value += (b & 0x7f) * mul;
    if (b < 0x80) return value;
    mul *= 128;
  }
}

/** An int64 varint: a number when exact, else the decimal string (negative values take ten bytes). */
function int64(buf: Buffer): number | string {
  const start = at;
  let n = 0;
  while (buf[at + n]! >= 0x80) n++;
  if (n < 7) return varint(buf); // at most 49 bits: exact as a number, never negative
  let v = 0n;
  for (let i = n; i >= 0; i--) v = (v << 7n) | BigInt(buf[start + i]! & 0x7f);
  at = start + n + 1;
  const s = BigInt.asIntN(64, v);
  return s >= BigInt(Number.MIN_SAFE_INTEGER) && s <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(s) : s.toString();
}

function skip(buf: Buffer, wt: number): void {
  if (wt === 0) varint(buf);
  else if (wt === 1) at += 8;
  else if (wt === 5) at += 4;
  else if (wt === 2) at += varint(buf);
}

/**
 * Buffer's own UTF-8 slicer, which `toString('utf8', …)` calls after checking its arguments and
 * looking up the encoding (a tenth of the cost of a short string); toString where it is missing.
 */
type Utf8Slicer = { utf8Slice(start: number, end: number): string };
const utf8Slice: (buf: Buffer, start: number, end: number) => string =
  typeof (Buffer.prototype as unknown as Partial<Utf8Slicer>).utf8Slice === 'function'
    ? (buf, start, end) => (buf as unknown as Utf8Slicer).utf8Slice(start, end)
    : (buf, start, end) => buf.toString('utf8', start, end);

/**
 * Short ASCII strings decoded lately, by a hash of their length and three of their bytes: attribute
 * keys, session and prompt ids, event and model names repeat from record to record, and decoding
 * each copy again (plus the garbage of the copies) was a third of the landing thread's time.
 * A hit is confirmed byte by byte, so a collision only costs a decode.
 */
const STR_CACHE_SIZE = 512;
const STR_CACHE_MAX = 64;
const strCache: (string | undefined)[] = new Array<string | undefined>(STR_CACHE_SIZE).fill(undefined);

function str(buf: Buffer, end: number): string {
  const start = at;
  at = end;
  const len = end - start;
  if (len === 0) return '';
  if (len > STR_CACHE_MAX) return utf8Slice(buf, start, end);
  const h = (len * 31 + buf[start]! * 7 + buf[end - 1]! * 13 + buf[start + (len >> 1)]! * 3) & (STR_CACHE_SIZE - 1);
  const hit = strCache[h];
  if (hit !== undefined && hit.length === len) {
    let i = 0;
    while (i < len && hit.charCodeAt(i) === buf[start + i]) i++;
    if (i === len) return hit;
  }
  const s = utf8Slice(buf, start, end);
  // As many characters as bytes: valid UTF-8 (validateMessage checked it) that is all ASCII, so
  // comparing char codes with bytes is exact for it.
  if (s.length === len) strCache[h] = s;
  return s;
}

function u64(buf: Buffer): bigint {
  const v = buf.readBigUInt64LE(at);
  at += 8;
  return v;
}

function f64(buf: Buffer): number {
  const v = buf.readDoubleLE(at);
  at += 8;
  return v;
}

function u32(buf: Buffer): number {
  const v = buf.readUInt32LE(at);
  at += 4;
  return v;
}

function hex(buf: Buffer, end: number): string {
  const s = buf.toString('hex', at, end);
  at = end;
  return s;
}

/** AnyValue at [at, end). */
function anyValue(buf: Buffer, end: number): Plain {
  let out: Plain = null;
  while (at < end) {
    const tag = varint(buf);
    const id = tag >>> 3;
    const wt = tag & 7;
    switch (id) {
      case 1: { const e = varint(buf) + at; out = str(buf, e); break; }
      case 2: out = varint(buf) !== 0; break;
      case 3: out = int64(buf); break;
      case 4: { const d = f64(buf); out = Number.isFinite(d) ? d : String(d); break; }
      case 5: { const e = varint(buf) + at; out = arrayValue(buf, e); break; }
      case 6: { const e = varint(buf) + at; out = keyValues(buf, e, 1); break; }
      case 7: { const e = varint(buf) + at; out = { base64: buf.toString('base64', at, e) }; at = e; break; }
      default: skip(buf, wt);
    }
  }
  return out;
}

function arrayValue(buf: Buffer, end: number): Plain[] {
  const out: Plain[] = [];
  while (at < end) {
    const tag = varint(buf);
    if (tag >>> 3 === 1 && (tag & 7) === 2) {
      const e = varint(buf) + at;
      out.push(anyValue(buf, e));
      at = e;
    } else skip(buf, tag & 7);
  }
  return out;
}

/** KeyValue one at [at, end), added to `into` unless its key is already there. */
function keyValue(buf: Buffer, end: number, into: PlainObject): void {
  let key = '';
  let value: Plain = null;
  while (at < end) {
    const tag = varint(buf);
    const id = tag >>> 3;
    if (id === 1 && (tag & 7) === 2) {
      const e = varint(buf) + at;
      key = str(buf, e);
    } else if (id === 2 && (tag & 7) === 2) {
      const e = varint(buf) + at;
      value = anyValue(buf, e);
      at = e;
    } else skip(buf, tag & 7);
  }
  // Object.hasOwn, so `constructor` or `toString` are keys like any other; `__proto__` is defined,
  // not assigned (assigning it would set the prototype, and the attribute would vanish from the JSON).
  if (Object.hasOwn(into, key)) return;
  if (key === '__proto__') Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
  else into[key] = value;
}

/** The repeated KeyValue field `field` of the message at [at, end) (KeyValueList is field 1). */
function keyValues(buf: Buffer, end: number, field: number, into: PlainObject = {}): PlainObject {
  while (at < end) {
    const tag = varint(buf);
    if (tag >>> 3 === field && (tag & 7) === 2) {
      const e = varint(buf) + at;
      keyValue(buf, e, into);
      at = e;
    } else skip(buf, tag & 7);
  }
  return into;
}

export interface PlainLogRecord {
  timeNs: bigint;
  observedNs: bigint;
  severityNumber: number;
  severityText: string;
  body: Plain | undefined;
  attributes: PlainObject;
  droppedAttributes: number;
  flags: number;
  traceId: string;
  spanId: string;
  eventName: string;
}

/** A LogRecord at buf[start, end). */
export function decodeLogRecord(buf: Buffer, start: number, end: number): PlainLogRecord {
  const r: PlainLogRecord = {
    timeNs: 0n, observedNs: 0n, severityNumber: 0, severityText: '', body: undefined, attributes: {},
    droppedAttributes: 0, flags: 0, traceId: '', spanId: '', eventName: '',
  };
  at = start;
  while (at < end) {
    const tag = varint(buf);
    const id = tag >>> 3;
    const wt = tag & 7;
    if (wt === 2) {
      const e = varint(buf) + at;
      switch (id) {
        case 3: r.severityText = str(buf, e); break;
        case 5: r.body = anyValue(buf, e); break;
        case 6: keyValue(buf, e, r.attributes); break;
        case 9: r.traceId = hex(buf, e); break;
        case 10: r.spanId = hex(buf, e); break;
        case 12: r.eventName = str(buf, e); break;
      }
      at = e;
    } else if (id === 1 && wt === 1) r.timeNs = u64(buf);
    else if (id === 11 && wt === 1) r.observedNs = u64(buf);
    else if (id === 2 && wt === 0) r.severityNumber = varint(buf);
    else if (id === 7 && wt === 0) r.droppedAttributes = varint(buf);
    else if (id === 8 && wt === 5) r.flags = u32(buf);
    else skip(buf, wt);
  }
  return r;
}

export interface PlainSpanEvent {
  timeNs: bigint;
  name: string;
  attributes: PlainObject;
}

export interface PlainSpanLink {
  traceId: string;
  spanId: string;
  attributes: PlainObject;
}

export interface PlainSpan {
  traceId: string;
  spanId: string;
  traceState: string;
  parentSpanId: string;
  flags: number;
  name: string;
  kind: number;
  startNs: bigint;
  endNs: bigint;
  attributes: PlainObject;
  droppedAttributes: number;
  events: PlainSpanEvent[];
  links: PlainSpanLink[];
  status: { code: number; message: string } | undefined;
}

function spanEvent(buf: Buffer, end: number): PlainSpanEvent {
  const ev: PlainSpanEvent = { timeNs: 0n, name: '', attributes: {} };
  while (at < end) {
    const tag = varint(buf);
    const id = tag >>> 3;
    const wt = tag & 7;
    if (id === 1 && wt === 1) ev.timeNs = u64(buf);
    else if (id === 2 && wt === 2) { const e = varint(buf) + at; ev.name = str(buf, e); }
    else if (id === 3 && wt === 2) { const e = varint(buf) + at; keyValue(buf, e, ev.attributes); at = e; }
    else skip(buf, wt);
  }
  return ev;
}

function spanLink(buf: Buffer, end: number): PlainSpanLink {
  const l: PlainSpanLink = { traceId: '', spanId: '', attributes: {} };
  while (at < end) {
    const tag = varint(buf);
    const id = tag >>> 3;
    const wt = tag & 7;
    if (wt === 2 && (id === 1 || id === 2 || id === 4)) {
      const e = varint(buf) + at;
      if (id === 1) l.traceId = hex(buf, e);
      else if (id === 2) l.spanId = hex(buf, e);
      else keyValue(buf, e, l.attributes);
      at = e;
    } else skip(buf, wt);
  }
  return l;
}

function spanStatus(buf: Buffer, end: number): { code: number; message: string } {
  const s = { code: 0, message: '' };
  while (at < end) {
    const tag = varint(buf);
    const id = tag >>> 3;
    const wt = tag & 7;
    if (id === 2 && wt === 2) { const e = varint(buf) + at; s.message = str(buf, e); }
    else if (id === 3 && wt === 0) s.code = varint(buf);
    else skip(buf, wt);
  }
  return s;
}

/** A Span at buf[start, end). */
export function decodeSpan(buf: Buffer, start: number, end: number): PlainSpan {
  const s: PlainSpan = {
    traceId: '', spanId: '', traceState: '', parentSpanId: '', flags: 0, name: '', kind: 0, startNs: 0n, endNs: 0n,
    attributes: {}, droppedAttributes: 0, events: [], links: [], status: undefined,
  };
  at = start;
  while (at < end) {
    const tag = varint(buf);
    const id = tag >>> 3;
    const wt = tag & 7;
    if (wt === 2) {
      const e = varint(buf) + at;
      switch (id) {
        case 1: s.traceId = hex(buf, e); break;
        case 2: s.spanId = hex(buf, e); break;
        case 3: s.traceState = str(buf, e); break;
        case 4: s.parentSpanId = hex(buf, e); break;
        case 5: s.name = str(buf, e); break;
        case 9: keyValue(buf, e, s.attributes); break;
        case 11: s.events.push(spanEvent(buf, e)); break;
        case 13: s.links.push(spanLink(buf, e)); break;
        case 15: s.status = spanStatus(buf, e); break;
      }
      at = e;
    } else if (id === 7 && wt === 1) s.startNs = u64(buf);
    else if (id === 8 && wt === 1) s.endNs = u64(buf);
    else if (id === 6 && wt === 0) s.kind = varint(buf);
    else if (id === 10 && wt === 0) s.droppedAttributes = varint(buf);
    else if (id === 16 && wt === 5) s.flags = u32(buf);
    else skip(buf, wt);
  }
  return s;
}

export interface PlainResource {
  attributes: PlainObject;
  droppedAttributes: number;
}

export interface PlainScope {
  name: string;
  version: string;
  attributes: PlainObject;
  droppedAttributes: number;
}

/**
 * A Resource given as the payloads of every occurrence of the field: protobuf merges repeated
 * occurrences of a singular message, which for these means attributes add up, scalars last wins.
 */
export function decodeResource(buf: Buffer, slices: { start: number; end: number }[]): PlainResource {
  const r: PlainResource = { attributes: {}, droppedAttributes: 0 };
  for (const sl of slices) {
    at = sl.start;
    while (at < sl.end) {
      const tag = varint(buf);
      const id = tag >>> 3;
      const wt = tag & 7;
      if (id === 1 && wt === 2) { const e = varint(buf) + at; keyValue(buf, e, r.attributes); at = e; }
      else if (id === 2 && wt === 0) r.droppedAttributes = varint(buf);
      else skip(buf, wt);
    }
  }
  return r;
}

export function decodeScope(buf: Buffer, slices: { start: number; end: number }[]): PlainScope {
  const s: PlainScope = { name: '', version: '', attributes: {}, droppedAttributes: 0 };
  for (const sl of slices) {
    at = sl.start;
    while (at < sl.end) {
      const tag = varint(buf);
      const id = tag >>> 3;
      const wt = tag & 7;
      if (id === 1 && wt === 2) { const e = varint(buf) + at; s.name = str(buf, e); }
      else if (id === 2 && wt === 2) { const e = varint(buf) + at; s.version = str(buf, e); }
      else if (id === 3 && wt === 2) { const e = varint(buf) + at; keyValue(buf, e, s.attributes); at = e; }
      else if (id === 4 && wt === 0) s.droppedAttributes = varint(buf);
      else skip(buf, wt);
    }
  }
  return s;
}

/** A resource as a landed header carries it: its attributes, and the dropped count when not zero. */
export function resourceHeader(r: PlainResource | undefined): PlainObject {
  const out: PlainObject = { attributes: r?.attributes ?? {} };
  if (r?.droppedAttributes) out.dropped_attributes_count = r.droppedAttributes;
  return out;
}

/** A scope as a landed header carries it: name, version and attributes when present. */
export function scopeHeader(s: PlainScope | undefined): PlainObject {
  const out: PlainObject = { name: s?.name ?? '' };
  if (s?.version) out.version = s.version;
  if (s && Object.keys(s.attributes).length) out.attributes = s.attributes;
  if (s?.droppedAttributes) out.dropped_attributes_count = s.droppedAttributes;
  return out;
}

let isoSecond = -1n;
let isoPrefix = '';

/**
 * Nanoseconds since the epoch as RFC 3339 with up to nine fraction digits; undefined for 0 (OTLP's
 * "unknown") or a time past year 9999. The date part is remembered per second: a request's
 * records mostly share one.
 */
export function nanosToRfc3339(ns: bigint): string | undefined {
  if (ns <= 0n) return undefined;
  const sec = ns / 1_000_000_000n;
  if (sec !== isoSecond) {
    const ms = Number(sec) * 1000;
    if (ms > 253_402_300_799_000) return undefined;
    isoPrefix = new Date(ms).toISOString().slice(0, 19);
    isoSecond = sec;
  }
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${isoPrefix}${frac ? '.' + frac : ''}Z`;
}
