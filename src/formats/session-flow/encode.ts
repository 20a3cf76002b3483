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

/** Canonical JSON: object keys sorted, so equal values always give equal bytes (attrs included). */
export function canonical(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
    .join(',')}}`;
}

function refJson(r: Ref): string {
  return r.block === undefined ? `{"seq":${r.seq},"row":${r.row}}` : `{"seq":${r.seq},"row":${r.row},"block":${r.block}}`;
}

function ordered(o: Record<string, unknown>, order: readonly string[]): string {
  const parts: string[] = [];
  for (const k of order) {
    const v = o[k];
    if (v === undefined) continue;
    let json: string;
    if (k === 'ref' && typeof v === 'object') json = refJson(v as Ref);
    else if (k === 'refs' || k === 'evidence') json = `[${(v as Ref[]).map(refJson).join(',')}]`;
    else json = canonical(v);
    parts.push(`${JSON.stringify(k)}:${json}`);
  }
  return `{${parts.join(',')}}`;
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
