/**
 * The workspace changes a round's window of landed files carries, for the round header's
 * `changes`, `lines_added` and `lines_removed`. Only files that carry a `changes/1` record are
 * read: the index counts them per file when it learns the file, so a round without edits reads no
 * landed file (an index from before the count was kept: files that mention the schema are parsed).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { changesOfRecord, changeTotals, distinctChanges, type ChangeTotals, type WorkspaceChange } from '../../assemble/workspace-changes.js';
import { CHANGES_SCHEMA } from '../../formats/session-data/changes.js';
import { readSessionData } from '../../formats/session-data/decode.js';
import type { IndexedFile } from '../../storage/index.js';

/** Changes in the window's files whose record is live (`isLive` says: not a later copy of a record). */
export function windowChanges(root: string, files: IndexedFile[], isLive: (seq: number, row: number) => boolean): WorkspaceChange[] {
  const found: WorkspaceChange[] = [];
  const marker = Buffer.from(`"${CHANGES_SCHEMA}"`);
  for (const f of files) {
    if (f.changes === 0) continue;
    const path = join(root, f.rel);
    if (f.changes === undefined && !readFileSync(path).includes(marker)) continue;
    const { records } = readSessionData(path);
    records.forEach((r, i) => {
      if (isLive(f.seq, i + 1)) found.push(...changesOfRecord(r, { seq: f.seq, row: i + 1 }, f.stream));
    });
  }
  return distinctChanges(found);
}

/** The header's running totals: what the previous round counted plus this window's. */
export function addTotals(
  previous: Partial<ChangeTotals> | undefined,
  window: WorkspaceChange[],
): Pick<ChangeTotals, 'changes' | 'lines_added' | 'lines_removed'> {
  const w = changeTotals(window);
  return {
    changes: (previous?.changes ?? 0) + w.changes,
    lines_added: (previous?.lines_added ?? 0) + w.lines_added,
    lines_removed: (previous?.lines_removed ?? 0) + w.lines_removed,
  };
}
