/**
 * Whether a session's chain already covers all of its landed evidence, found without reading a
 * landed file, the index or a round: the chain's cached head, the index's reach and the landed
 * files' names. A settled session would get no round from a parse, so a parse with nothing new
 * costs a few small reads per session.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PARSER, POLICY } from '../../formats/session-flow/types.js';
import { chainDir, listRounds, roundName, roundsDir } from '../../storage/chain.js';
import { readIndexState } from '../../storage/index.js';
import { parseKv } from '../../storage/kv-text.js';
import { highestSeqOnDisk, listDir } from '../../storage/layout.js';

export interface SettledChain {
  head: number;
  headDigest: string;
  throughSeq: number;
}

/**
 * The chain's head when nothing landed past it: its cached state names this parser and policy, its
 * head round is on disk and is the newest there, and both it and the index reach the highest landed
 * sequence, and nothing a killed parser left is in the chain. Undefined otherwise, and the caller
 * parses as usual.
 */
export function settledChain(root: string, session: string): SettledChain | undefined {
  let m: Map<string, string>;
  try {
    m = parseKv(readFileSync(join(chainDir(root, session), 'conversation.state'), 'utf8'));
  } catch {
    return undefined;
  }
  const head = Number(m.get('head'));
  const throughSeq = Number(m.get('through_seq'));
  const headDigest = m.get('head_digest') ?? '';
  if (m.get('parser') !== PARSER || m.get('policy') !== POLICY || !Number.isInteger(head) || head < 1 || !Number.isInteger(throughSeq) || !headDigest)
    return undefined;
  const highest = highestSeqOnDisk(root, session);
  if (throughSeq < highest || (readIndexState(root, session)?.indexedSeq ?? -1) < highest) return undefined;
  // A temporary or a lock left in the chain is the full parse's to sweep.
  const leftover = (name: string) => name.startsWith('.tmp-') || name === '.lock';
  if (listDir(chainDir(root, session)).some(leftover) || listDir(roundsDir(root, session)).some(leftover)) return undefined;
  // The rounds directory is the authority: the cached head must be its newest round.
  const rounds = listRounds(root, session);
  if (rounds[rounds.length - 1]?.round !== head || rounds.filter((r) => r.round === head).length !== 1) return undefined;
  if (!existsSync(join(roundsDir(root, session), roundName(head, headDigest)))) return undefined;
  return { head, headDigest, throughSeq };
}
