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
import type { PlainLogRecord, PlainObject, PlainSpan, PlainSpanEvent, PlainSpanLink, PlainResource, PlainScope, Plain } from './plain-types.js';

export type * from './plain-types.js';
export { nanosToRfc3339, resourceHeader, scopeHeader } from './plain-headers.js';

/**
 * Buffer's own UTF-8 slicer, which `toString('utf8', …)` calls after checking its arguments and
 * looking up the encoding (a tenth of the cost of a short string); toString where it is missing.
 */
type Utf8Slicer = { utf8Slice(start: number, end: number): string };
const utf8Slice: (buf: Buffer, start: number, end: number) => string =
  typeof (Buffer.prototype as unknown as Partial<Utf8Slicer>).utf8Slice === 'function'
    ? (buf, start, end) => (buf as unknown as Utf8Slicer).utf8Slice(start, end)
    : (buf, start, end) => buf.toString('utf8', start, end);

const RECENT_STRINGS = 512;
const RECENT_MAX_LENGTH = 64;
/**
 * Short ASCII strings decoded lately, by a hash of their length and three of their bytes: attribute
 * keys, session and prompt ids, event and model names repeat from record to record, and decoding
 * each copy again (plus the garbage of the copies) was a third of the landing thread's time.
 * A hit is confirmed byte by byte, so a collision only costs a decode. One memo per thread,
 * shared by every reader (a key seen in one request is a hit in the next); it holds immutable
 * strings, so sharing it cannot change an answer.
 */
const recentAsciiStringsMemo: (string | undefined)[] = new Array<string | undefined>(RECENT_STRINGS).fill(undefined);

/**
 * One decode over one buffer: the read position lives here, not in the module, so two decodes
 * alive at once (or one nested in another) cannot move each other's. A class with its fields set
 * in the constructor keeps V8's property access monomorphic on this hot path.
 */
export class PlainReader {
  readonly buf: Buffer;
  at: number;
  /** recentAsciiStringsMemo, as a field: the lookup inlined in `str` measured faster than a call out. */
  private readonly recent: (string | undefined)[];

  constructor(buf: Buffer, at = 0) {
    this.buf = buf;
    this.at = at;
    this.recent = recentAsciiStringsMemo;
  }

  varint(): number {
    const buf = this.buf;
    let at = this.at;
    let value = 0;
    let mul = 1;
    for (;;) {
      const b = buf[at++]!;
      value += (b & 0x7f) * mul;
      if (b < 0x80) {
        this.at = at;
        return value;
      }
      mul *= 128;
    }
  }

  /** An int64 varint: a number when exact, else the decimal string (negative values take ten bytes). */
  int64(): number | string {
    const buf = this.buf;
    const start = this.at;
    let n = 0;
    while (buf[start + n]! >= 0x80) n++;
    if (n < 7) return this.varint(); // at most 49 bits: exact as a number, never negative
    let v = 0n;
    for (let i = n; i >= 0; i--) v = (v << 7n) | BigInt(buf[start + i]! & 0x7f);
    this.at = start + n + 1;
    const s = BigInt.asIntN(64, v);
    return s >= BigInt(Number.MIN_SAFE_INTEGER) && s <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(s) : s.toString();
  }

  skip(wt: number): void {
    if (wt === 0) this.varint();
    else if (wt === 1) this.at += 8;
    else if (wt === 5) this.at += 4;
    else if (wt === 2) this.at += this.varint();
  }

  /** The end of the length-delimited payload that starts here (its length read). */
  payloadEnd(): number {
    const len = this.varint();
    return len + this.at;
  }

  /** A string field's payload, up to `end`; short ASCII ones from the memo when an equal one is there. */
  str(end: number): string {
    const start = this.at;
    this.at = end;
    const len = end - start;
    if (len === 0) return '';
    const buf = this.buf;
    if (len > RECENT_MAX_LENGTH) return utf8Slice(buf, start, end);
    const recent = this.recent;
    const h = (len * 31 + buf[start]! * 7 + buf[end - 1]! * 13 + buf[start + (len >> 1)]! * 3) & (RECENT_STRINGS - 1);
    const hit = recent[h];
    if (hit !== undefined && hit.length === len) {
      let i = 0;
      while (i < len && hit.charCodeAt(i) === buf[start + i]) i++;
      if (i === len) return hit;
    }
    const s = utf8Slice(buf, start, end);
    // As many characters as bytes: valid UTF-8 (validateMessage checked it) that is all ASCII, so
    // comparing char codes with bytes is exact for it.
    if (s.length === len) recent[h] = s;
    return s;
  }

  u64(): bigint {
    const v = this.buf.readBigUInt64LE(this.at);
    this.at += 8;
    return v;
  }

  f64(): number {
    const v = this.buf.readDoubleLE(this.at);
    this.at += 8;
    return v;
  }

