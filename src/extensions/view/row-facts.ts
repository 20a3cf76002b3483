/**
 * What a list row says beyond the head round's header: the first prompt (the title when the
 * runtime gave none), the project, the models, the token sums, the tools, and the prompts a
 * search looks through. Worked out from a built document, so the catalog does it once per head.
 */
import type { ViewInput } from '../../formats/view/build.js';
import type { ViewDocument, ViewNode } from '../../formats/view/types.js';
import { listLanded } from '../../storage/landed-files.js';
import { projectOfLanded } from '../../storage/session-project.js';

/** A title from a prompt: one line, whitespace collapsed, about this many characters. */
export const TITLE_CHARS = 80;
/** Each prompt kept for the search, and how many: enough to find a conversation, never its whole text. */
const PROMPT_CHARS = 200;
const MAX_PROMPTS = 40;

export interface RowFacts {
  first_prompt?: string;
  project?: string;
  models?: string[];
  tokens_in?: number;
  tokens_out?: number;
  /** Cache reads and cache writes together. */
  tokens_cache?: number;
  tools?: number;
  prompts?: string[];
  /** Why the facts could not be worked out (the chain or its landed files do not read). */
  unreadable?: string;
}

/** One line, whitespace collapsed, cut at a word where one is near and marked with an ellipsis. */
export function trimPrompt(text: string, max = TITLE_CHARS): string {
  const t = text.replace(/\s+/g, ' ').trim();
  if (t.length <= max) return t;
  const cut = t.slice(0, max - 1);
  const space = cut.lastIndexOf(' ');
  return (space > max * 0.6 ? cut.slice(0, space) : cut).trimEnd() + '…';
}

/** The first person's message of a talk, in the talk's own order. */
function firstExternal(n: ViewNode): string | undefined {
  for (const c of n.children ?? []) {
    if (c.kind === 'message.external' && c.text?.trim()) return c.text;
    const inner = firstExternal(c);
    if (inner) return inner;
  }
  return undefined;
}

/** The prompts of the main stream's talks, in order; a talk a child opened is not a prompt anyone typed. */
function mainPrompts(doc: ViewDocument): string[] {
  const out: string[] = [];
  for (const t of doc.talks) {
    if (t.child || (t.stream !== undefined && t.stream !== 'main')) continue;
    const text = firstExternal(t);
    if (text && !/^\s*<[a-z-]+>/.test(text)) out.push(text);
  }
  return out;
}

function walk(nodes: ViewNode[], visit: (n: ViewNode) => void): void {
  for (const n of nodes) {
    visit(n);
    if (n.children) walk(n.children, visit);
  }
}

export function rowFacts(root: string, input: ViewInput, doc: ViewDocument): RowFacts {
  const facts: RowFacts = {};
  const prompts = mainPrompts(doc);
  if (prompts.length) {
    facts.first_prompt = trimPrompt(prompts[0]!);
    facts.prompts = prompts.slice(0, MAX_PROMPTS).map((p) => trimPrompt(p, PROMPT_CHARS));
  }
  const session = doc.sessions[0] ?? input.fold.session;
  const project = session ? projectOfLanded(listLanded(root, session)) : undefined;
  if (project) facts.project = project;
  const models = new Set<string>();
  let tin = 0,
    tout = 0,
    tcache = 0,
    tools = 0,
    usages = 0;
  walk([...doc.talks, ...doc.loose], (n) => {
    if (n.kind === 'tool' || n.kind === 'agent.call') tools++;
    if (n.kind !== 'llm.call') return;
    const model = n.ref ? input.records.record(n.ref.seq, n.ref.row)?.model : undefined;
    if (model && !model.startsWith('<')) models.add(model);
    if (!n.usage) return;
    usages++;
    tin += n.usage.in ?? 0;
    tout += n.usage.out ?? 0;
    tcache += (n.usage.cache_read ?? 0) + (n.usage.cache_write ?? 0);
  });
  if (models.size) facts.models = [...models].sort();
  // No call carried usage: the sums are unknown, not zero.
  if (usages) Object.assign(facts, { tokens_in: tin, tokens_out: tout, tokens_cache: tcache });
  facts.tools = tools;
  return facts;
}
