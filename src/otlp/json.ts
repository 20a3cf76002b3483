/**
 * OTLP/JSON: the protobuf JSON mapping with OTLP's own departures from it, in both directions,
 * driven by the message types loaded from proto/.
 *
 * What OTLP/JSON says, and what this reader accepts:
 * - keys are the lowerCamelCase field names; the original snake_case names are accepted too, as
 *   every protobuf JSON parser does;
 * - trace and span ids (`traceId`, `spanId`, `parentSpanId`) are hex strings, not base64;
 *   every other `bytes` value is base64 (standard or URL-safe);
 * - enums are integers (names are accepted too); 64-bit integers are decimal strings or numbers;
 * - unknown keys are ignored, as the specification requires of a receiver;
 * - `null` means the field is absent.
 * Anything else is refused with the exact path of the value, such as
 * `resourceLogs[0].scopeLogs[0].logRecords[2].timeUnixNano: expected …`.
 */
import { isUtf8 } from 'node:buffer';
import protobuf from 'protobufjs';
import type { Type } from './proto.js';

export class OtlpJsonError extends Error {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super(`${path || '(request)'}: ${reason}`);
    this.name = 'OtlpJsonError';
  }
}

const HEX_ID_FIELDS = new Set(['traceId', 'spanId', 'parentSpanId']);
const LONG_TYPES = new Set(['int64', 'uint64', 'sint64', 'fixed64', 'sfixed64']);
const UNSIGNED = new Set(['uint64', 'fixed64', 'uint32', 'fixed32']);
const INT32_TYPES = new Set(['int32', 'uint32', 'sint32', 'fixed32', 'sfixed32']);

const Long = protobuf.util.Long as unknown as {
  fromString(s: string, unsigned?: boolean): { toString(): string; isNegative(): boolean };
  fromNumber(n: number, unsigned?: boolean): unknown;
  fromValue(v: unknown): { toString(): string };
};

const snake = (camel: string) => camel.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

interface JsonField {
  field: protobuf.Field;
  oneof?: string;
}

/** Each type's fields by JSON name (camelCase and snake_case), built once per type: derived from the immutable schema. */
const jsonFieldTableMemo = new WeakMap<Type, Map<string, JsonField>>();

function jsonTable(type: Type): Map<string, JsonField> {
  let t = jsonFieldTableMemo.get(type);
  if (t) return t;
  t = new Map();
  for (const f of type.fieldsArray) {
    f.resolve();
    const oneof = f.partOf && !f.partOf.name.startsWith('_') ? f.partOf.name : undefined; // `optional` makes a synthetic `_name` oneof
    const entry = { field: f, oneof };
    t.set(f.name, entry);
    t.set(snake(f.name), entry);
  }
  jsonFieldTableMemo.set(type, t);
  return t;
}

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
const describe = (v: unknown) =>
  v === null
    ? 'null'
    : Array.isArray(v)
      ? 'an array'
      : typeof v === 'string'
        ? `the string ${JSON.stringify(v.length > 40 ? v.slice(0, 40) + '…' : v)}`
        : `${typeof v} ${JSON.stringify(v)}`;

const DECIMAL = /^-?\d+$/;
const HEX = /^(?:[0-9a-fA-F]{2})*$/;
const BASE64 = /^[A-Za-z0-9+/\-_]*={0,2}$/;

function longFrom(v: unknown, type: string, path: string): unknown {
  const unsigned = UNSIGNED.has(type);
  if (typeof v === 'number') {
    if (!Number.isInteger(v)) throw new OtlpJsonError(path, `expected an integer, got ${describe(v)}`);
    if (unsigned && v < 0) throw new OtlpJsonError(path, `expected an unsigned integer, got ${v}`);
    if (Number.isSafeInteger(v)) return Long.fromNumber(v, unsigned);
    // A large number (the SDK's JSON writes 2^60 as a number): its exact double value, range-checked below.
    v = BigInt(v).toString();
  }
  if (typeof v === 'string' && DECIMAL.test(v)) {
    if (unsigned && v.startsWith('-')) throw new OtlpJsonError(path, `expected an unsigned integer, got ${JSON.stringify(v)}`);
    const l = Long.fromString(v, unsigned);
    // Long wraps silently; a value that does not print back the same way was out of range.
    if (l.toString() !== v.replace(/^(-?)0+(?=\d)/, '$1')) throw new OtlpJsonError(path, `${JSON.stringify(v)} is out of range for ${type}`);
    return l;
  }
  throw new OtlpJsonError(path, `expected a 64-bit integer (a decimal string or a number), got ${describe(v)}`);
}

