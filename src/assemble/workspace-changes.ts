/**
 * Workspace changes: the `changes/1` records landed beside tool results, one entry per changed
 * file, each tied to the step (the tool use) that made it, with totals per talk and for the whole
 * conversation. Pure: the same records always give the same list and the same totals.
 *
 * `changes` counts change records (one per tool call that changed something), as asz's round header
 * does; `lines_added` and `lines_removed` are the lines their diffs add and remove.
 */
import { capturedByName, isChangeRecord, type CapturedBy, type ChangeHunk, type ChangeRecord, type FileChange } from '../formats/session-data/changes.js';
import type { SdRecord } from '../formats/session-data/types.js';
import type { Ref } from '../formats/session-flow/types.js';

export interface WorkspaceChange {
  /** The tool use that made the change: the step's id is `tool/<this>`. */
  tool_use: string;
  file: string;
  operation: FileChange['operation'];
  hunks: ChangeHunk[];
  lines_added: number;
  lines_removed: number;
  /** Whether the person changed the proposal before it was applied; absent when nobody said. */
  user_modified?: boolean;
  lines?: 'unavailable';
  captured_by: CapturedBy;
  /** How it was observed, when the record says (asz's `basis`). */
  basis?: NonNullable<ChangeRecord['basis']>;
  /** `partial` when the observer did not see the whole workspace (the plugin's shallow scan). */
  coverage?: 'partial';
  /** The record the change was read from. */
  ref: Ref;
  stream?: string;
  /** Unix ms of that record, when it has a time. */
  at?: number;
}

/** The totals the OAP reads off a round (`changes`, `lines_added`, `lines_removed`), plus the distinct files. */
export interface ChangeTotals {
  changes: number;
  lines_added: number;
  lines_removed: number;
  files: number;
}

export const NO_CHANGES: ChangeTotals = Object.freeze({ changes: 0, lines_added: 0, lines_removed: 0, files: 0 });

/** Every workspace change one landed record carries, in part order. */
export function changesOfRecord(record: Pick<SdRecord, 'parts' | 'time'>, ref: { seq: number; row: number }, stream?: string): WorkspaceChange[] {
  const out: WorkspaceChange[] = [];
  const t = record.time ? Date.parse(record.time) : NaN;
  record.parts.forEach((p, block) => {
    if (p.k !== 'data' || !isChangeRecord(p.data)) return;
    const rec = p.data;
    for (const f of rec.files) {
      const c: WorkspaceChange = {
        tool_use: rec.id,
        file: f.path,
        operation: f.operation,
        hunks: f.hunks,
        lines_added: f.lines_added,
        lines_removed: f.lines_removed,
        captured_by: capturedByName(rec.captured_by),
        ref: { seq: ref.seq, row: ref.row, block },
      };
      if (f.user_modified !== undefined) c.user_modified = f.user_modified;
      if (f.lines) c.lines = f.lines;
      if (rec.basis) c.basis = rec.basis;
      if (stream) c.stream = stream;
      if (!Number.isNaN(t)) c.at = t;
      out.push(c);
    }
  });
  return out;
}

/**
 * One list for a conversation: a tool use one observer reported twice (a record the runtime wrote
 * again) counts once, the first landed copy kept. The runtime's record and the plugin's of the same
 * call are two records, as asz lists them. Ordered by landed position.
 */
export function distinctChanges(changes: Iterable<WorkspaceChange>): WorkspaceChange[] {
  const firstRef = new Map<string, string>();
  const out: WorkspaceChange[] = [];
  const key = (c: WorkspaceChange) => `${c.ref.seq}/${c.ref.row}`;
  for (const c of [...changes].sort((a, b) => a.ref.seq - b.ref.seq || a.ref.row - b.ref.row || (a.ref.block ?? 0) - (b.ref.block ?? 0))) {
    const record = `${c.captured_by} ${c.tool_use}`;
    const seen = firstRef.get(record);
    if (seen === undefined) firstRef.set(record, key(c));
    else if (seen !== key(c)) continue;
    out.push(c);
  }
  return out;
}

export function changeTotals(changes: Iterable<WorkspaceChange>): ChangeTotals {
  const uses = new Set<string>();
  const files = new Set<string>();
  let added = 0,
    removed = 0;
  for (const c of changes) {
    uses.add(c.tool_use);
    files.add(c.file);
    added += c.lines_added;
    removed += c.lines_removed;
  }
  return { changes: uses.size, lines_added: added, lines_removed: removed, files: files.size };
}

/** Totals per talk; `talkOf` names the talk a tool use's step is in (undefined: no talk holds it). */
export function totalsByTalk(changes: WorkspaceChange[], talkOf: (toolUse: string) => string | undefined): Map<string, ChangeTotals> {
  const by = new Map<string, WorkspaceChange[]>();
  for (const c of changes) {
    const t = talkOf(c.tool_use);
    if (t !== undefined) (by.get(t) ?? by.set(t, []).get(t)!).push(c);
  }
  return new Map([...by].map(([t, cs]) => [t, changeTotals(cs)]));
}

/** The unified diff of one change, as a reader would print it (`@@ -a,b +c,d @@` and the lines). */
export function unifiedDiff(c: Pick<WorkspaceChange, 'hunks'>): string {
  return c.hunks.map((h) => [`@@ -${h.old_start},${h.old_lines} +${h.new_start},${h.new_lines} @@`, ...h.lines].join('\n')).join('\n');
}

/**
 * The workspace totals a round header carries (`changes`, `lines_added`, `lines_removed`), in the
 * shape the exporter's round attributes take; undefined when any is missing or not a count.
 */
export function headerWorkspaceTotals(header: Readonly<Record<string, unknown>>): { changes: number; linesAdded: number; linesRemoved: number } | undefined {
  const n = (v: unknown) => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);
  const changes = n(header.changes),
    linesAdded = n(header.lines_added),
    linesRemoved = n(header.lines_removed);
  return changes === undefined || linesAdded === undefined || linesRemoved === undefined ? undefined : { changes, linesAdded, linesRemoved };
}
