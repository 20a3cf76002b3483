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

const RECORD_KEYS = new Set(['from', 'time', 'tool', 'parts']);
const PART_KEYS = 'k,state,bytes,name,data';

/**
 * The line of a record of the shape the OTLP dialect makes (`from`, `time`, `tool`, one data
 * part), written directly: the landing thread makes one per log record, and serializing the
 * record object through the general encoder cost it a quarter of its time. Undefined for any
 * other shape; `recordTailGeneral` writes the same bytes (a test holds the two together).
 */
export function recordTailFast(sha: string, size: number, converted: OtlpConverted): string | undefined {
  const r = converted.record as Record<string, unknown>;
  for (const key in r) if (!RECORD_KEYS.has(key)) return undefined;
  const parts = converted.record.parts;
  if (parts.length !== 1) return undefined;
  const p = parts[0] as unknown as Record<string, unknown>;
  if (Object.keys(p).join(',') !== PART_KEYS || p.k !== 'data' || typeof p.state !== 'string') return undefined;
  const str = (key: string, v: unknown) =>
    typeof v === 'string' && v !== '' ? `"${key}":${JSON.stringify(v)},` : v === undefined || v === '' ? '' : undefined;
  const tool = str('tool', r.tool),
    from = str('from', r.from),
    time = str('time', r.time);
  if (tool === undefined || from === undefined || time === undefined || typeof p.bytes !== 'number') return undefined;
  const name = p.name === undefined ? '' : `"name":${JSON.stringify(p.name)},`;
  return `"sha":"${sha}","bytes":${size},${tool}${from}${time}"parts":[{"k":"data","state":${JSON.stringify(p.state)},"bytes":${p.bytes},${name}"data":${converted.dataJson}}]}`;
}

/** A record's line after `{"ord":…,"off":…,`: `bytes` are the item's protobuf bytes (for provenance). */
export function recordTail(bytes: Buffer, converted: OtlpConverted): string {
  return recordTailFast(shortSha(bytes), bytes.length, converted) ?? recordTailGeneral(bytes, converted);
}

/** The same line through the general Session Data encoder, for any record. */
export function recordTailGeneral(bytes: Buffer, converted: OtlpConverted): string {
  const { record, dataJson } = converted;
  const parts = record.parts.map((p, i) => (i === 0 && p.k === 'data' ? { ...p, data: DATA_MARK } : p));
  const line = encodeRecord({ ord: 0, off: 0, sha: shortSha(bytes), bytes: bytes.length, ...record, parts });
  if (!line.startsWith(RECORD_PREFIX)) throw new Error('session data: a record line does not start with ord and off');
  const at = line.indexOf(DATA_MARK_JSON);
  const tail = at < 0 ? line : line.slice(0, at) + dataJson + line.slice(at + DATA_MARK_JSON.length);
  return tail.slice(RECORD_PREFIX.length);
}
