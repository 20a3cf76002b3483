import type { IndexEntry } from '../storage/index.js';
import type { Assembly, NodeBody, Quality, Ref, RelationBody, RelationType, UnresolvedBody, UnresolvedKind } from '../formats/session-flow/types.js';
import { entityId } from '../formats/session-flow/types.js';

/** One execution stream: `main` or a child agent, with its records in landed order. */
export interface StreamInfo {
  name: string;
  role: 'main' | 'child';
  records: IndexEntry[];
  /** The child's sidecar records (label, nesting). */
  meta: IndexEntry[];
  /** The workflow run a child was filed under. */
  batch?: string;
}

export interface RunInfo {
  id: string;
  talk: string;
  stream: string;
  cycle: string;
  /** The run's records, landed order. */
  records: IndexEntry[];
  trigger: 'external' | 'notification' | 'unknown' | undefined;
}

export interface TalkInfo {
  id: string;
  stream: string;
  runs: RunInfo[];
  trigger: string;
}

/** Everything the stages share. Stages are pure over the index; they only add to `out`. */
export interface AssemblyContext {
  session: string;
  conversation: string;
  /** Every indexed record up to the watermark, landed order (copies included). */
  entries: IndexEntry[];
  /** Records that are not a later copy of an earlier record id: what every lookup sees. */
  live: IndexEntry[];
  byId: Map<string, IndexEntry>;
  duplicates: number;
  streams: Map<string, StreamInfo>;
  /** Run files (journal, manifest, script) by batch. */
  runs: Map<string, IndexEntry[]>;
  /** The live OTLP log, span and provider body records, landed order (stage 2). */
  telemetry: IndexEntry[];
  /**
   * The OTLP log records stage 9 read as provider body events (a superset: the bodies' join reads
   * each again), landed order; unset until stage 9 ran, and then the bodies' join reads no other.
   */
  bodyEvents?: IndexEntry[];
  /** Stage 3's call nodes, each with its first fragment: stage 9 writes figures into them without looking each up by id. */
  callNodes?: { first: IndexEntry; node: NodeBody }[];
  runOf: Map<IndexEntry, RunInfo>;
  talks: TalkInfo[];
  epochOf: Map<IndexEntry, string>;
  out: Assembly;
}

export const refOf = (e: IndexEntry, block?: number): Ref => (block === undefined ? { seq: e.seq, row: e.row } : { seq: e.seq, row: e.row, block });
export const locId = (prefix: string, e: IndexEntry, block?: number) => `${prefix}/${e.seq}/${e.row}${block === undefined ? '' : `:${block}`}`;
export const before = (a: IndexEntry, b: IndexEntry) => a.seq < b.seq || (a.seq === b.seq && a.row < b.row);
export const has = (e: IndexEntry, flag: string) => e.flags.includes(flag);

export function addNode(ctx: AssemblyContext, id: string, body: NodeBody): void {
  ctx.out.nodes.set(id, body);
}

const RANK: Record<Quality, number> = { conflict: 6, exact_unique: 5, exact_ambiguous: 4, strong_inference: 3, weak_inference: 2, unresolved: 1 };

/**
 * A relation is keyed by what it joins; one edge seen twice is one relation with merged evidence
 * and the stronger quality, except that a conflict, once seen, stays.
 */
export function addRelation(ctx: AssemblyContext, type: RelationType, from: string, to: string, quality: Quality, via: string, evidence: Ref[]): void {
  const id = entityId('rel', type, from.replace(/\//g, '_'), to.replace(/\//g, '_'));
  const prev = ctx.out.relations.get(id);
  if (!prev) {
    ctx.out.relations.set(id, { type, from, to, quality, via, evidence });
    return;
  }
  const keep = prev.quality === 'conflict' || RANK[prev.quality] >= RANK[quality] ? prev : { ...prev, quality, via };
  const seen = new Set(keep.evidence.map((r) => `${r.seq}/${r.row}`));
  const merged = [...keep.evidence, ...evidence.filter((r) => !seen.has(`${r.seq}/${r.row}`))].sort((a, b) => a.seq - b.seq || a.row - b.row);
  ctx.out.relations.set(id, { ...keep, evidence: merged });
}

export function addUnresolved(ctx: AssemblyContext, kind: UnresolvedKind, ref: string, reason: string): void {
  const body: UnresolvedBody = { kind, ref, reason, state: 'open' };
  ctx.out.unresolved.set(entityId('unres', kind, ref), body);
}

export function relationExists(ctx: AssemblyContext, pred: (r: RelationBody) => boolean): boolean {
  for (const r of ctx.out.relations.values()) if (pred(r)) return true;
  return false;
}
