/**
 * What a session's derived index holds: the landed files it covers and one entry per landed record,
 * identifiers and roles only. Shared by the index's builder (index.ts) and its stored form (index-codec.ts).
 */
import type { FileKind, PartKind, PartState, SdRecord } from '../formats/session-data/types.js';
import type { Figures } from './index-figures.js';

/** A part assembly can use (text, reasoning, call, result), with its position in the record's parts. */
export interface IndexedPart {
  block: number;
  k: PartKind;
  state: PartState;
  id?: string;
  name?: string;
  of?: string;
  failed?: boolean;
}

/** The record's identifiers and roles, each as a string (`INDEX_STRING_FIELDS`). */
export interface IndexEntry extends Partial<Record<IndexStringField, string>> {
  seq: number;
  row: number;
  fileKind: FileKind;
  /** The stream the file was landed in (`main`, an agent id), from the header; absent for run files. */
  stream?: string;
  /** The header's batch: the workflow run of a run file or of a workflow child. */
  fileBatch?: string;
  /** Milliseconds since the epoch, parsed from `time`. */
  time?: number;
  flags: string[];
  parts: IndexedPart[];
  /**
   * A runtime telemetry record's (`otlp_log`, `otlp_span`) figures — the data part's name, ids,
   * times and scalar attributes, long strings left out — or a failed attempt's (`api_error`)
   * scalars. Assembly joins on these (see storage/index-figures.ts).
   */
  figures?: Figures;
}

export interface IndexedFile {
  seq: number;
  kind: FileKind;
  rel: string;
  digest: string;
  records: number;
  stream?: string;
  batch?: string;
  /**
   * How many of its records carry a workspace change (`changes/1`): a round's header counts them
   * without reading a file that has none. Absent in an index written before it was kept: read.
   */
  changes?: number;
  /**
   * A transcript's source path under its source root, as its header names it: the project a usage
   * report files the session under, read with no landed file opened. Absent in an older index.
   */
  src?: string;
}

export interface SessionIndex {
  session: string;
  indexedSeq: number;
  files: IndexedFile[];
  entries: IndexEntry[];
}

/** The record fields an entry keeps as strings, in the order the stored rows hold them: named as `SdRecord` names them. */
export const INDEX_STRING_FIELDS = [
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
  'trigger',
] as const satisfies readonly (keyof SdRecord)[];
type IndexStringField = (typeof INDEX_STRING_FIELDS)[number];
