import { createHash } from 'node:crypto';
import type { Commit, EntityFrame, Ref, RoundHeader } from './types.js';

const HEADER_ORDER: (keyof RoundHeader)[] = [
  't',
  'schema',
  'conversation',
  'session',
  'round',
  'previous',
  'from_seq',
  'through_seq',
  'input_digest',
  'parser',
  'policy',
  'from_time',
  'through_time',
  'session_from_time',
  'session_through_time',
  'title',
  'talks',
  'steps',
  'streams',
  'segments',
  'unresolved',
  'changes',
  'lines_added',
  'lines_removed',
  'llm_calls',
  'subagents',
  'bash_runs',
];
const FRAME_ORDER = [
  't',
  'id',
  'revision',
  'tombstone',
  'kind',
  'type',
  'parent',
  'stream',
  'from',
  'to',
  'quality',
  'via',
  'ref',
  'refs',
  'evidence',
  'attrs',
  'reason',
  'state',
];

/**
 * Canonical JSON: object keys sorted, so equal values always give equal bytes (attrs included).
 * Built by appending to one string, with no array of parts per object (encoding the 1,158 rounds of a
 * 255 MB history took 137 ms against 149 ms). Its bytes are the first form's, quirks included
 * (test/unit/canonical-json).
 */
export function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) {
    let out = '[';
    for (let i = 0; i < v.length; i++) {
      if (i > 0) out += ',';
      const item = canonical(v[i]) as string | undefined; // an undefined element writes nothing, as join would
      if (item !== undefined) out += item;
    }
    return out + ']';
  }
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o).sort();
  let out = '{';
  for (const k of keys) {
    const x = o[k];
    if (x === undefined) continue;
    if (out.length > 1) out += ',';
    out += `${JSON.stringify(k)}:${canonical(x)}`;
  }
  return out + '}';
}

function refJson(r: Ref): string {
  return r.block === undefined ? `{"seq":${r.seq},"row":${r.row}}` : `{"seq":${r.seq},"row":${r.row},"block":${r.block}}`;
}

function ordered(o: Record<string, unknown>, order: readonly string[]): string {
  let out = '{';
  for (const k of order) {
    const v = o[k];
    if (v === undefined) continue;
    let json: string;
    if (k === 'ref' && typeof v === 'object') json = refJson(v as Ref);
    else if (k === 'refs' || k === 'evidence') json = `[${(v as Ref[]).map(refJson).join(',')}]`;
    else json = canonical(v);
    if (out.length > 1) out += ',';
    out += `${JSON.stringify(k)}:${json}`;
  }
  return out + '}';
}

export function encodeHeader(h: RoundHeader): string {
  return ordered(h as unknown as Record<string, unknown>, HEADER_ORDER);
}

export function encodeFrame(f: EntityFrame): string {
  return ordered(f as unknown as Record<string, unknown>, FRAME_ORDER);
}

const GROUP: Record<string, number> = { node: 0, relation: 1, unresolved: 2 };

/**
 * A round's bytes: header, then nodes, relations and unresolved entries, each group sorted by
 * id, then the commit whose digest covers every line before it. No wall-clock time anywhere, so
 * the same inputs give the same bytes.
 */
export function encodeRound(header: RoundHeader, frames: EntityFrame[]): { text: string; digest: string; commit: Commit } {
  const sorted = [...frames].sort((a, b) => GROUP[a.t]! - GROUP[b.t]! || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const lines = [encodeHeader(header), ...sorted.map(encodeFrame)];
  const body = lines.map((l) => l + '\n').join('');
  const digest = createHash('sha256').update(body, 'utf8').digest('hex');
  const counts = { nodes: 0, relations: 0, unresolved: 0 };
  for (const f of sorted) counts[f.t === 'node' ? 'nodes' : f.t === 'relation' ? 'relations' : 'unresolved']++;
  const commit: Commit = { t: 'commit', digest, counts };
  return { text: body + JSON.stringify(commit) + '\n', digest, commit };
}

/** `input_digest = hex(SHA-256(previous || 0x00 || d1 || 0x00 || d2 …))`, file digests sorted as strings. */
export function chainInputDigest(previous: string, fileDigests: string[]): string {
  const h = createHash('sha256').update(previous, 'utf8');
  for (const d of [...fileDigests].sort()) h.update(Buffer.from([0])).update(d, 'utf8');
  return h.digest('hex');
}
