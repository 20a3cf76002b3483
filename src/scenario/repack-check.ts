/**
 * `repack_keeps_structure`: the root re-cut under the smallest budget (one record a file) keeps
 * every record, byte for byte and in order, verifies, and folds to the same structure. Sequence
 * numbers change in a repack, so nodes are compared by the records they stand on (source and
 * line), never by an id or attribute built from a landed position.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readSessionData } from '../formats/session-data/decode.js';
import type { EntityFrame, Ref } from '../formats/session-flow/types.js';
import { parseSession } from '../processors/assembler/parse.js';
import { loadChain } from '../storage/chain.js';
import { listLanded } from '../storage/landed-files.js';
import { repackSession } from '../storage/repack.js';
import { verifyRoot } from '../storage/verify.js';
import { verifyChains } from '../storage/verify-chain.js';

interface Violation {
  where: string;
  expected: unknown;
  got: unknown;
}

/** Each file group's record lines in order, keyed by what the header says the file holds. */
function recordLines(root: string, session: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const l of listLanded(root, session)) {
    const { header } = readSessionData(l.path);
    const key = [header.kind, header.src, header.stream ?? '', header.batch ?? ''].join(' ');
    const lines = readFileSync(l.path, 'utf8').split('\n');
    (out.get(key) ?? out.set(key, []).get(key)!).push(...lines.slice(1, lines.length - 2));
  }
  return out;
}

/** The fold as a multiset of position-free lines: a node by kind, its evidence and its parent's; a relation by type and ends. */
function structure(root: string, session: string): Map<string, number> {
  const where = new Map<string, string>();
  for (const l of listLanded(root, session)) {
    const { header, records } = readSessionData(l.path);
    records.forEach((r, i) => where.set(`${header.seq}/${i + 1}`, `${header.src}#${r.ord}`));
  }
  const evidence = (refs: Ref[]) => refs.map((r) => `${where.get(`${r.seq}/${r.row}`) ?? '?'}${r.block === undefined ? '' : `.${r.block}`}`).join(',');
  const all = [...loadChain(root, session).fold.entities.values()];
  const nodes = new Map(all.filter((e): e is Extract<EntityFrame, { t: 'node' }> => e.t === 'node').map((n) => [n.id, n]));
  const keys = new Map<string, string>();
  const keyOf = (id: string | undefined): string => {
    if (!id) return '-';
    const n = nodes.get(id);
    if (!n) return `(no node ${id})`;
    const refs = [...(n.ref ? [n.ref] : []), ...(n.refs ?? [])];
    // A node standing on no record is named by its id, which then carries no position.
    if (!keys.has(id)) keys.set(id, refs.length ? `${n.kind}@${evidence(refs)}` : `${n.kind}:${id}`);
    return keys.get(id)!;
  };
  const out = new Map<string, number>();
  const add = (k: string) => out.set(k, (out.get(k) ?? 0) + 1);
  for (const n of nodes.values()) add(`node ${keyOf(n.id)} under ${keyOf(n.parent)}`);
  for (const e of all) if (e.t === 'relation') add(`relation ${e.type} ${keyOf(e.from)} -> ${keyOf(e.to)}`);
  // A `resolved` entry records that an earlier round had it open: chain history, which one parse of the re-cut files has not got.
  for (const e of all) if (e.t === 'unresolved' && e.state !== 'resolved') add(`unresolved ${e.kind} ${e.state}`);
  return out;
}

/**
 * `alsoOnCopy` runs a further check over the re-cut root once it is parsed: the provider bodies
 * must rebuild there too, where every file and row they were listed at moved.
 */
export function repackKeepsStructure(dir: string, session: string, alsoOnCopy?: (dest: string) => Violation[]): Violation[] {
  const name = 'repack_keeps_structure';
  const dest = join(mkdtempSync(join(tmpdir(), 'aszcol-repack-')), 'root');
  try {
    repackSession(dir, dest, session, 1);
    parseSession({ root: dest, session, maxRoundBytes: 2 * 1024 * 1024 });
    const out: Violation[] = [];
    const [a, b] = [recordLines(dir, session), recordLines(dest, session)];
    for (const k of new Set([...a.keys(), ...b.keys()])) {
      const [x, y] = [a.get(k) ?? [], b.get(k) ?? []];
      if (x.length !== y.length || x.some((l, i) => l !== y[i]))
        out.push({ where: `${name}: records of ${k}`, expected: `${x.length} records`, got: `${y.length}, not byte-equal in order` });
    }
    for (const p of [...verifyRoot(dest).problems, ...verifyChains(dest).problems]) out.push({ where: `${name}: verify`, expected: 'no problem', got: p });
    const [sa, sb] = [structure(dir, session), structure(dest, session)];
    for (const k of new Set([...sa.keys(), ...sb.keys()]))
      if (sa.get(k) !== sb.get(k)) out.push({ where: `${name}: ${k}`, expected: sa.get(k) ?? 0, got: sb.get(k) ?? 0 });
    for (const v of alsoOnCopy?.(dest) ?? []) out.push({ ...v, where: `${name}: on the re-cut root: ${v.where}` });
    return out.slice(0, 20);
  } finally {
    rmSync(join(dest, '..'), { recursive: true, force: true });
  }
}
