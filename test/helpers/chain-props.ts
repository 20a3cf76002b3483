import { expect } from '@jest/globals';
import { cpSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { parseSession } from '../../src/processors/assembler/parse.js';
import { listLanded } from '../../src/storage/landed-files.js';
import { roundsDir } from '../../src/storage/chain.js';
import { canonical } from '../../src/formats/session-flow/encode.js';
import { foldOf } from './parse.js';
import { tempDir } from './tmp.js';

/** A copy of a session's landed files alone (no index, no chain), in a fresh root. */
function freshCopy(root: string, session: string): string {
  const dest = join(tempDir('aszcol-copy-'), 'data');
  cpSync(join(root, session), join(dest, session), { recursive: true });
  rmSync(join(dest, session, 'index'), { recursive: true, force: true });
  return dest;
}

/** What a fold says, without revisions: every node's kind, parent and attributes, and relation counts. */
export function foldShape(root: string, session: string) {
  const f = foldOf(root, session);
  const nodes = Object.fromEntries(
    f.nodes.map((n) => [n.id, canonical({ kind: n.kind, parent: n.parent, attrs: n.attrs, stream: n.stream, ref: n.ref, refs: n.refs })]),
  );
  const relations: Record<string, number> = {};
  for (const r of f.relations) relations[r.type!] = (relations[r.type!] ?? 0) + 1;
  const unresolved = Object.fromEntries(f.unresolved.map((u) => [u.id, u.state]));
  return { nodes, relations, unresolved };
}

const roundBytes = (root: string, session: string) =>
  readdirSync(roundsDir(root, session))
    .sort()
    .map((n) => readFileSync(join(roundsDir(root, session), n), 'utf8'));

/**
 * The chain properties every test session must hold: two parses of the same landed files write
 * identical bytes; the fold of the existing chain equals one full parse; and so does the fold of
 * a chain built one landed file per round (a 1-byte budget).
 */
export function expectChainProperties(root: string, session: string): void {
  const a = freshCopy(root, session);
  const b = freshCopy(root, session);
  for (const r of [a, b]) expect(parseSession({ root: r, session, maxRoundBytes: 2 * 1024 * 1024 }).status).toBe('written');
  expect(roundBytes(a, session)).toEqual(roundBytes(b, session));
  const full = foldShape(a, session);
  const existing = foldShape(root, session);
  expect(existing.nodes).toEqual(full.nodes);
  expect(existing.relations).toEqual(full.relations);
  const one = freshCopy(root, session);
  const r = parseSession({ root: one, session, maxRoundBytes: 1 });
  expect(r.rounds).toHaveLength(listLanded(one, session).length);
  const perFile = foldShape(one, session);
  expect(perFile.nodes).toEqual(full.nodes);
  expect(perFile.relations).toEqual(full.relations);
  for (const [id, state] of Object.entries(full.unresolved)) if (state === 'open') expect(perFile.unresolved[id]).toBe('open');
  expect(parseSession({ root: a, session, maxRoundBytes: 2 * 1024 * 1024 }).status).toBe('unchanged');
}
