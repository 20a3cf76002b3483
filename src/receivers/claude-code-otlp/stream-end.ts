/**
 * Where a session's stream of pushed records of one kind ends: the last landed file's last
 * record is the authority (a file lands before its cursor is written); the cursor counts only if
 * it is further, which it never should be.
 */
import { join } from 'node:path';
import { readSessionData } from '../../formats/session-data/decode.js';
import { loadCursor } from '../../storage/cursor.js';
import { listDir, parseLandedName } from '../../storage/layout.js';

export type OtlpKind = 'otlp_log' | 'otlp_span';

export interface StreamState {
  /** The last `ord` landed. */
  ord: number;
  /** Where the next record starts in the virtual stream (each record's bytes plus one separator). */
  next: number;
}

export function streamEnd(dir: string, kind: OtlpKind): StreamState | undefined {
  let best: StreamState | undefined;
  const cursor = loadCursor(join(dir, `${kind}.cursor`));
  if (cursor?.kind === 'append') best = { ord: cursor.ord, next: cursor.offset };
  let last: { seq: number; name: string } | undefined;
  for (const name of listDir(dir)) {
    const p = parseLandedName(name);
    if (p && p.prefix === kind && (!last || p.seq > last.seq)) last = { seq: p.seq, name };
  }
  if (last) {
    const { records } = readSessionData(join(dir, last.name));
    const r = records[records.length - 1];
    if (r && (!best || r.ord >= best.ord)) best = { ord: r.ord, next: r.off + r.bytes + 1 };
  }
  return best;
}
