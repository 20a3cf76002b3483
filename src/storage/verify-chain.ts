import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { decodeRoundBytes } from '../formats/session-flow/decode.js';
import { roundLosses } from '../formats/session-flow/round-losses.js';
import { listConversations, listRounds } from './chain.js';
import { listLanded } from './landed-files.js';

export interface ChainReport {
  chains: number;
  rounds: number;
  problems: string[];
  /** Each round's own verdict, so a reader can hold a document's per-round state to it. */
  verdicts: RoundVerdict[];
}

export interface RoundVerdict {
  conversation: string;
  round: number;
  problems: number;
  /** The round or the evidence it names changed (a mismatch), not merely something gone (incomplete). */
  damaged: boolean;
}

/**
 * The six checks on every round: none missing before it; `previous` is the digest of the round
 * before; its own digest and every reading rule hold; `from_seq` continues the previous
 * `through_seq` (the one check no digest can make: skipped evidence); the landed files it consumed
 * are still on disk and its input digest recomputes from them (`roundLosses`: a lost file counts
 * once, at the round that consumed it).
 */
export function verifyChains(root: string, only?: string): ChainReport {
  const r: ChainReport = { chains: 0, rounds: 0, problems: [], verdicts: [] };
  for (const conv of only ? [only] : listConversations(root)) {
    const rounds = listRounds(root, conv);
    if (!rounds.length) continue;
    r.chains++;
    const landed = new Map<number, string>();
    const digests = new Map<number, string>();
    let session: string | undefined;
    let prevDigest: string | undefined;
    let prevThrough = 0;
    let prevInput = '';
    let expected = 1;
    for (const f of rounds) {
      r.rounds++;
      const where = f.path;
      const verdict: RoundVerdict = { conversation: conv, round: f.round, problems: 0, damaged: false };
      r.verdicts.push(verdict);
      const incomplete = (line: string) => (r.problems.push(line), verdict.problems++);
      const mismatch = (line: string) => (incomplete(line), (verdict.damaged = true));
      if (f.round !== expected) incomplete(`${where}: round ${expected} is missing before round ${f.round}`);
      expected = f.round + 1;
      let round;
      try {
        round = decodeRoundBytes(readFileSync(f.path), f.path);
      } catch (err) {
        mismatch((err as Error).message);
        prevDigest = undefined;
        continue;
      }
      const h = round.header;
      if (!session) {
        session = h.session;
        for (const l of listLanded(root, session)) landed.set(l.seq, l.path);
      }
      if (f.round > 1 && h.previous !== prevDigest)
        mismatch(`${where}: previous ${h.previous} is not the digest of round ${f.round - 1} (${prevDigest ?? 'unreadable'})`);
      if (!f.name.includes(round.commit.digest.slice(0, 12)))
        mismatch(`${where}: the file name does not carry the round's digest ${round.commit.digest.slice(0, 12)}`);
      if (h.from_seq !== prevThrough + 1)
        incomplete(`${where}: from_seq ${h.from_seq} does not follow the previous through_seq ${prevThrough}: landed evidence was skipped`);
      const digestOf = (seq: number) => {
        const p = landed.get(seq);
        if (p === undefined) return undefined;
        // Frames cite the same files many times over: each is read and hashed once per chain.
        let d = digests.get(seq);
        if (d === undefined) digests.set(seq, (d = createHash('sha256').update(readFileSync(p)).digest('hex')));
        return d;
      };
      const losses = roundLosses(round, prevThrough, prevInput, digestOf);
      for (const line of losses.incomplete) incomplete(`${where}: ${line}`);
      for (const line of losses.mismatch) mismatch(`${where}: ${line}`);
      prevDigest = round.commit.digest;
      prevThrough = h.through_seq;
      prevInput = h.input_digest;
    }
  }
  return r;
}
