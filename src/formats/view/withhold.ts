/**
 * Withholding (asz 0.6's `view.hide`, widened): categories of content a deployment keeps from
 * every reader of the page and the JSON API. A withheld step keeps its node — id, kind, ref,
 * flags, bytes — and loses its text, with state `omitted`, so counts, the chain and verification
 * still hold; `summary.withheld` says, by category, how many items were withheld, `{}` when none.
 * Pure: each function returns a withheld copy and never touches the input.
 */
import type { Part, SdRecord } from '../session-data/types.js';
import type { ViewDocument, ViewNode } from './types.js';

export const WITHHOLD_CATEGORIES = ['user_prompts', 'tool_inputs', 'tool_outputs', 'api_bodies', 'system_prompt', 'tool_schemas'] as const;
export type WithholdCategory = (typeof WITHHOLD_CATEGORIES)[number];

export const isWithholdCategory = (v: unknown): v is WithholdCategory => typeof v === 'string' && (WITHHOLD_CATEGORIES as readonly string[]).includes(v);

/** Categories whose content travels inside a provider request: withholding one withholds the bodies, since a body is served whole or not at all. */
const IN_BODIES: readonly WithholdCategory[] = ['api_bodies', 'system_prompt', 'tool_schemas'];
/** Record flags that name a category (as asz's adapters flag the records carrying them). */
const FLAG_CATEGORY: Record<string, WithholdCategory> = { external_input: 'user_prompts', system_prompt: 'system_prompt', tool_schemas: 'tool_schemas' };
const OMITTED = 'omitted';

type Counts = Partial<Record<WithholdCategory, number>>;
const count = (c: Counts, k: WithholdCategory) => (c[k] = (c[k] ?? 0) + 1);

/** The document less the withheld categories, with `summary.withheld`. */
export function withholdDocument(doc: ViewDocument, hide: ReadonlySet<WithholdCategory>): ViewDocument {
  const out = structuredClone(doc);
  const counts: Counts = {};
  if (hide.size) {
    const visit = (n: ViewNode) => {
      withholdNode(n, hide, counts);
      n.children?.forEach(visit);
    };
    out.talks.forEach(visit);
    out.loose.forEach(visit);
    if (hide.has('user_prompts') && (out.summary as { title_from?: string }).title_from === 'prompt') {
      delete out.summary.title;
      count(counts, 'user_prompts');
    }
    if (IN_BODIES.some((c) => hide.has(c))) (out.summary as unknown as Record<string, unknown>).captured_prompts = 0;
  }
  (out.summary as unknown as Record<string, unknown>).withheld = counts;
  return out;
}

function withholdNode(n: ViewNode, hide: ReadonlySet<WithholdCategory>, counts: Counts): void {
  const flagged = (n.flags ?? []).map((f) => FLAG_CATEGORY[f]).filter((c): c is WithholdCategory => c !== undefined && hide.has(c));
  const prompt = hide.has('user_prompts') && (n.kind === 'message.external' || flagged.includes('user_prompts'));
  const call = n.kind === 'tool' || n.kind === 'agent.call';
  if ((prompt || flagged.length || (call && hide.has('tool_inputs'))) && (n.text !== undefined || n.state !== OMITTED)) {
    delete n.text;
    n.state = OMITTED;
    // Counted under every category it carries: a snapshot of the system prompt with the tool schemas is one of each.
    const categories = new Set<WithholdCategory>([...(prompt ? (['user_prompts'] as const) : []), ...flagged]);
    if (!categories.size) categories.add('tool_inputs');
    for (const c of categories) count(counts, c);
  }
  // A talk's label is its person's prompt (or the first injected text standing in for one).
  if (hide.has('user_prompts') && n.label !== undefined) {
    delete n.label;
    count(counts, 'user_prompts');
  }
  if (call && hide.has('tool_outputs') && (n.result !== undefined || n.result_state !== undefined)) {
    delete n.result;
    n.result_state = OMITTED;
    count(counts, 'tool_outputs');
  }
  const withBodies = n as ViewNode & { provider_bodies?: unknown };
  if (withBodies.provider_bodies !== undefined && IN_BODIES.some((c) => hide.has(c))) {
    // Each body counts, a request and its response two, as asz counts them.
    counts.api_bodies = (counts.api_bodies ?? 0) + (Array.isArray(withBodies.provider_bodies) ? withBodies.provider_bodies.length : 1);
    delete withBodies.provider_bodies;
  }
}

/** The categories a landed record's content falls in, as its adapter names them. */
export type RecordClassifier = (record: SdRecord, fileKind: string) => WithholdCategory[];

/**
 * A landed record less what is withheld: a part in a withheld category keeps its kind, ids and
 * `bytes`, loses `text` and `data`, and has state `omitted`. A call part is a tool input, a result
 * part (and the data beside it, such as the runtime's own copy of the result) a tool output; the
 * classifier names the record-wide categories (a prompt, a provider body).
 */
export function withholdRecord(
  record: SdRecord,
  fileKind: string,
  hide: ReadonlySet<WithholdCategory>,
  classify: RecordClassifier,
): { record: SdRecord; withheld: WithholdCategory[] } {
  const whole = [
    ...(record.flags ?? []).map((f) => FLAG_CATEGORY[f]).filter((c): c is WithholdCategory => c !== undefined),
    ...classify(record, fileKind),
  ].filter((c) => hide.has(c));
  const hasResult = record.parts.some((p) => p.k === 'result');
  const withheld = new Set<WithholdCategory>(whole);
  const parts = record.parts.map((p): Part => {
    const reason: WithholdCategory | undefined = whole.length
      ? whole[0]
      : p.k === 'call' && hide.has('tool_inputs')
        ? 'tool_inputs'
        : (p.k === 'result' || (p.k === 'data' && hasResult)) && hide.has('tool_outputs')
          ? 'tool_outputs'
          : undefined;
    if (!reason) return p;
    withheld.add(reason);
    const { text: _text, data: _data, ...kept } = p;
    return { ...kept, state: OMITTED };
  });
  return { record: withheld.size ? { ...record, parts } : record, withheld: [...withheld] };
}

/** Workspace changes less their diffs when tool inputs or outputs are withheld: a diff shows both what a tool was asked to write and what it wrote. */
export function withholdChanges<T extends { changes: object[] }>(answer: T, hide: ReadonlySet<WithholdCategory>): T & { withheld: Counts } {
  const counts: Counts = {};
  if (!hide.has('tool_inputs') && !hide.has('tool_outputs')) return { ...answer, withheld: counts };
  const strip = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(strip);
    if (!v || typeof v !== 'object') return v;
    const o: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
      if (k === 'diff' || k === 'hunks') o[`${k}_state`] = OMITTED;
      else o[k] = strip(x);
    }
    return o;
  };
  const changes = answer.changes.map((c) => strip(c) as object);
  counts[hide.has('tool_outputs') ? 'tool_outputs' : 'tool_inputs'] = changes.length;
  return { ...answer, changes, withheld: counts };
}

/** A list row less its prompts (the first, the ones kept for the search, and a title taken from one) when prompts are withheld. */
export function withholdRow<T extends { first_prompt?: string; prompts?: string[]; title?: string; title_from?: string }>(
  row: T,
  hide: ReadonlySet<WithholdCategory>,
): T {
  if (!hide.has('user_prompts')) return row;
  const { first_prompt: _prompt, prompts: _prompts, ...rest } = row;
  const out = rest as T;
  if (row.title_from === 'prompt') {
    delete out.title;
    delete out.title_from;
  }
  return out;
}
