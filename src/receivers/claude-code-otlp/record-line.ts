/**
 * A pushed record's Session Data line, made in two halves: everything but `ord` and `off` here,
 * once per record, and those two in front when the record's place in its stream is known (the
 * landing round). The data part's JSON, made once by the dialect, is spliced in rather than
 * serialized again.
 */
import { encodeRecord, shortSha } from '../../formats/session-data/encode.js';
import type { OtlpConverted } from '../../adapters/claude-code/otlp-dialect.js';

const RECORD_PREFIX = '{"ord":0,"off":0,';
/** Stands in for the data part while the record is serialized; JSON escapes the NULs, so it cannot occur in real data. */
const DATA_MARK = '\u0000aszcol-data\u0000';
const DATA_MARK_JSON = JSON.stringify(DATA_MARK);

/** A record's line after `{"ord":…,"off":…,`: `bytes` are the item's protobuf bytes (for provenance). */
export function recordTail(bytes: Buffer, converted: OtlpConverted): string {
  const { record, dataJson } = converted;
  const parts = record.parts.map((p, i) => (i === 0 && p.k === 'data' ? { ...p, data: DATA_MARK } : p));
  const line = encodeRecord({ ord: 0, off: 0, sha: shortSha(bytes), bytes: bytes.length, ...record, parts });
  if (!line.startsWith(RECORD_PREFIX)) throw new Error('session data: a record line does not start with ord and off');
  const at = line.indexOf(DATA_MARK_JSON);
  const tail = at < 0 ? line : line.slice(0, at) + dataJson + line.slice(at + DATA_MARK_JSON.length);
  return tail.slice(RECORD_PREFIX.length);
}
