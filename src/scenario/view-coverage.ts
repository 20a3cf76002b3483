/**
 * `view_covers_the_session`: the asz.view document, built over the finished root, holds the whole
 * session — every round verified, every landed file and round with its digest as on disk, every
 * talk and what hangs under it in the tree, the session's own range, and a verified state.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { buildView } from '../formats/view/build.js';
import type { ViewNode } from '../formats/view/types.js';
import type { EntityFrame } from '../formats/session-flow/types.js';
import { loadViewInput } from '../extensions/view/load.js';
import { listRounds, loadChain } from '../storage/chain.js';
import { listLanded } from '../storage/landed-files.js';

export interface CoverageViolation {
  where: string;
  expected: unknown;
  got: unknown;
}

type Node = Extract<EntityFrame, { t: 'node' }>;

const sha256 = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

function treeIds(nodes: ViewNode[], into: Set<string>): Set<string> {
  for (const n of nodes) {
    into.add(n.id);
    if (n.children) treeIds(n.children, into);
  }
  return into;
}

export function viewCoverage(dir: string, session: string): CoverageViolation[] {
  const where = 'view_covers_the_session';
  const out: CoverageViolation[] = [];
  const doc = buildView(loadViewInput(dir, session));
  if (doc.summary.state !== 'verified')
    out.push({ where: `${where}: state`, expected: 'verified', got: `${doc.summary.state}: ${doc.summary.problems.join('; ')}` });

  const rounds = listRounds(dir, session);
  const unverified = doc.rounds.filter((r) => !r.verified).map((r) => r.round);
  if (doc.rounds.length !== rounds.length || unverified.length)
    out.push({ where: `${where}: rounds`, expected: `${rounds.length} verified`, got: `${doc.rounds.length}, unverified: ${unverified.join(', ') || 'none'}` });

  const files = new Map(doc.files.map((f) => [f.file, f]));
  const onDisk = [...listLanded(dir, session).map((l) => l.path), ...rounds.map((r) => r.path)];
  for (const path of onDisk) {
    const rel = relative(dir, path);
    const f = files.get(rel);
    const digest = sha256(join(dir, rel));
    if (!f) out.push({ where: `${where}: files`, expected: rel, got: '(absent)' });
    else if (f.digest !== digest || !f.verified)
      out.push({ where: `${where}: ${rel}`, expected: { digest, verified: true }, got: { digest: f.digest, verified: f.verified } });
  }
  if (doc.files.length !== onDisk.length) out.push({ where: `${where}: files`, expected: onDisk.length, got: doc.files.length });

  // Every talk of the fold and every node beneath it is in the document's tree.
  const fold = [...loadChain(dir, session).fold.entities.values()].filter((e): e is Node => e.t === 'node');
  const parentOf = new Map(fold.map((n) => [n.id, n.parent]));
  const underTalk = (n: Node) => {
    for (let id: string | undefined = n.id, hops = 0; id && hops < 64; id = parentOf.get(id), hops++)
      if (fold.find((x) => x.id === id)?.kind === 'talk') return true;
    return false;
  };
  const shown = treeIds([...doc.talks, ...doc.loose], new Set());
  const missing = fold.filter((n) => underTalk(n) && !shown.has(n.id)).map((n) => n.id);
  if (missing.length) out.push({ where: `${where}: tree`, expected: 'every talk and what it holds', got: `missing ${missing.slice(0, 10).join(', ')}` });

  const s = fold.find((n) => n.kind === 'session');
  const ms = (v: unknown) => (typeof v === 'string' ? Date.parse(v) : undefined);
  const range = { from: ms(s?.attrs?.from_time), to: ms(s?.attrs?.through_time) };
  if (doc.summary.from !== range.from || doc.summary.to !== range.to)
    out.push({ where: `${where}: range`, expected: range, got: { from: doc.summary.from, to: doc.summary.to } });
  return out;
}
