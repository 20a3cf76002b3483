/** Landed headers of a plain resource and scope, and OTLP times as RFC 3339. */
import type { PlainObject, PlainResource, PlainScope } from './plain-types.js';

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

/** The RFC 3339 date and time of one second, remembered: a request's records mostly share one. */
class SecondPrefixMemo {
  private second = -1n;
  private prefix = '';

  /** `YYYY-MM-DDTHH:MM:SS` of `sec` seconds since the epoch; undefined past year 9999. */
  prefixOf(sec: bigint): string | undefined {
    if (sec !== this.second) {
      const ms = Number(sec) * 1000;
      if (ms > 253_402_300_799_000) return undefined;
      this.prefix = new Date(ms).toISOString().slice(0, 19);
      this.second = sec;
    }
    return this.prefix;
  }
}

/** One per thread: the memo is of immutable strings, so sharing it cannot change an answer. */
const isoSecondMemo = new SecondPrefixMemo();

/**
 * Nanoseconds since the epoch as RFC 3339 with up to nine fraction digits; undefined for 0 (OTLP's
 * "unknown") or a time past year 9999.
 */
export function nanosToRfc3339(ns: bigint): string | undefined {
  if (ns <= 0n) return undefined;
  const prefix = isoSecondMemo.prefixOf(ns / 1_000_000_000n);
  if (prefix === undefined) return undefined;
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${prefix}${frac ? '.' + frac : ''}Z`;
}