function int32From(v: unknown, type: string, path: string): number {
  const n = typeof v === 'string' && DECIMAL.test(v) ? Number(v) : v;
  if (typeof n !== 'number' || !Number.isInteger(n)) throw new OtlpJsonError(path, `expected an integer, got ${describe(v)}`);
  const [lo, hi] = UNSIGNED.has(type) ? [0, 0xffffffff] : [-0x80000000, 0x7fffffff];
  if (n < lo || n > hi) throw new OtlpJsonError(path, `${n} is out of range for ${type}`);
  return n;
}

function doubleFrom(v: unknown, path: string): number {
  if (typeof v === 'number') return v;
  if (v === 'NaN') return NaN;
  if (v === 'Infinity') return Infinity;
  if (v === '-Infinity') return -Infinity;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  throw new OtlpJsonError(path, `expected a number, got ${describe(v)}`);
}

function scalarFrom(f: protobuf.Field, v: unknown, path: string): unknown {
  if (f.resolvedType instanceof protobuf.Enum) {
    if (typeof v === 'number' && Number.isInteger(v)) return v;
    if (typeof v === 'string' && f.resolvedType.values[v] !== undefined) return f.resolvedType.values[v];
    throw new OtlpJsonError(path, `expected an enum value of ${f.resolvedType.name} (an integer), got ${describe(v)}`);
  }
  const t = f.type;
  if (t === 'string') {
    if (typeof v !== 'string') throw new OtlpJsonError(path, `expected a string, got ${describe(v)}`);
    return v;
  }
  if (t === 'bool') {
    if (typeof v !== 'boolean') throw new OtlpJsonError(path, `expected true or false, got ${describe(v)}`);
    return v;
  }
  if (t === 'bytes') {
    if (typeof v !== 'string') throw new OtlpJsonError(path, `expected a string, got ${describe(v)}`);
    if (HEX_ID_FIELDS.has(f.name)) {
      if (!HEX.test(v)) throw new OtlpJsonError(path, `expected a hex-encoded id, got ${describe(v)}`);
      return Buffer.from(v, 'hex');
    }
    if (!BASE64.test(v)) throw new OtlpJsonError(path, `expected base64 bytes, got ${describe(v)}`);
    return Buffer.from(v, v.includes('-') || v.includes('_') ? 'base64url' : 'base64');
  }
  if (LONG_TYPES.has(t)) return longFrom(v, t, path);
  if (INT32_TYPES.has(t)) return int32From(v, t, path);
  if (t === 'double' || t === 'float') return doubleFrom(v, path);
  throw new OtlpJsonError(path, `field type ${t} is not supported`);
}

function valueFrom(f: protobuf.Field, v: unknown, path: string, depth: number): unknown {
  if (f.resolvedType instanceof protobuf.Type) return messageFrom(f.resolvedType, v, path, depth + 1);
  return scalarFrom(f, v, path);
}

function messageFrom(type: Type, value: unknown, path: string, depth: number): Record<string, unknown> {
  if (depth > 64) throw new OtlpJsonError(path, 'nested deeper than 64 messages');
  if (!isObj(value)) throw new OtlpJsonError(path, `expected an object (${type.name}), got ${describe(value)}`);
  const table = jsonTable(type);
  const out: Record<string, unknown> = {};
  const oneofSet = new Map<string, string>();
  for (const key of Object.keys(value)) {
    const entry = table.get(key);
    const v = value[key];
    if (!entry || v === null) continue; // unknown keys are ignored; null is absent
    const { field: f, oneof } = entry;
    const here = path ? `${path}.${key}` : key;
    if (out[f.name] !== undefined) throw new OtlpJsonError(here, `field given twice (as ${f.name} and ${snake(f.name)})`);
    if (oneof) {
      const other = oneofSet.get(oneof);
      if (other) throw new OtlpJsonError(here, `only one of ${oneof} may be set, and ${other} is set too`);
      oneofSet.set(oneof, key);
    }
    if (f.repeated) {
      if (!Array.isArray(v)) throw new OtlpJsonError(here, `expected an array, got ${describe(v)}`);
      out[f.name] = v.map((item, i) => valueFrom(f, item, `${here}[${i}]`, depth));
    } else {
      out[f.name] = valueFrom(f, v, here, depth);
    }
  }
  return out;
}

/**
 * An OTLP/JSON value (already parsed) → the protobuf bytes of `type`. Throws OtlpJsonError
 * naming the exact path of the first value that does not fit.
 */
export function otlpJsonToProtobuf(type: Type, json: unknown): Uint8Array {
  const obj = messageFrom(type, json, '', 0);
  return type.encode(obj).finish();
}