  u32(): number {
    const v = this.buf.readUInt32LE(this.at);
    this.at += 4;
    return v;
  }

  hex(end: number): string {
    const s = this.buf.toString('hex', this.at, end);
    this.at = end;
    return s;
  }

  /** AnyValue up to `end`. */
  anyValue(end: number): Plain {
    let out: Plain = null;
    while (this.at < end) {
      const tag = this.varint();
      const id = tag >>> 3;
      const wt = tag & 7;
      switch (id) {
        case 1:
          out = this.str(this.payloadEnd());
          break;
        case 2:
          out = this.varint() !== 0;
          break;
        case 3:
          out = this.int64();
          break;
        case 4: {
          const d = this.f64();
          out = Number.isFinite(d) ? d : String(d);
          break;
        }
        case 5:
          out = this.arrayValue(this.payloadEnd());
          break;
        case 6:
          out = this.keyValues(this.payloadEnd(), 1, {});
          break;
        case 7: {
          const e = this.payloadEnd();
          out = { base64: this.buf.toString('base64', this.at, e) };
          this.at = e;
          break;
        }
        default:
          this.skip(wt);
      }
    }
    return out;
  }

  arrayValue(end: number): Plain[] {
    const out: Plain[] = [];
    while (this.at < end) {
      const tag = this.varint();
      if (tag >>> 3 === 1 && (tag & 7) === 2) {
        const e = this.payloadEnd();
        out.push(this.anyValue(e));
        this.at = e;
      } else this.skip(tag & 7);
    }
    return out;
  }

  /** One KeyValue up to `end`, added to `into` unless its key is already there. */
  keyValue(end: number, into: PlainObject): void {
    let key = '';
    let value: Plain = null;
    while (this.at < end) {
      const tag = this.varint();
      const id = tag >>> 3;
      if (id === 1 && (tag & 7) === 2) {
        key = this.str(this.payloadEnd());
      } else if (id === 2 && (tag & 7) === 2) {
        const e = this.payloadEnd();
        value = this.anyValue(e);
        this.at = e;
      } else this.skip(tag & 7);
    }
    // Object.hasOwn, so `constructor` or `toString` are keys like any other; `__proto__` is defined,
    // not assigned (assigning it would set the prototype, and the attribute would vanish from the JSON).
    if (Object.hasOwn(into, key)) return;
    if (key === '__proto__') Object.defineProperty(into, key, { value, enumerable: true, writable: true, configurable: true });
    else into[key] = value;
  }

  /** The repeated KeyValue field `field` of the message up to `end` (KeyValueList is field 1). */
  keyValues(end: number, field: number, into: PlainObject): PlainObject {
    while (this.at < end) {
      const tag = this.varint();
      if (tag >>> 3 === field && (tag & 7) === 2) {
        const e = this.payloadEnd();
        this.keyValue(e, into);
        this.at = e;
      } else this.skip(tag & 7);
    }
    return into;
  }

  /** A LogRecord at [start, end). */
  logRecord(start: number, end: number): PlainLogRecord {
    const r: PlainLogRecord = {
      timeNs: 0n,
      observedNs: 0n,
      severityNumber: 0,
      severityText: '',
      body: undefined,
      attributes: {},
      droppedAttributes: 0,
      flags: 0,
      traceId: '',
      spanId: '',
      eventName: '',
    };
    this.at = start;
    while (this.at < end) {
      const tag = this.varint();
      const id = tag >>> 3;
      const wt = tag & 7;
      if (wt === 2) {
        const e = this.payloadEnd();
        switch (id) {
          case 3:
            r.severityText = this.str(e);
            break;
          case 5:
            r.body = this.anyValue(e);
            break;
          case 6:
            this.keyValue(e, r.attributes);
            break;
          case 9:
            r.traceId = this.hex(e);
            break;
          case 10:
            r.spanId = this.hex(e);
            break;
          case 12:
            r.eventName = this.str(e);
            break;
        }
        this.at = e;
      } else if (id === 1 && wt === 1) r.timeNs = this.u64();
      else if (id === 11 && wt === 1) r.observedNs = this.u64();
      else if (id === 2 && wt === 0) r.severityNumber = this.varint();
      else if (id === 7 && wt === 0) r.droppedAttributes = this.varint();
      else if (id === 8 && wt === 5) r.flags = this.u32();
      else this.skip(wt);
    }
    return r;
  }

  spanEvent(end: number): PlainSpanEvent {
    const ev: PlainSpanEvent = { timeNs: 0n, name: '', attributes: {} };
    while (this.at < end) {
      const tag = this.varint();
      const id = tag >>> 3;
      const wt = tag & 7;
      if (id === 1 && wt === 1) ev.timeNs = this.u64();
      else if (id === 2 && wt === 2) ev.name = this.str(this.payloadEnd());
      else if (id === 3 && wt === 2) {
        const e = this.payloadEnd();
        this.keyValue(e, ev.attributes);
        this.at = e;
      } else this.skip(wt);
    }
    return ev;
  }

