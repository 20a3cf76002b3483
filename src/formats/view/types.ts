/**
 * `asz.view`: one conversation as one document, rebuilt from its round chain and its landed
 * records every time it is asked for, never stored. The shape (key names and their order) is the
 * one asz publishes; a key with no value is left out, never written as null.
 */

import type { ContextChange, ViewPrompt, ViewProviderBody } from './prompt.js';
export const VIEW_FORMAT = 'asz.view';
export const VIEW_VERSION = '1.0';
/** A node's text is clipped to this many bytes, on a whole character. */
export const TEXT_LIMIT_BYTES = 2000;
/** Trees are written this many levels below their root; deeper nodes are left out. */
export const MAX_TREE_DEPTH = 12;

export interface ViewRef {
  seq: number;
  row: number;
  block?: number;
}

export type ViewState = 'verified' | 'incomplete' | 'mismatch';

export interface ViewSummary {
  title?: string;
  state: ViewState;
  problems: string[];
  talks: number;
  steps: number;
  streams: number;
  segments: number;
  rounds: number;
  /** Unresolved references still open. */
  unresolved: number;
  /** When the session began and its last activity, unix ms, from the session node. */
  from?: number;
  to?: number;
  /** The runtime's own figures for the whole conversation (assembly's telemetry join); absent when it exported none. */
  cost_usd?: number;
  api_ms?: number;
  tool_ms?: number;
  api_calls?: number;
  api_errors?: number;
  /** The session's provider bodies as of the fold, joined or not, and the calls whose request is listed (asz 0.6). */
  provider_bodies?: number;
  captured_prompts?: number;
  kinds: Record<string, number>;
  relation_types: Record<string, number>;
  quality: Record<string, number>;
}

export interface ViewRound {
  round: number;
  digest?: string;
  previous?: string;
  from_seq?: number;
  through_seq?: number;
  input_digest?: string;
  from_time?: number;
  through_time?: number;
  verified: boolean;
}

export interface ViewFile {
  /** Path relative to the storage root, forward slashes. */
  file: string;
  format: 'sd' | 'sf';
  kind: string;
  seq?: number;
  round?: number;
  stream?: string;
  run?: string;
  lines: number;
  bytes: number;
  /** SHA-256 of the whole file. */
  digest: string;
  from_time?: number;
  through_time?: number;
  verified: boolean;
}

export interface OpenedBy {
  step: string;
  stream?: string;
  talk?: string;
  quality: string;
}

export interface ViewStream {
  id: string;
  name: string;
  role: string;
  label?: string;
  /** The stream whose step started this one, or the agent a sidecar says nested it. */
  parent?: string;
  records: number;
  steps: number;
  /** The stream's first talk. */
  talk?: string;
  opened_by: OpenedBy[];
}

export interface ViewSegment {
  id: string;
  state?: string;
  committable?: boolean;
  talks: number;
  from?: number;
  to?: number;
  gates_unmet?: string[];
}

export interface Edge {
  type: string;
  other: string;
  dir: 'in' | 'out';
  quality: string;
  via: string;
}

export interface ViewUsage {
  in?: number;
  out?: number;
  cache_read?: number;
  cache_write?: number;
}

export interface ViewDropped {
  what: string;
  bytes: number;
  why?: string;
}

/** One node of a talk's (or a loose) tree. */
export interface ViewNode {
  id: string;
  kind: string;
  parent?: string;
  stream?: string;
  at?: number;
  ref?: ViewRef;
  refs?: ViewRef[];
  attrs?: Record<string, unknown>;
  text?: string;
  state?: string;
  bytes?: number;
  usage?: ViewUsage;
  flags?: string[];
  dropped?: ViewDropped[];
  // a talk adds
  label?: string;
  reply?: string;
  runs?: number;
  steps?: number;
  tools?: number;
  from?: number;
  to?: number;
  child?: boolean;
  segment?: string;
  // a tool or agent call adds
  name?: string;
  failed?: boolean;
  result?: string;
  result_state?: string;
  result_bytes?: number;
  request_to_result_ms?: number;
  request_to_result_join?: string;
  // an llm.call adds (asz 0.6: its bodies by role and landed record; aszcol: what they say)
  provider_bodies?: ViewProviderBody[];
  prompt?: ViewPrompt;
  context_change?: ContextChange;
  children?: ViewNode[];
  edges?: Edge[];
}

export interface ViewRelation {
  id: string;
  type: string;
  from: string;
  to: string;
  quality: string;
  via: string;
  evidence: ViewRef[];
}

export interface ViewUnresolved {
  id: string;
  kind: string;
  ref: string;
  reason: string;
  state: string;
}

export interface ViewDocument {
  format: typeof VIEW_FORMAT;
  version: typeof VIEW_VERSION;
  conversation: string;
  sessions: string[];
  head: { round: number; digest: string };
  parser?: string;
  policy?: string;
  summary: ViewSummary;
  rounds: ViewRound[];
  files: ViewFile[];
  streams: ViewStream[];
  segments: ViewSegment[];
  talks: ViewNode[];
  loose: ViewNode[];
  relations: ViewRelation[];
  unresolved: ViewUnresolved[];
}
