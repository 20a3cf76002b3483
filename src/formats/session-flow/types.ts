/** Session Flow `sf/1`: the conversation as an append-only chain of immutable rounds. */

export const SF_SCHEMA = 'sf/1';
/** This implementation's interpretation version; a chain never mixes parsers. */
export const PARSER = 'aszcol-v1';
/** The idle gap is fixed in the build and part of the policy every round carries. */
export const IDLE_GAP_MS = 10 * 60 * 1000;
export const POLICY = 'v1+idle=10m0s';

export interface Ref {
  seq: number;
  row: number;
  block?: number;
}

export type Quality = 'exact_unique' | 'exact_ambiguous' | 'strong_inference' | 'weak_inference' | 'unresolved' | 'conflict';
export type UnresolvedState = 'open' | 'resolved' | 'terminal';
export type UnresolvedKind =
  'tool_result' | 'tool_use' | 'child_stream' | 'notified_child' | 'spawn_call' | 'spawn_of_child' | 'epoch_continuation' | 'telemetry';

export const NODE_KINDS = [
  'session',
  'stream',
  'epoch',
  'segment',
  'talk',
  'run',
  'llm.call',
  'tool',
  'agent.call',
  'agent.output',
  'message.assistant',
  'message.synthetic',
  'thinking',
  'message.external',
  'context.injection',
  'agent.launch_ack',
  'runtime.notification',
  'epoch.boundary',
  'epoch.summary',
  'error.api',
  'turn.duration',
  'control.command',
  'control.notice',
] as const;
export type NodeKind = (typeof NODE_KINDS)[number];
export const RELATION_TYPES = ['starts', 'reports', 'ends_with', 'follows', 'summarizes', 'in_segment'] as const;
export type RelationType = (typeof RELATION_TYPES)[number];
export const UNRESOLVED_KINDS: readonly UnresolvedKind[] = [
  'tool_result',
  'tool_use',
  'child_stream',
  'notified_child',
  'spawn_call',
  'spawn_of_child',
  'epoch_continuation',
  'telemetry',
];

/** Kinds that are structure, not steps: everything else a round holds counts as a step. */
export const STRUCTURE_KINDS: ReadonlySet<string> = new Set(['session', 'stream', 'epoch', 'segment', 'talk', 'run']);

export interface NodeBody {
  kind: NodeKind;
  parent?: string;
  stream?: string;
  ref?: Ref;
  refs?: Ref[];
  attrs?: Record<string, unknown>;
}

export interface RelationBody {
  type: RelationType;
  from: string;
  to: string;
  quality: Quality;
  via: string;
  evidence: Ref[];
}

export interface UnresolvedBody {
  kind: UnresolvedKind;
  ref: string;
  reason: string;
  state: UnresolvedState;
}

export type EntityFrame =
  | ({ t: 'node'; id: string; revision: number; tombstone?: true } & Partial<NodeBody>)
  | ({ t: 'relation'; id: string; revision: number; tombstone?: true } & Partial<RelationBody>)
  | ({ t: 'unresolved'; id: string; revision: number; tombstone?: true } & Partial<UnresolvedBody>);

export interface RoundHeader {
  t: 'header';
  schema: 'sf/1';
  conversation: string;
  session: string;
  round: number;
  previous?: string;
  from_seq: number;
  through_seq: number;
  input_digest: string;
  parser: string;
  policy: string;
  from_time?: string;
  through_time?: string;
  session_from_time?: string;
  session_through_time?: string;
  title?: string;
  talks: number;
  steps: number;
  streams: number;
  segments: number;
  unresolved: number;
  changes: number;
  lines_added: number;
  lines_removed: number;
  llm_calls: number;
  subagents: number;
  bash_runs: number;
}

export interface Commit {
  t: 'commit';
  digest: string;
  counts: { nodes: number; relations: number; unresolved: number };
}

export interface Round {
  header: RoundHeader;
  frames: EntityFrame[];
  commit: Commit;
}

/** What assembly produces for one session: entities without revisions. */
export interface Assembly {
  nodes: Map<string, NodeBody>;
  relations: Map<string, RelationBody>;
  unresolved: Map<string, UnresolvedBody>;
  title?: string;
  sessionFrom?: number;
  sessionThrough?: number;
}

/** Ids join their parts with `/`; an empty part is left out and a `/` inside a part becomes `_`. */
export function entityId(...parts: (string | number | undefined)[]): string {
  return parts
    .filter((p) => p !== undefined && p !== '')
    .map((p) => String(p).replace(/\//g, '_'))
    .join('/');
}

export const at = (r: Ref) => `${r.seq}/${r.row}`;
