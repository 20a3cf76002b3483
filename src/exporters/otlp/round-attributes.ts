/**
 * The attributes a round's log record carries for a receiver's list of conversations, copied off
 * the round header, with asz 0.6's meaning and order: the title, the five structure counts, then
 * the later counts, each sent on its own when known. The OAP's LAL rule (`lal/ai-agent.yaml`)
 * reads every later count only when its tag is present, so a count we cannot know is left out,
 * never sent as 0 (a 0 would list as "no changes" when the truth is "not measured").
 *
 * - `llm_calls`: the provider calls of the conversation (`llm.call` nodes).
 * - `subagents`: the child streams (streams whose role is `child`).
 * - `bash_runs`: the Bash tool uses, subagent-run ones included.
 * - `changes`, `lines_added`, `lines_removed`: the workspace changes the conversation made; these
 *   come from whoever measures them (the workspace-changes assembly), handed in as `WorkspaceTotals`.
 */
import { i, s, type Attr } from '../../otlp/identity.js';

/** What a conversation changed in its workspace, when that was measured. */
export interface WorkspaceTotals {
  /** Files changed (created, edited, written, deleted). */
  changes: number;
  linesAdded: number;
  linesRemoved: number;
}

/** The five counts every round header has carried since the list attributes came. */
const STRUCTURE_COUNTS = ['talks', 'steps', 'streams', 'segments', 'unresolved'] as const;
/** Counts the assembler itself computes, sent when the header has them. */
const ACTIVITY_COUNTS = ['llm_calls', 'subagents', 'bash_runs'] as const;

const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);

/**
 * The list attributes of one round. `workspace` undefined: the changes were not measured, and
 * their three attributes are left out.
 */
export function roundListAttributes(header: Readonly<Record<string, unknown>>, workspace?: WorkspaceTotals): Attr[] {
  const out: Attr[] = [];
  if (typeof header.title === 'string' && header.title) out.push(s('asz.conversation.title', header.title));
  for (const k of STRUCTURE_COUNTS) {
    const n = count(header[k]);
    if (n !== undefined) out.push(i(`asz.conversation.${k}`, n));
  }
  if (workspace) {
    for (const [key, v] of [
      ['changes', workspace.changes],
      ['lines_added', workspace.linesAdded],
      ['lines_removed', workspace.linesRemoved],
    ] as const) {
      const n = count(v);
      if (n !== undefined) out.push(i(`asz.conversation.${key}`, n));
    }
  }
  for (const k of ACTIVITY_COUNTS) {
    const n = count(header[k]);
    if (n !== undefined) out.push(i(`asz.conversation.${k}`, n));
  }
  return out;
}