/**
 * The text of a JSON body, which must be UTF-8 (RFC 8259): a body with bytes that are not is
 * refused naming where they are, as a protobuf string with such bytes is, never decoded into
 * U+FFFD (which would silently change a session id). The check is native and one pass.
 */
export function jsonBodyText(body: Buffer): string {
  if (!isUtf8(body)) {
    const at = firstInvalidUtf8(body);
    const before = body.subarray(0, at);
    const nl = before.lastIndexOf(0x0a);
    const line = before.reduce((n, b) => (b === 0x0a ? n + 1 : n), 1);
    const context = before
      .subarray(Math.max(0, at - 40))
      .toString('utf8')
      .replace(/^\uFFFD+/, '');
    const bad = body
      .subarray(at, at + 4)
      .toString('hex')
      .replace(/(..)/g, '\\x$1');
    throw new OtlpJsonError('', `not valid UTF-8: byte ${at} (line ${line}, column ${at - nl} in bytes) starts "${bad}", after ${JSON.stringify(context)}`);
  }
  return body.toString('utf8');
}

/** The offset of the first byte that does not start or continue a well-formed UTF-8 sequence (Unicode 15, table 3-7). */
function firstInvalidUtf8(b: Uint8Array): number {
  let i = 0;
  while (i < b.length) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let more: number;
    let lo = 0x80,
      hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) more = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      more = 2;
      if (c === 0xe0) lo = 0xa0;
      else if (c === 0xed) hi = 0x9f; // no surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      more = 3;
      if (c === 0xf0) lo = 0x90;
      else if (c === 0xf4) hi = 0x8f; // nothing past U+10FFFF
    } else return i;
    const second = b[i + 1];
    if (second === undefined || second < lo || second > hi) return i;
    for (let k = 2; k <= more; k++) {
      const x = b[i + k];
      if (x === undefined || x < 0x80 || x > 0xbf) return i;
    }
    i += more + 1;
  }
  return b.length;
}

/** Parses OTLP/JSON text into a plain object checked against `type` (not yet encoded). */
export function parseOtlpJson(type: Type, text: string): Record<string, unknown> {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new OtlpJsonError('', `not JSON: ${(err as Error).message}`);
  }
  return messageFrom(type, json, '', 0);
}

/* ---------------------------------------------------------------------------------------- */

function scalarTo(f: protobuf.Field, v: unknown): unknown {
  if (f.resolvedType instanceof protobuf.Enum) return v;
  const t = f.type;
  if (t === 'bytes') {
    const b = Buffer.from(v as Uint8Array);
    return HEX_ID_FIELDS.has(f.name) ? b.toString('hex') : b.toString('base64');
  }
  if (LONG_TYPES.has(t)) return typeof v === 'number' ? String(v) : Long.fromValue(v).toString();
  if (t === 'double' || t === 'float') {
    const n = v as number;
    return Number.isNaN(n) ? 'NaN' : n === Infinity ? 'Infinity' : n === -Infinity ? '-Infinity' : n;
  }
  return v;
}

function isDefault(f: protobuf.Field, v: unknown, msg: Record<string, unknown>): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  // A oneof member (or `optional`) is present when set, even when zero; a decoded message keeps
  // only present fields as its own properties (defaults come from its prototype).
  if (f.partOf) return !Object.prototype.hasOwnProperty.call(msg, f.name);
  if (f.resolvedType instanceof protobuf.Type) return false;
  if (v === 0 || v === '' || v === false) return true;
  if (v instanceof Uint8Array) return v.length === 0;
  if (typeof v === 'object' && 'low' in v && 'high' in v) return (v as { low: number; high: number }).low === 0 && (v as { high: number }).high === 0;
  return false;
}

function messageTo(type: Type, msg: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of type.fieldsArray) {
    f.resolve();
    const v = msg[f.name];
    if (isDefault(f, v, msg)) continue;
    const one = (x: unknown) => (f.resolvedType instanceof protobuf.Type ? messageTo(f.resolvedType, x as Record<string, unknown>) : scalarTo(f, x));
    out[f.name] = f.repeated ? (v as unknown[]).map(one) : one(v);
  }
  return out;
}

/** A decoded message (protobufjs object) → its OTLP/JSON value, ready for JSON.stringify. */
export function toOtlpJson(type: Type, msg: object): Record<string, unknown> {
  return messageTo(type, msg as Record<string, unknown>);
}

/** Protobuf bytes of `type` → OTLP/JSON text. */
export function protobufToOtlpJson(type: Type, bytes: Uint8Array): string {
  return JSON.stringify(toOtlpJson(type, type.decode(bytes)));
}
