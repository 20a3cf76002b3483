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
 * deeper down shows as nothing). A call whose hooks cannot be paired (a hook missing, or several
 * before or after the call) gives no record here: the `/tools` join reports it with its reason.
 */
import type { HookObservation } from '../adapters/claude-code/hook-event.js';
import { scanDifference } from '../adapters/claude-code/dir-scan.js';
import type { Ref } from '../formats/session-flow/types.js';
import type { WorkspaceChange } from './workspace-changes.js';

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
  const seen = new Set<string>();
  const byTool = new Map<string, { pre: LandedObservation[]; post: LandedObservation[] }>();
  for (const l of landed) {
    const o = l.observation;
    // The same event posted to the receiver and also spooled lands once per copy; it is one observation.
    if (seen.has(o.id)) continue;
    seen.add(o.id);
    if (!o.tool || !o.shell?.scan || (o.event !== 'tool_pre' && o.event !== 'tool_post')) continue;
    const slot = byTool.get(o.tool) ?? byTool.set(o.tool, { pre: [], post: [] }).get(o.tool)!;
    (o.event === 'tool_pre' ? slot.pre : slot.post).push(l);
  }
  const out: WorkspaceChange[] = [];
  for (const [tool, { pre, post }] of byTool) {
    if (pre.length !== 1 || post.length !== 1) continue;
    const before = pre[0]!.observation.shell!.scan!;
    const after = post[0]!.observation.shell!.scan!;
    if (before.dir !== after.dir) continue;
    // The record is the window's end: the hook after the call is where the change became known.
    const at = post[0]!;
    const time = Date.parse(at.observation.time);
    const ref: Ref = { ...at.ref };
    for (const name of scanDifference(before, after)) {
      const c: WorkspaceChange = {
        tool_use: tool,
        file: name,
        operation: operationOf(before.entries[name], after.entries[name]),
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
