/**
 * The text tree `aszcol conversation` prints: the main stream first and the helpers after it,
 * each person's prompt as a trimmed line of its text, and the tokens of every call summed per
 * talk and per stream. Pure: it takes the fold's nodes and, when it could be built, the view
 * document that holds the texts and the usage.
 */
import type { EntityFrame } from '../formats/session-flow/types.js';
import type { ViewDocument, ViewNode, ViewUsage } from '../formats/view/types.js';
import { trimPrompt } from '../extensions/view/row-facts.js';

export type NodeFrame = Extract<EntityFrame, { t: 'node' }>;

/** How many characters of a prompt a line shows. */
export const PROMPT_LINE_CHARS = 100;
const SHOWN_ATTRS = ['name', 'result', 'trigger', 'usage', 'fragments', 'role', 'label', 'state'];

export interface TokenSum {
  in: number;
  out: number;
  cache_read: number;
  cache_write: number;
  /** How many calls reported usage; none means the sum is unknown, not zero. */
  calls: number;
}

const emptySum = (): TokenSum => ({ in: 0, out: 0, cache_read: 0, cache_write: 0, calls: 0 });

function add(sum: TokenSum, u: ViewUsage): void {
  sum.in += u.in ?? 0;
  sum.out += u.out ?? 0;
  sum.cache_read += u.cache_read ?? 0;
  sum.cache_write += u.cache_write ?? 0;
  sum.calls++;
}

export function tokenWords(s: TokenSum): string {
  if (!s.calls) return 'tokens unknown (no call reported usage)';
  return `tokens in ${s.in} out ${s.out} cache_read ${s.cache_read} cache_write ${s.cache_write}`;
}

/** Every view node by id, so the fold's nodes can be printed with their text and usage. */
export function viewNodesById(doc: ViewDocument | undefined): Map<string, ViewNode> {
  const byId = new Map<string, ViewNode>();
  const visit = (nodes: ViewNode[] | undefined) => {
    for (const n of nodes ?? []) {
      byId.set(n.id, n);
      visit(n.children);
    }
  };
  if (doc) visit([...doc.talks, ...doc.loose]);
  return byId;
}

/** The main stream before every helper; helpers in the order they started; anything else after. */
function rootOrder(a: NodeFrame, b: NodeFrame): number {
  const rank = (n: NodeFrame) => (n.kind === 'stream' ? (n.attrs?.role === 'main' ? 0 : 1) : n.kind === 'session' ? -1 : 2);
  return rank(a) - rank(b) || byPlace(a, b);
}

function byPlace(a: NodeFrame, b: NodeFrame): number {
  return (a.ref?.seq ?? 0) - (b.ref?.seq ?? 0) || (a.ref?.row ?? 0) - (b.ref?.row ?? 0) || (a.ref?.block ?? 0) - (b.ref?.block ?? 0) || (a.id < b.id ? -1 : 1);
}

export interface TreeOptions {
  /** The name a kind is printed under (unified, native or both). */
  name: (kind: string) => string;
  views: Map<string, ViewNode>;
}

/** The tree's lines, and the token sums of every talk and stream it printed. */
export function treeLines(nodes: NodeFrame[], opts: TreeOptions): string[] {
  const children = new Map<string, NodeFrame[]>();
  for (const n of nodes) if (n.parent) (children.get(n.parent) ?? children.set(n.parent, []).get(n.parent)!).push(n);
  for (const list of children.values()) list.sort(byPlace);
  const sums = new Map<string, TokenSum>();
  const sumOf = (id: string): TokenSum => {
    const known = sums.get(id);
    if (known) return known;
    const s = emptySum();
    const usage = opts.views.get(id)?.usage;
    if (usage) add(s, usage);
    for (const c of children.get(id) ?? []) {
      const cs = sumOf(c.id);
      s.in += cs.in;
      s.out += cs.out;
      s.cache_read += cs.cache_read;
      s.cache_write += cs.cache_write;
      s.calls += cs.calls;
    }
    sums.set(id, s);
    return s;
  };
  const lines: string[] = [];
  const print = (n: NodeFrame, depth: number) => {
    const attrs = Object.entries(n.attrs ?? {})
      .filter(([k]) => SHOWN_ATTRS.includes(k))
      .map(([k, v]) => `${k}=${typeof v === 'object' ? JSON.stringify(v) : String(v)}`)
      .join(' ');
    let line = `${'  '.repeat(depth)}${opts.name(n.kind!)}  ${n.id}${attrs ? '  ' + attrs : ''}`;
    const view = opts.views.get(n.id);
    if (n.kind === 'message.external' && view?.text?.trim()) line += `  "${trimPrompt(view.text, PROMPT_LINE_CHARS)}"`;
    if (n.kind === 'llm.call' && view?.usage) line += `  ${tokenWords(sumOf(n.id))}`;
    if (n.kind === 'talk' || n.kind === 'stream') line += `  ${tokenWords(sumOf(n.id))}`;
    lines.push(line);
    const kids = children.get(n.id) ?? [];
    // Under the session, too, the main stream leads.
    for (const c of n.kind === 'session' ? [...kids].sort(rootOrder) : kids) print(c, depth + 1);
  };
  for (const root of nodes.filter((n) => !n.parent).sort(rootOrder)) print(root, 0);
  return lines;
}

/** The whole conversation's tokens: every call that reported usage, once. */
export function treeTotal(views: Map<string, ViewNode>): TokenSum {
  const s = emptySum();
  for (const v of views.values()) if (v.kind === 'llm.call' && v.usage) add(s, v.usage);
  return s;
}
