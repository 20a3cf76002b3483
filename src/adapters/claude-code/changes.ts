/**
 * Claude Code's file-editing results (`Write`, `Edit`, `MultiEdit`, `NotebookEdit`) as a
 * runtime-neutral `changes/1` record: the patch the runtime itself computed, so no plugin is
 * needed to know what an edit did. The record rides as a second `data` part of the result.
 */
import { isAbsolute, relative, sep } from 'node:path';
import { CHANGES_SCHEMA, type ChangeHunk, type ChangeRecord, type FileChange } from '../../formats/session-data/changes.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);

/** A path inside the session's directory is shown relative to it; one outside stays absolute. */
export function workspacePath(file: string, cwd: string | undefined): string {
  if (!cwd || !isAbsolute(file)) return file;
  const r = relative(cwd, file);
  if (r === '' || r.startsWith('..') || isAbsolute(r)) return file;
  return r.split(sep).join('/');
}

function hunkOf(h: unknown): ChangeHunk | undefined {
  if (!isObj(h) || !Array.isArray(h.lines)) return undefined;
  const oldStart = num(h.oldStart),
    oldLines = num(h.oldLines),
    newStart = num(h.newStart),
    newLines = num(h.newLines);
  if (oldStart === undefined || oldLines === undefined || newStart === undefined || newLines === undefined) return undefined;
  return {
    old_start: oldStart,
    old_lines: oldLines,
    new_start: newStart,
    new_lines: newLines,
    lines: h.lines.filter((l): l is string => typeof l === 'string'),
  };
}

/** The lines of a new file's content, as one hunk that adds them all (the runtime sends no patch for a create). */
function creationHunk(content: string): ChangeHunk[] {
  if (content === '') return [];
  const lines = content.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return [{ old_start: 0, old_lines: 0, new_start: 1, new_lines: lines.length, lines: lines.map((l) => `+${l}`) }];
}

function counted(path: string, operation: FileChange['operation'], hunks: ChangeHunk[], userModified: unknown): FileChange {
  let added = 0,
    removed = 0;
  for (const h of hunks)
    for (const l of h.lines) {
      if (l.startsWith('+')) added++;
      else if (l.startsWith('-')) removed++;
    }
  const f: FileChange = { path, operation, hunks, lines_added: added, lines_removed: removed };
  if (typeof userModified === 'boolean') f.user_modified = userModified;
  return f;
}

/**
 * The change a tool's structured outcome describes, or undefined when it describes none (any other
 * tool, a refused or failed edit, which carries no outcome object). `cwd` is the record's own.
 */
export function changeRecordOf(toolUseId: string, tur: unknown, cwd: string | undefined): ChangeRecord | undefined {
  if (!isObj(tur)) return undefined;
  const base: Omit<ChangeRecord, 'files'> = {
    schema: CHANGES_SCHEMA,
    id: toolUseId,
    captured_by: 'claude-code',
    basis: 'runtime_reported',
    ...(cwd ? { root: cwd } : {}),
  };
  const filePath = str(tur.filePath);
  if (filePath && (Array.isArray(tur.structuredPatch) || tur.type === 'create')) {
    const patch = Array.isArray(tur.structuredPatch) ? tur.structuredPatch.map(hunkOf).filter((h): h is ChangeHunk => h !== undefined) : [];
    const create = tur.type === 'create';
    // A create comes with its content and an empty patch; an overwrite (`type: update`) and an edit with the patch.
    const hunks = create && patch.length === 0 && typeof tur.content === 'string' ? creationHunk(tur.content) : patch;
    return { ...base, files: [counted(workspacePath(filePath, cwd), create ? 'create' : 'update', hunks, tur.userModified)] };
  }
  const notebook = str(tur.notebook_path);
  if (notebook && typeof tur.edit_mode === 'string') {
    // A notebook edit names the cell, not lines: its size is unknown here, and said so.
    const f: FileChange = { path: workspacePath(notebook, cwd), operation: 'update', hunks: [], lines_added: 0, lines_removed: 0, lines: 'unavailable' };
    return { ...base, files: [f] };
  }
  return undefined;
}
