import { AszError } from '../../util/errors.js';
import type { EntityFrame, Round, RoundHeader } from './types.js';

/** The conversation as of a round: every live entity by id, and the head's header. */
export interface Fold {
  head?: RoundHeader;
  headDigest?: string;
  rounds: number;
  /** Live entities (tombstoned ones are removed). Resolved unresolved entries stay. */
  entities: Map<string, EntityFrame>;
  /** For the first round's interpretation: a chain never mixes parsers or policies. */
  parser?: string;
  policy?: string;
  session?: string;
  conversation?: string;
}

export function emptyFold(): Fold {
  return { rounds: 0, entities: new Map() };
}

/**
 * Applies one round. It must carry the next number, name the previous digest, and keep the
 * chain's conversation, session, parser and policy; anything else is refused, not folded.
 */
export function applyRound(fold: Fold, round: Round, where = '(round)'): void {
  const h = round.header;
  if (h.round !== fold.rounds + 1) throw new AszError(`round ${h.round} does not follow round ${fold.rounds}`, where);
  if (fold.rounds > 0) {
    if (h.previous !== fold.headDigest) throw new AszError(`previous ${h.previous} is not the digest of round ${fold.rounds} (${fold.headDigest})`, where);
    for (const k of ['conversation', 'session', 'parser', 'policy'] as const) {
      if (h[k] !== fold[k]) throw new AszError(`${k} ${JSON.stringify(h[k])} differs from the chain's ${JSON.stringify(fold[k])}`, where);
    }
  } else {
    fold.conversation = h.conversation;
    fold.session = h.session;
    fold.parser = h.parser;
    fold.policy = h.policy;
  }
  for (const f of round.frames) {
    const prev = fold.entities.get(f.id);
    if (prev && prev.revision > f.revision) continue;
    if (f.tombstone) fold.entities.delete(f.id);
    else fold.entities.set(f.id, f);
  }
  fold.rounds = h.round;
  fold.head = h;
  fold.headDigest = round.commit.digest;
}

export function foldRounds(rounds: Round[]): Fold {
  const f = emptyFold();
  for (const r of rounds) applyRound(f, r);
  return f;
}
