import { readFileSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { decodeRoundBytes } from '../formats/session-flow/decode.js';
import { applyRound, emptyFold, type Fold } from '../formats/session-flow/fold.js';
import type { Round } from '../formats/session-flow/types.js';
import { formatKv } from './kv-text.js';
import { replaceAtomically } from './write-once.js';
import { ROOT_NAMES } from './entry-names.js';

export const CONVERSATIONS = ROOT_NAMES.conversations;
export const chainDir = (root: string, conversation: string) => join(root, CONVERSATIONS, conversation);
export const roundsDir = (root: string, conversation: string) => join(chainDir(root, conversation), 'rounds');
export const ROUND_NAME = /^r(\d{6,})-([0-9a-f]{12})\.sf$/;

export function roundName(round: number, digest: string): string {
  return `r${String(round).padStart(6, '0')}-${digest.slice(0, 12)}.sf`;
}

/** The round files of a chain in round order. The directory is the authority, not the state file. */
export function listRounds(root: string, conversation: string): { round: number; path: string; name: string }[] {
  let names: string[];
  try {
    names = readdirSync(roundsDir(root, conversation));
  } catch {
    return [];
  }
  const out: { round: number; path: string; name: string }[] = [];
  for (const name of names) {
    const m = ROUND_NAME.exec(name);
    if (m) out.push({ round: Number(m[1]), path: join(roundsDir(root, conversation), name), name });
  }
  return out.sort((a, b) => a.round - b.round || (a.name < b.name ? -1 : 1));
}

export function listConversations(root: string): string[] {
  try {
    return readdirSync(join(root, CONVERSATIONS), { withFileTypes: true })
      .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
}

/**
 * Reads and folds a whole chain with the strict reader. An empty round file is a writer's
 * reservation: older than a minute it is removed (when `sweep`), younger it is skipped.
 */
export function loadChain(root: string, conversation: string, opts: { sweep?: boolean } = {}): { fold: Fold; rounds: Round[]; paths: string[] } {
  const fold = emptyFold();
  const rounds: Round[] = [];
  const paths: string[] = [];
  for (const r of listRounds(root, conversation)) {
    const st = statSync(r.path);
    if (st.size === 0) {
      if (opts.sweep && Date.now() - st.mtimeMs > 60_000)
        try {
          unlinkSync(r.path);
        } catch {
          /* ignore */
        }
      continue;
    }
    const round = decodeRoundBytes(readFileSync(r.path), r.path);
    applyRound(fold, round, r.path);
    rounds.push(round);
    paths.push(r.path);
  }
  return { fold, rounds, paths };
}

/** A cache of the head, outside every digest: the rounds directory is what counts. */
export function saveConversationState(
  root: string,
  conversation: string,
  s: { head: number; headDigest: string; throughSeq: number; inputDigest: string; parser: string; policy: string },
): void {
  replaceAtomically(
    join(chainDir(root, conversation), 'conversation.state'),
    formatKv([
      ['schema', 1],
      ['head', s.head],
      ['head_digest', s.headDigest],
      ['through_seq', s.throughSeq],
      ['input_digest', s.inputDigest],
      ['parser', s.parser],
      ['policy', s.policy],
      ['updated_at', new Date().toISOString()],
    ]),
    { sync: false },
  );
}
