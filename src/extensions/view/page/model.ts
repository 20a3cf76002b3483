/** The document as the page looks things up in it, and what the reader has open. */
import type { ViewDocument, ViewNode, ViewSegment, ViewStream, ViewUnresolved } from '../../../formats/view/types.js';

export interface Entry {
  node: ViewNode;
  /** The talk tree it is in, or undefined for a loose tree. */
  talk?: string;
  /** The root of its tree (a talk, or a loose root). */
  root: string;
  depth: number;
}

export interface Model {
  id: string;
  doc: ViewDocument;
  nodes: Map<string, Entry>;
  streams: Map<string, ViewStream>;
  segments: Map<string, ViewSegment>;
  /** Unresolved entries by the node they are about, where one exists. */
  unresolvedAt: Map<string, ViewUnresolved[]>;
  /** Unresolved entries that name no node of the document. */
  unplaced: ViewUnresolved[];
  talkNo: Map<string, number>;
}

export interface UiState {
  /** Talks the reader opened. */
  open: Set<string>;
  /** Nodes inside a talk the reader closed (everything below a talk is open by default). */
  closed: Set<string>;
  selected?: string;
  inspectorTab: 'details' | 'relations' | 'evidence' | 'raw' | 'execution' | 'prompt';
  leftTab: 'transcript' | 'changes' | 'streams' | 'relations' | 'unresolved' | 'files';
  evidence: number;
}

/** The node an unresolved entry is about, by the id the assembler gives that node. */
function nodeFor(u: ViewUnresolved, m: Pick<Model, 'nodes' | 'streams'>): string | undefined {
  const part = u.ref.replace(/\//g, '_');
  switch (u.kind) {
    case 'tool_result':
      return m.nodes.has(`tool/${part}`) ? `tool/${part}` : undefined;
    case 'child_stream':
    case 'notified_child':
    case 'spawn_of_child': {
      const s = m.streams.get(`stream/${part}`);
      return s?.talk;
    }
    default:
      return undefined;
  }
}

export function indexDoc(id: string, doc: ViewDocument): Model {
  const nodes = new Map<string, Entry>();
  const walk = (n: ViewNode, talk: string | undefined, root: string, depth: number) => {
    nodes.set(n.id, { node: n, talk, root, depth });
    for (const c of n.children ?? []) walk(c, talk, root, depth + 1);
  };
  const talkNo = new Map<string, number>();
  doc.talks.forEach((t, i) => {
    talkNo.set(t.id, i + 1);
    walk(t, t.id, t.id, 0);
  });
  for (const l of doc.loose) walk(l, undefined, l.id, 0);
  const streams = new Map(doc.streams.map((s) => [s.id, s]));
  const segments = new Map(doc.segments.map((s) => [s.id, s]));
  const m: Model = { id, doc, nodes, streams, segments, unresolvedAt: new Map(), unplaced: [], talkNo };
  for (const u of doc.unresolved) {
    const at = nodeFor(u, m);
    if (at) (m.unresolvedAt.get(at) ?? m.unresolvedAt.set(at, []).get(at)!).push(u);
    else m.unplaced.push(u);
  }
  return m;
}

/** Open unresolved entries anywhere in a tree. */
export function openUnresolvedIn(m: Model, n: ViewNode): number {
  let c = (m.unresolvedAt.get(n.id) ?? []).filter((u) => u.state === 'open').length;
  for (const k of n.children ?? []) c += openUnresolvedIn(m, k);
  return c;
}

export function streamLabel(m: Model, stream: string | undefined): string {
  if (!stream) return '';
  if (stream === 'main') return 'main';
  const s = m.streams.get(`stream/${stream}`);
  return s?.label ? `${s.label}` : stream;
}