  spanLink(end: number): PlainSpanLink {
    const l: PlainSpanLink = { traceId: '', spanId: '', attributes: {} };
    while (this.at < end) {
      const tag = this.varint();
      const id = tag >>> 3;
      const wt = tag & 7;
      if (wt === 2 && (id === 1 || id === 2 || id === 4)) {
        const e = this.payloadEnd();
        if (id === 1) l.traceId = this.hex(e);
        else if (id === 2) l.spanId = this.hex(e);
        else this.keyValue(e, l.attributes);
        this.at = e;
      } else this.skip(wt);
    }
    return l;
  }

  spanStatus(end: number): { code: number; message: string } {
    const s = { code: 0, message: '' };
    while (this.at < end) {
      const tag = this.varint();
      const id = tag >>> 3;
      const wt = tag & 7;
      if (id === 2 && wt === 2) s.message = this.str(this.payloadEnd());
      else if (id === 3 && wt === 0) s.code = this.varint();
      else this.skip(wt);
    }
    return s;
  }

  /** A Span at [start, end). */
  span(start: number, end: number): PlainSpan {
    const s: PlainSpan = {
      traceId: '',
      spanId: '',
      traceState: '',
      parentSpanId: '',
      flags: 0,
      name: '',
      kind: 0,
      startNs: 0n,
      endNs: 0n,
      attributes: {},
      droppedAttributes: 0,
      events: [],
      links: [],
      status: undefined,
    };
    this.at = start;
    while (this.at < end) {
      const tag = this.varint();
      const id = tag >>> 3;
      const wt = tag & 7;
      if (wt === 2) {
        const e = this.payloadEnd();
        switch (id) {
          case 1:
            s.traceId = this.hex(e);
            break;
          case 2:
            s.spanId = this.hex(e);
            break;
          case 3:
            s.traceState = this.str(e);
            break;
          case 4:
            s.parentSpanId = this.hex(e);
            break;
          case 5:
            s.name = this.str(e);
            break;
          case 9:
            this.keyValue(e, s.attributes);
            break;
          case 11:
            s.events.push(this.spanEvent(e));
            break;
          case 13:
            s.links.push(this.spanLink(e));
            break;
          case 15:
            s.status = this.spanStatus(e);
            break;
        }
        this.at = e;
      } else if (id === 7 && wt === 1) s.startNs = this.u64();
      else if (id === 8 && wt === 1) s.endNs = this.u64();
      else if (id === 6 && wt === 0) s.kind = this.varint();
      else if (id === 10 && wt === 0) s.droppedAttributes = this.varint();
      else if (id === 16 && wt === 5) s.flags = this.u32();
      else this.skip(wt);
    }
    return s;
  }

  /**
   * A Resource given as the payloads of every occurrence of the field: protobuf merges repeated
   * occurrences of a singular message, which for these means attributes add up, scalars last wins.
   */
  resource(slices: { start: number; end: number }[]): PlainResource {
    const r: PlainResource = { attributes: {}, droppedAttributes: 0 };
    for (const sl of slices) {
      this.at = sl.start;
      while (this.at < sl.end) {
        const tag = this.varint();
        const id = tag >>> 3;
        const wt = tag & 7;
        if (id === 1 && wt === 2) {
          const e = this.payloadEnd();
          this.keyValue(e, r.attributes);
          this.at = e;
        } else if (id === 2 && wt === 0) r.droppedAttributes = this.varint();
        else this.skip(wt);
      }
    }
    return r;
  }

  /** An InstrumentationScope given as the payloads of every occurrence of the field (merged as for a Resource). */
  scope(slices: { start: number; end: number }[]): PlainScope {
    const s: PlainScope = { name: '', version: '', attributes: {}, droppedAttributes: 0 };
    for (const sl of slices) {
      this.at = sl.start;
      while (this.at < sl.end) {
        const tag = this.varint();
        const id = tag >>> 3;
        const wt = tag & 7;
        if (id === 1 && wt === 2) s.name = this.str(this.payloadEnd());
        else if (id === 2 && wt === 2) s.version = this.str(this.payloadEnd());
        else if (id === 3 && wt === 2) {
          const e = this.payloadEnd();
          this.keyValue(e, s.attributes);
          this.at = e;
        } else if (id === 4 && wt === 0) s.droppedAttributes = this.varint();
        else this.skip(wt);
      }
    }
    return s;
  }
}

/** A LogRecord at buf[start, end), on a reader of its own (a request's items share one: requests.ts). */
export function decodeLogRecord(buf: Buffer, start: number, end: number): PlainLogRecord {
  return new PlainReader(buf, start).logRecord(start, end);
}

/** A Span at buf[start, end). */
export function decodeSpan(buf: Buffer, start: number, end: number): PlainSpan {
  return new PlainReader(buf, start).span(start, end);
}
