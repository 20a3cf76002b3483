/**
 * One string attribute of every item of a logs or traces export request — on the item, else on
 * its resource — read straight from bytes `checkedRequest` accepted, without decoding anything
 * else. The receiver needs only this (which session each log record belongs to) to answer a
 * request; the full decoding waits for the landing thread.
 *
 * The value follows the decoder in plain.ts: the first occurrence of the key wins, within a
 * value the last field set wins (a oneof), and only a non-empty `string_value` counts (any
 * other value is as good as absent).
 */
import type { Signal } from './proto.js';

/** Field numbers: export request → Resource{Logs,Spans} → Scope{Logs,Spans} → item, and KeyValue/AnyValue. */
const TOP = 1,
  RESOURCE = 1,
  SCOPES = 2,
  ITEMS = 2,
  RESOURCE_ATTRS = 1,
  KV_KEY = 1,
  KV_VALUE = 2,
  ANY_STRING = 1;
const ITEM_ATTRS: Partial<Record<Signal, number>> = { logs: 6, traces: 9 };

/** Calls `each(field, start, end)` for every field in [start, end): the payload's range for a length-delimited one, -1, -1 for others. */
function lenFields(buf: Uint8Array, start: number, end: number, each: (field: number, s: number, e: number) => void): void {
  let at = start;
  const varint = (): number => {
    let v = 0;
    let mul = 1;
    for (;;) {
      const b = buf[at++]!;
      v += (b & 0x7f) * mul;
      if (b < 0x80) return v;
      mul *= 128;
    }
  };
  while (at < end) {
    const tag = varint();
    const wt = tag & 7;
    if (wt !== 2) {
      if (wt === 0) varint();
      else at += wt === 1 ? 8 : 4;
      each(Math.floor(tag / 8), -1, -1);
    } else {
      const len = varint();
      each(Math.floor(tag / 8), at, at + len);
      at += len;
    }
  }
}

const ABSENT = Symbol('absent');

/**
 * The attribute's value in a list of KeyValue fields numbered `attrField` in [start, end):
 * its non-empty string, undefined for any other value, ABSENT when the key does not occur.
 */
function attributeIn(buf: Buffer, start: number, end: number, attrField: number, key: Buffer): string | undefined | typeof ABSENT {
  let found: string | undefined | typeof ABSENT = ABSENT;
  lenFields(buf, start, end, (f, s, e) => {
    if (f !== attrField || s < 0 || found !== ABSENT) return;
    let isKey = false;
    let keySeen = false;
    let value: string | undefined;
    lenFields(buf, s, e, (kf, ks, ke) => {
      if (ks < 0) return;
      if (kf === KV_KEY) {
        keySeen = true;
        isKey = ke - ks === key.length && buf.compare(key, 0, key.length, ks, ke) === 0;
      } else if (kf === KV_VALUE) {
        value = undefined;
        lenFields(buf, ks, ke, (vf, vs, ve) => {
          // AnyValue's fields 1–7 are a oneof; a field this reader does not know changes nothing.
          if (vf >= 1 && vf <= 7) value = vf === ANY_STRING && vs >= 0 ? buf.toString('utf8', vs, ve) : undefined;
        });
      }
    });
    if (keySeen && isKey) found = value === '' ? undefined : value;
  });
  return found;
}

/**
 * For each item (log record or span) in wire order, the attribute `key`'s string value on the
 * item, else on its resource, else undefined.
 */
export function itemStringAttribute(signal: 'logs' | 'traces', buf: Buffer, key: string): (string | undefined)[] {
  const k = Buffer.from(key, 'utf8');
  const itemAttrs = ITEM_ATTRS[signal]!;
  const out: (string | undefined)[] = [];
  lenFields(buf, 0, buf.length, (tf, ts, te) => {
    if (tf !== TOP || ts < 0) return;
    let resourceValue: string | undefined | typeof ABSENT = ABSENT;
    const items: (string | undefined)[] = [];
    lenFields(buf, ts, te, (f, s, e) => {
      if (s < 0) return;
      if (f === RESOURCE) {
        // A message field that occurs twice is merged: its attributes concatenate, the first key wins.
        if (resourceValue === ABSENT) resourceValue = attributeIn(buf, s, e, RESOURCE_ATTRS, k);
      } else if (f === SCOPES) {
        lenFields(buf, s, e, (sf, ss, se) => {
          if (sf !== ITEMS || ss < 0) return;
          const v = attributeIn(buf, ss, se, itemAttrs, k);
          items.push(v === ABSENT ? undefined : v);
        });
      }
    });
    const fallback = resourceValue === ABSENT ? undefined : resourceValue;
    for (const v of items) out.push(v ?? fallback);
  });
  return out;
}
