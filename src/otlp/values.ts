/**
 * OTLP's attribute values as plain JSON values, the way a landed record carries them: a string
 * stays a string, an int64 becomes a number when it is exact in JSON (else its decimal string),
 * an array a JSON array, a key-value list an object, bytes `{ "base64": "…" }`, and an empty
 * value `null`. Repeated keys keep the first value (OTLP forbids them; the first one is kept
 * as the rest of aszcol keeps first copies).
 */

/** The decoded shapes protobufjs produces for the common OTLP messages (only what is read). */
export interface LongLike {
  low: number;
  high: number;
  unsigned?: boolean;
}

export interface AnyValueMsg {
  /** protobufjs's virtual oneof property: the name of the member that is set. */
  value?: string;
  stringValue?: string;
  boolValue?: boolean;
  intValue?: number | LongLike;
  doubleValue?: number;
  arrayValue?: { values?: AnyValueMsg[] };
  kvlistValue?: { values?: KeyValueMsg[] };
  bytesValue?: Uint8Array;
}

export interface KeyValueMsg {
  key: string;
  value?: AnyValueMsg | null;
}

export interface ResourceMsg {
  attributes?: KeyValueMsg[];
  droppedAttributesCount?: number;
}

export interface ScopeMsg {
  name?: string;
  version?: string;
  attributes?: KeyValueMsg[];
  droppedAttributesCount?: number;
}

export type Plain = null | boolean | number | string | Plain[] | { [k: string]: Plain };

/** A protobufjs 64-bit value as a BigInt, signed or not as the value says. */
export function toBigInt(v: number | LongLike | undefined | null, unsigned = false): bigint {
  if (v === undefined || v === null) return 0n;
  if (typeof v === 'number') return BigInt(Math.trunc(v));
  const lo = BigInt(v.low >>> 0);
  const hi = BigInt(v.high >>> 0);
  const u = (hi << 32n) | lo;
  return unsigned || v.unsigned ? u : BigInt.asIntN(64, u);
}

/** An int64 as a JSON number when exact, else as its decimal string. */
export function intPlain(v: number | LongLike | undefined): number | string {
  const b = toBigInt(v);
  return b >= BigInt(Number.MIN_SAFE_INTEGER) && b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b.toString();
}

export function anyValuePlain(v: AnyValueMsg | null | undefined, depth = 0): Plain {
  if (!v || depth > 64) return null;
  switch (v.value) {
    case 'stringValue':
      return v.stringValue ?? '';
    case 'boolValue':
      return v.boolValue ?? false;
    case 'intValue':
      return intPlain(v.intValue);
    case 'doubleValue': {
      const d = v.doubleValue ?? 0;
      return Number.isFinite(d) ? d : String(d);
    }
    case 'arrayValue':
      return (v.arrayValue?.values ?? []).map((x) => anyValuePlain(x, depth + 1));
    case 'kvlistValue':
      return attributesPlain(v.kvlistValue?.values, depth + 1);
    case 'bytesValue':
      return { base64: Buffer.from(v.bytesValue ?? new Uint8Array()).toString('base64') };
    default:
      return null;
  }
}

export function attributesPlain(kvs: KeyValueMsg[] | undefined, depth = 0): { [k: string]: Plain } {
  const out: { [k: string]: Plain } = {};
  for (const kv of kvs ?? []) {
    if (Object.prototype.hasOwnProperty.call(out, kv.key)) continue;
    out[kv.key] = anyValuePlain(kv.value, depth);
  }
  return out;
}

/** The attribute's value when it is a non-empty string, else undefined. */
export function stringAttribute(kvs: KeyValueMsg[] | undefined, key: string): string | undefined {
  for (const kv of kvs ?? []) {
    if (kv.key !== key) continue;
    const v = kv.value;
    return v && v.value === 'stringValue' && v.stringValue ? v.stringValue : undefined;
  }
  return undefined;
}

/** A resource as a header carries it: its attributes, and the dropped count when not zero. */
export function resourcePlain(r: ResourceMsg | undefined): { [k: string]: Plain } {
  const out: { [k: string]: Plain } = { attributes: attributesPlain(r?.attributes) };
  if (r?.droppedAttributesCount) out.dropped_attributes_count = r.droppedAttributesCount;
  return out;
}

/** A scope as a header carries it: name, version, attributes when present. */
export function scopePlain(s: ScopeMsg | undefined): { [k: string]: Plain } {
  const out: { [k: string]: Plain } = { name: s?.name ?? '' };
  if (s?.version) out.version = s.version;
  if (s?.attributes?.length) out.attributes = attributesPlain(s.attributes);
  if (s?.droppedAttributesCount) out.dropped_attributes_count = s.droppedAttributesCount;
  return out;
}

/** Nanoseconds since the epoch as RFC 3339 with up to nine fraction digits; undefined for 0. */
export function nanosToRfc3339(ns: bigint): string | undefined {
  if (ns <= 0n) return undefined;
  const ms = Number(ns / 1_000_000n);
  if (ms > 253_402_300_799_999) return undefined; // past year 9999: not an RFC 3339 time
  const d = new Date(ms);
  const iso = d.toISOString();
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${iso.slice(0, 19)}${frac ? '.' + frac : ''}Z`;
}
