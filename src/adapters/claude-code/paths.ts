/** Claude Code's file vocabulary: names and shapes of what it writes under `projects/`. */

/** A session id is UUID-shaped in either case; it is kept byte-exact, never case-folded. */
export const SESSION_ID = /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
export const MAIN_TRANSCRIPT = /^([0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})\.jsonl$/;
/** Only this shape counts as an agent id; it names the stream directory. */
export const AGENT_ID = /^a[0-9a-f]{16}$/;
export const AGENT_TRANSCRIPT = /^agent-(.+)\.jsonl$/;
export const AGENT_SIDECAR = /^agent-(.+)\.meta\.json$/;
export const WORKFLOW_MANIFEST = /^(wf_.+)\.json$/;
export const JOURNAL = 'journal.jsonl';

/**
 * A workflow script is `<label>-wf_<run>.js`. The run id itself holds hyphens (`wf_afa31e47-f6c`),
 * so the split is at the last `-wf_`; a greedy match from the first would swallow a later one.
 */
export function splitScriptName(name: string): { label: string; run: string } | undefined {
  if (!name.endsWith('.js')) return undefined;
  const stem = name.slice(0, -3);
  const at = stem.lastIndexOf('-wf_');
  if (at <= 0 || at + 4 >= stem.length) return undefined;
  return { label: stem.slice(0, at), run: stem.slice(at + 1) };
}

/** The runtime names a project directory after the launch directory with every character but A–Z, a–z, 0–9 and `-` made `-`. */
export function slugifyPath(p: string): string {
  return p.replace(/[^A-Za-z0-9-]/g, '-');
}
