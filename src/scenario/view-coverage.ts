/**
 * `view_covers_the_session`: the asz.view document, built over the finished root, holds the whole
 * session — every round, every landed file and round with its digest as on disk, every talk and
 * what hangs under it in the tree, the session's own range. Its state, problem count and each
 * round's `verified` say what the chain check (`verify`) says of the same root, as asz holds them:
 * a root a person damaged passes when the document reports the damage, and fails when it hides it.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { buildView } from '../formats/view/build.js';
import type { ViewDocument, ViewNode } from '../formats/view/types.js';
import type { EntityFrame } from '../formats/session-flow/types.js';
import { loadViewInput } from '../extensions/view/load.js';
import { listRounds, loadChain } from '../storage/chain.js';
import { listLanded } from '../storage/landed-files.js';
import { verifyChains } from '../storage/verify-chain.js';

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

/** How the checker gets the document: as `aszcol conversation` builds it. */
export type ViewDocumentOf = (dir: string, session: string) => ViewDocument;

const documentOf: ViewDocumentOf = (dir, session) => buildView(loadViewInput(dir, session));

export function viewCoverage(dir: string, session: string, build: ViewDocumentOf = documentOf): CoverageViolation[] {
  const where = 'view_covers_the_session';
  const out: CoverageViolation[] = [];
  const doc = build(dir, session);
  const chain = verifyChains(dir, session);
  const verdicts = new Map(chain.verdicts.map((v) => [v.round, v]));
  const verifyState = chain.verdicts.some((v) => v.damaged) ? 'mismatch' : chain.problems.length ? 'incomplete' : 'verified';
  if (doc.summary.state !== verifyState)
    out.push({ where: `${where}: state`, expected: `${verifyState}, as verify says`, got: `${doc.summary.state}: ${doc.summary.problems.join('; ')}` });
  if (doc.summary.problems.length !== chain.problems.length) out.push({ where: `${where}: problems`, expected: chain.problems, got: doc.summary.problems });

  const rounds = listRounds(dir, session);
  if (doc.rounds.length !== rounds.length) out.push({ where: `${where}: rounds`, expected: rounds.length, got: doc.rounds.length });
  for (const r of doc.rounds) {
    const verified = verdicts.get(r.round)?.problems === 0;
    if (r.verified !== verified) out.push({ where: `${where}: round ${r.round} verified`, expected: verified, got: r.verified });
  }

  const files = new Map(doc.files.map((f) => [f.file, f]));
  // A file is listed as it is on disk; whether the chain holds together is the rounds' verdict above.
  const onDisk = [
    ...listLanded(dir, session).map((l) => ({ path: l.path, seq: l.seq as number | undefined })),
    ...rounds.map((r) => ({ path: r.path, seq: undefined })),
  ];
  for (const { path, seq } of onDisk) {
    const rel = relative(dir, path);
    const f = files.get(rel);
    const digest = sha256(join(dir, rel));
    if (!f) out.push({ where: `${where}: files`, expected: rel, got: '(absent)' });
    else if (f.digest !== digest || f.seq !== seq) out.push({ where: `${where}: ${rel}`, expected: { digest, seq }, got: { digest: f.digest, seq: f.seq } });
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
