/**
 * `bundle`: a session's landed files and rounds are enough on their own. Copied without the
 * derived index, the session's state, the conversation's state or any cursor, the chain folds to
 * the same conversation, and re-deriving it from the landed files alone (the index rebuilt from
 * them) neither writes a round nor assembles anything other than the fold — asz's parse writes a
 * round whenever that assembly differs, so a landed file deleted by hand breaks the bundle. What a
 * person hands over as a session is exactly those files, so nothing only the collector holds may
 * be needed to read it.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { canonical } from '../formats/session-flow/encode.js';
import { parseSession } from '../processors/assembler/parse.js';
import { loadChain, roundsDir } from '../storage/chain.js';
import { landedDirs } from '../storage/layout.js';
import { loadIndex } from '../storage/index.js';
import { assembleThroughHead, compareShapes, foldShape } from './fold-shape.js';

interface Violation {
  where: string;
  expected: unknown;
  got: unknown;
}

/** The fold's identity: how many rounds, the head's digest and every entity, canonical. */
function foldOf(root: string, session: string): { rounds: number; head: string; entities: string } {
  const { fold } = loadChain(root, session);
  const entities = [...fold.entities.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, e]) => e);
  return { rounds: fold.rounds, head: fold.headDigest ?? '(no round)', entities: canonical(entities) };
}

/** Copies only the landed files and the rounds of one session into a fresh root. */
function copyBundle(root: string, session: string, into: string): void {
  for (const { dir } of landedDirs(root, session)) cpSync(dir, join(into, relative(root, dir)), { recursive: true });
  cpSync(roundsDir(root, session), join(into, relative(root, roundsDir(root, session))), { recursive: true });
}

export function bundleSelfSufficient(root: string, session: string): Violation[] {
  const scratch = mkdtempSync(join(tmpdir(), 'aszcol-bundle-'));
  try {
    const into = join(scratch, 'data');
    copyBundle(root, session, into);
    const out: Violation[] = [];
    const [before, after] = [foldOf(root, session), foldOf(into, session)];
    if (canonical(before) !== canonical(after))
      out.push({
        where: 'bundle: the fold without index and state',
        expected: `${before.rounds} rounds, head ${before.head}`,
        got: before.entities === after.entities ? `${after.rounds} rounds, head ${after.head}` : 'other entities',
      });
    try {
      const again = parseSession({ root: into, session, maxRoundBytes: 2 ** 40 });
      if (again.status === 'written')
        out.push({ where: 'bundle: re-deriving from the landed files', expected: 'nothing new to write', got: `${again.rounds.length} round(s) written` });
      else {
        const rebuilt = loadIndex(into, session)?.entries ?? [];
        const changed = compareShapes('bundle: re-deriving from the landed files', foldShape(into, session), assembleThroughHead(into, session, rebuilt));
        if (changed.length) out.push({ ...changed[0]!, where: `${changed[0]!.where} (${changed.length} difference(s) from the fold)` });
      }
    } catch (err) {
      out.push({ where: 'bundle: re-deriving from the landed files', expected: 'a parse that writes nothing', got: (err as Error).message });
    }
    return out;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
