/**
 * `changes/1`: what one tool call changed in the workspace, in no runtime's words. A dialect
 * writes it as a `data` part beside the result it comes from (`of` names the tool use); the
 * view and the round header read it there. Nothing in it is inferred beyond the producer's patch.
 */
export const CHANGES_SCHEMA = 'changes/1';

/** One hunk of a unified diff: each line starts with ' ', '+' or '-'. */
export interface ChangeHunk {
  old_start: number;
  old_lines: number;
  new_start: number;
  new_lines: number;
  lines: string[];
}

export interface FileChange {
  /** Relative to the record's `root` when inside it, else absolute. */
  path: string;
  operation: 'create' | 'update' | 'delete';
  hunks: ChangeHunk[];
  lines_added: number;
  lines_removed: number;
  /** The person changed the proposed edit before it was applied; absent when the producer did not say. */
  user_modified?: boolean;
  /** `unavailable` when the producer could not count lines (a notebook cell edit). */
  lines?: 'unavailable';
}

export interface ChangeRecord {
  schema: typeof CHANGES_SCHEMA;
  /** The tool use the change belongs to. */
  id: string;
  /**
   * Who saw it, in asz's words: `claude-code` for the patch the runtime recorded on its own editing
   * tool, `asz-plugin` for what the plugin's hooks observed around a call. Records landed before
   * these names say `transcript`; a reader takes that as `claude-code` (`capturedByName`).
   */
  captured_by: CapturedBy | 'transcript';
  /** How the change was observed: the runtime reported it, or a scan before and after the call found it. */
  basis?: 'runtime_reported' | 'tool_window';
  /** The session's working directory, which `path` is relative to. */
  root?: string;
  files: FileChange[];
}

export type CapturedBy = 'claude-code' | 'asz-plugin';

/** A record's `captured_by` as a reader reports it: the earlier name of the runtime's own patch read as asz's. */
export function capturedByName(v: ChangeRecord['captured_by']): CapturedBy {
  return v === 'transcript' ? 'claude-code' : v;
}

export function isChangeRecord(v: unknown): v is ChangeRecord {
  if (typeof v !== 'object' || v === null) return false;
  const o = v as Partial<ChangeRecord>;
  return o.schema === CHANGES_SCHEMA && typeof o.id === 'string' && Array.isArray(o.files);
}
