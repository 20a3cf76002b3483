import { parseSession } from '../../src/processors/assembler/parse.js';
import { loadChain } from '../../src/storage/chain.js';
import type { EntityFrame } from '../../src/formats/session-flow/types.js';
import type { Bench } from './collect.js';

export type NodeFrame = Extract<EntityFrame, { t: 'node' }>;
export type RelFrame = Extract<EntityFrame, { t: 'relation' }>;
export type UnresFrame = Extract<EntityFrame, { t: 'unresolved' }>;

/** Collects and parses a bench root, then folds its chain. */
export function collectAndParse(b: Bench, session: string, maxRoundBytes = 2 * 1024 * 1024) {
  const pass = b.pass();
  if (pass.errors.length) throw new Error(JSON.stringify(pass.errors));
  const parsed = parseSession({ root: b.root, session, maxRoundBytes });
  return { pass, parsed, ...foldOf(b.root, session) };
}

export function foldOf(root: string, session: string) {
  const chain = loadChain(root, session);
  const all = [...chain.fold.entities.values()];
  const nodes = all.filter((e): e is NodeFrame => e.t === 'node');
  const relations = all.filter((e): e is RelFrame => e.t === 'relation');
  const unresolved = all.filter((e): e is UnresFrame => e.t === 'unresolved');
  const kinds: Record<string, number> = {};
  for (const n of nodes) kinds[n.kind!] = (kinds[n.kind!] ?? 0) + 1;
  const rel = (type: string) => relations.filter((r) => r.type === type);
  const node = (id: string) => nodes.find((n) => n.id === id);
  return { chain, nodes, relations, unresolved, kinds, rel, node };
}
