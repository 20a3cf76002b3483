/**
 * A part's `data` serialized once. A dialect measures a call's input or an attachment by its JSON
 * length, and the writer then serialized the same value again: for the large ones (a file an edit
 * wrote) that second `JSON.stringify` was a good share of landing. The measured JSON rides on the
 * part under a symbol that is not enumerable (so `JSON.stringify`, equality and spread copies never
 * see it), and the writer splices it in. The value must not change after it is measured.
 */
import type { Part, SdRecord } from './types.js';
import { RECORD_KEY_ORDER } from './types.js';

const DATA_JSON: unique symbol = Symbol('sd data json');

type Measured = Part & { [DATA_JSON]?: string };

/** Keeps the JSON of `part.data` (exactly `JSON.stringify(part.data)`, made to measure it) for the writer. Returns the part. */
export function keepDataJson<P extends Part>(part: P, json: string): P {
  Object.defineProperty(part, DATA_JSON, { value: json, enumerable: false, configurable: true });
  return part;
}

function encodePart(p: Measured): string {
  const json = p[DATA_JSON];
  if (json === undefined || p.data === undefined) return JSON.stringify(p);
  // The keys in the part's own order, as JSON.stringify gives them; `data` from the measured JSON.
  let s = '';
  for (const key of Object.keys(p)) {
    const v = (p as unknown as Record<string, unknown>)[key];
    if (v === undefined) continue;
    s += `${s ? ',' : '{'}${JSON.stringify(key)}:${key === 'data' ? json : JSON.stringify(v)}`;
  }
  return s ? `${s}}` : '{}';
}

const hasMeasured = (parts: Part[]) => parts.some((p) => (p as Measured)[DATA_JSON] !== undefined);

/**
 * A record's JSON text in the on-disk key order (empty values left out, as `ordered` in encode.ts
 * does), the same bytes `JSON.stringify` gives; undefined when no part carries measured JSON, for
 * the caller's plain path.
 */
export function encodeWithMeasured(r: SdRecord): string | undefined {
  if (!Array.isArray(r.parts) || !hasMeasured(r.parts)) return undefined;
  let s = '';
  for (const key of RECORD_KEY_ORDER) {
    const v = r[key];
    if (v === undefined || v === '' || (Array.isArray(v) && v.length === 0 && key !== 'parts')) continue;
    const text = key === 'parts' ? `[${(v as Measured[]).map(encodePart).join(',')}]` : JSON.stringify(v);
    s += `${s ? ',' : '{'}"${key}":${text}`;
  }
  return s ? `${s}}` : '{}';
}
