/**
 * A conversation's shape, compared between two readings of it: the fold of a chain, or one
 * assembly of index entries. Each node is its kind, parent and attributes; relations count by type.
 */
import { assemble } from '../assemble/assemble.js';
import { canonical } from '../formats/session-flow/encode.js';
import type { Assembly, EntityFrame, NodeBody } from '../formats/session-flow/types.js';
import { loadChain } from '../storage/chain.js';
import type { IndexEntry } from '../storage/index.js';

export interface ShapeViolation {
  where: string;
  expected: unknown;
  got: unknown;
}

export interface Shape {
  nodes: Record<string, string>;
  rels: string;
}

type Node = Extract<EntityFrame, { t: 'node' }>;

function shapeOf(nodes: [string, Partial<Pick<NodeBody, 'kind' | 'parent' | 'attrs'>>][], relTypes: string[], omit: readonly string[]): Shape {
  const rels: Record<string, number> = {};
  for (const t of relTypes) rels[t] = (rels[t] ?? 0) + 1;
  const attrsOf = (n: Partial<Pick<NodeBody, 'attrs'>>) =>
    n.attrs && omit.length ? Object.fromEntries(Object.entries(n.attrs).filter(([k]) => !omit.includes(k))) : n.attrs;
  return { nodes: Object.fromEntries(nodes.map(([id, n]) => [id, canonical({ kind: n.kind, parent: n.parent, attrs: attrsOf(n) })])), rels: canonical(rels) };
}

/** The fold of a session's chain; `omit` leaves out attributes a comparison expects to differ. */
export function foldShape(root: string, session: string, omit: readonly string[] = []): Shape {
  const all = [...loadChain(root, session).fold.entities.values()];
  const nodes = all.filter((e): e is Node => e.t === 'node').map((n): [string, Node] => [n.id, n]);
  return shapeOf(
    nodes,
    all.flatMap((r) => (r.t === 'relation' ? [r.type!] : [])),
    omit,
  );
}

/** One assembly's shape, as a full parse would fold to. */
export function assemblyShape(a: Assembly): Shape {
  return shapeOf(
    [...a.nodes.entries()],
    [...a.relations.values()].map((r) => r.type),
    [],
  );
}

/** Assembles index entries through the landed sequence the chain's head covers, as one full parse would. */
export function assembleThroughHead(root: string, session: string, entries: readonly IndexEntry[]): Shape {
  const through = loadChain(root, session).fold.head?.through_seq ?? 0;
  return assemblyShape(assemble({ session, entries: entries.filter((e) => e.seq <= through) }));
}

export function compareShapes(where: string, want: Shape, got: Shape): ShapeViolation[] {
  const out: ShapeViolation[] = [];
  for (const id of new Set([...Object.keys(want.nodes), ...Object.keys(got.nodes)]))
    if (want.nodes[id] !== got.nodes[id]) out.push({ where: `${where}: ${id}`, expected: want.nodes[id] ?? '(absent)', got: got.nodes[id] ?? '(absent)' });
  if (want.rels !== got.rels) out.push({ where: `${where}: relations`, expected: want.rels, got: got.rels });
  return out;
}
