/**
 * What the plugin's hooks saw a shell command change, as workspace changes: the shallow scan the
 * hook before the call took of the working directory against the one the hook after it took, each
 * entry that was created, removed or rewritten between the two one changed file of a record
 * `captured_by: asz-plugin` with `basis: tool_window` (asz's words for a change found by scanning
 * around a call). Claude Code records no patch for a shell command, so this is the only account of
 * what one changed. Pure: landed observations in, changes out.
 *
 * The scan keeps sizes and times, never content, so such a change has no hunks and says
 * `lines: unavailable`; it sees one directory level, so it says `coverage: partial` (a file changed
 * deeper down shows as nothing). Hooks pair as in the `/tools` join (hook-pairs.ts): a call whose
 * hooks cannot be paired (a hook missing, or several before or after it) gives no record here.
 */
import type { HookObservation } from '../adapters/claude-code/hook-event.js';
import { scanDifference } from '../adapters/claude-code/dir-scan.js';
import type { Ref } from '../formats/session-flow/types.js';
import type { WorkspaceChange } from './workspace-changes.js';
import { distinctObservations, pairToolHooks, scanWindow, theOnePair } from './hook-pairs.js';

/** One landed hook observation and where it was read. */
export interface LandedObservation {
  observation: HookObservation;
  ref: { seq: number; row: number; block: number };
  stream?: string;
}

/** A scanned entry's operation: absent before is a create, absent after a delete. */
function operationOf(before: string | undefined, after: string | undefined): WorkspaceChange['operation'] {
  if (before === undefined) return 'create';
  if (after === undefined) return 'delete';
  return 'update';
}

/** The changes of every shell call whose one hook before and one hook after both carry a scan of the same directory. */
export function shellWindowChanges(landed: Iterable<LandedObservation>): WorkspaceChange[] {
  const observationOf = (l: LandedObservation) => l.observation;
  const out: WorkspaceChange[] = [];
  for (const [tool, pair] of pairToolHooks(distinctObservations(landed, observationOf), observationOf)) {
    const one = theOnePair(pair);
    const window = scanWindow(one?.before?.observation, one?.after?.observation);
    if (!window) continue;
    // The record is the window's end: the hook after the call is where the change became known.
    const at = one!.after!;
    const time = Date.parse(at.observation.time);
    const ref: Ref = { ...at.ref };
    for (const name of scanDifference(window.before, window.after)) {
      const c: WorkspaceChange = {
        tool_use: tool,
        file: name,
        operation: operationOf(window.before.entries[name], window.after.entries[name]),
        hunks: [],
        lines_added: 0,
        lines_removed: 0,
        lines: 'unavailable',
        captured_by: 'asz-plugin',
        basis: 'tool_window',
        coverage: 'partial',
        ref,
      };
      if (at.stream) c.stream = at.stream;
      if (!Number.isNaN(time)) c.at = time;
      out.push(c);
    }
  }
  return out;
}
