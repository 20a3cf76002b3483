/**
 * A checkpoint's `view` expectation: what the document the page serves says over the root as it
 * stands (asz 0.6's keys), what the conversation's `/changes` answer lists, and what the plugin's
 * hooks observed. With `hide`, the document is built as a view withholding those categories, and
 * every step carrying a hidden flag must have lost its text and say `omitted`, and no call may list
 * a body; `withheld` is then what its summary must count, every category named.
 */
import type { EntityFrame } from '../formats/session-flow/types.js';
import type { ViewDocument, ViewNode } from '../formats/view/types.js';
import { isWithholdCategory, withholdDocument, type WithholdCategory } from '../formats/view/withhold.js';
import { buildChanges } from '../extensions/view/changes.js';
import { loadViewInput } from '../extensions/view/load.js';
import { servedView } from '../extensions/view/served-view.js';
import { pluginExecutions } from './execution-check.js';

type Node = Extract<EntityFrame, { t: 'node' }>;

export interface ViewMismatch {
  key: string;
  expected: unknown;
  got: unknown;
}

/** asz names the request and response bodies `provider_bodies`; aszcol's category for them is `api_bodies`. */
const ASZ_NAME: Record<string, WithholdCategory> = { provider_bodies: 'api_bodies' };
const aszName = (c: string) => Object.entries(ASZ_NAME).find(([, ours]) => ours === c)?.[0] ?? c;

function walk(doc: ViewDocument, visit: (n: ViewNode) => void): void {
  const go = (n: ViewNode) => {
    visit(n);
    n.children?.forEach(go);
  };
  doc.talks.forEach(go);
  doc.loose.forEach(go);
}

/** Each change record the conversation's `/changes` answer holds once, with its files, who captured it and whether a step took it. */
function changeRecords(root: string, session: string): { changes: number; changed_files: number; captured_by: Record<string, number>; changes_joined: number } {
  const records = new Map<string, { captured_by: string; joined: boolean }>();
  const answer = buildChanges(loadViewInput(root, session));
  for (const c of answer.changes) records.set(`${c.ref.seq}/${c.ref.row}/${c.tool_use}`, { captured_by: c.captured_by, joined: c.step !== undefined });
  const captured_by: Record<string, number> = {};
  for (const r of records.values()) captured_by[r.captured_by] = (captured_by[r.captured_by] ?? 0) + 1;
  return { changes: records.size, changed_files: answer.changes.length, captured_by, changes_joined: [...records.values()].filter((r) => r.joined).length };
}

/** Every key a `view` expectation may name, as this root answers it; `hide` builds the withheld document first. */
export function viewFacts(
  root: string,
  session: string,
  nodes: readonly Node[],
  hide: readonly string[],
): { got: Record<string, unknown>; problems: ViewMismatch[] } {
  const problems: ViewMismatch[] = [];
  const categories = hide.map((h) => ASZ_NAME[h] ?? h);
  for (const c of categories) if (!isWithholdCategory(c)) throw new Error(`view.hide: "${c}" is not a category a view withholds`);
  const served = servedView(root, session).doc;
  const doc = categories.length ? withholdDocument(served, new Set(categories as WithholdCategory[])) : served;
  const flags: Record<string, number> = {};
  walk(doc, (n) => {
    for (const f of n.flags ?? []) flags[f] = (flags[f] ?? 0) + 1;
    if (!categories.length) return;
    if ((n.flags ?? []).some((f) => hide.includes(f)) && (n.text !== undefined || n.state !== 'omitted'))
      problems.push({ key: `hide: ${n.id}`, expected: 'omitted, no text', got: { text: n.text, state: n.state } });
    if (n.provider_bodies?.length) problems.push({ key: `hide: ${n.id}`, expected: 'no provider body listed', got: n.provider_bodies.length });
  });
  const withheld = Object.fromEntries(
    Object.entries((doc.summary as unknown as { withheld?: Record<string, number> }).withheld ?? {}).map(([k, v]) => [aszName(k), v]),
  );
  const first = doc.talks[0];
  const got: Record<string, unknown> = {
    ...pluginExecutions(root, session, nodes),
    ...changeRecords(root, session),
    state: doc.summary.state,
    problems: doc.summary.problems.length,
    talks: doc.summary.talks,
    steps: doc.summary.steps,
    rounds: doc.summary.rounds,
    files: doc.files.length,
    provider_bodies: doc.summary.provider_bodies ?? 0,
    captured_prompts: doc.summary.captured_prompts ?? 0,
    provider_files: doc.files.filter((f) => f.kind === 'provider_body').length,
    flags,
    withheld,
    first_talk: first ? { label: first.label, reply: first.reply, runs: first.children?.filter((c) => c.kind === 'run').length } : undefined,
  };
  return { got, problems };
}
