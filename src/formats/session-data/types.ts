/** Session Data `sd/1`: the landed, runtime-neutral shape of a conversation's records. */

export const SD_SCHEMA = 'sd/1';
export const SD_ENVELOPE = 1;

export type FileKind =
  'transcript' | 'agent_meta' | 'journal' | 'workflow_manifest' | 'workflow_script' | 'changes' | 'execution' | 'otlp_log' | 'otlp_span' | 'provider_body';

export const FILE_KINDS: readonly FileKind[] = [
  'transcript',
  'agent_meta',
  'journal',
  'workflow_manifest',
  'workflow_script',
  'changes',
  'execution',
  'otlp_log',
  'otlp_span',
  'provider_body',
];

export interface Header {
  h: 1;
  schema: 'sd/1';
  seq: number;
  at: string;
  kind: FileKind;
  adapter: string;
  dialect: string;
  src: string;
  session: string;
  stream?: string;
  batch?: string;
  /** Extra constant context a push transport keeps (resource, scope); absent for local files. */
  resource?: unknown;
  scope?: unknown;
}

export type PartState = 'available' | 'truncated' | 'redacted' | 'omitted' | 'unavailable';
export type PartKind = 'text' | 'reasoning' | 'call' | 'result' | 'media' | 'data' | 'unknown';

export interface Part {
  k: PartKind;
  state: PartState;
  bytes: number;
  text?: string;
  id?: string;
  name?: string;
  of?: string;
  failed?: boolean;
  media?: string;
  data?: unknown;
}

export interface Usage {
  in?: number;
  out?: number;
  cache_read?: number;
  cache_write?: number;
}

export interface Dropped {
  what: string;
  bytes: number;
  why: string;
}

export type From = 'agent' | 'external' | 'runtime';

/** One source record, converted. Key order here is the order written to disk. */
export interface SdRecord {
  ord: number;
  off: number;
  sha: string;
  bytes: number;
  id?: string;
  parent?: string;
  call?: string;
  run?: string;
  continues?: string;
  tool?: string;
  child?: string;
  batch?: string;
  started_by?: string;
  label?: string;
  from?: From;
  time?: string;
  trigger?: string;
  flags?: string[];
  model?: string;
  usage?: Usage;
  parts: Part[];
  dropped?: Dropped[];
}

export interface Closing {
  t: 'end';
  records: number;
  digest: string;
}

/** The record keys in their on-disk order; the writer emits them in this order so equal records give equal bytes. */
export const RECORD_KEY_ORDER: readonly (keyof SdRecord)[] = [
  'ord',
  'off',
  'sha',
  'bytes',
  'id',
  'parent',
  'call',
  'run',
  'continues',
  'tool',
  'child',
  'batch',
  'started_by',
  'label',
  'from',
  'time',
  'trigger',
  'flags',
  'model',
  'usage',
  'parts',
  'dropped',
];

export const HEADER_KEY_ORDER: readonly (keyof Header)[] = [
  'h',
  'schema',
  'seq',
  'at',
  'kind',
  'adapter',
  'dialect',
  'src',
  'session',
  'stream',
  'batch',
  'resource',
  'scope',
];
