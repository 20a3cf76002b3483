import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { decodeRound } from '../formats/session-flow/decode.js';
import { chainInputDigest } from '../formats/session-flow/encode.js';
import type { Ref } from '../formats/session-flow/types.js';
import { listConversations, listRounds } from './chain.js';
import { listLanded } from './landed-files.js';

export interface ChainReport {
  chains: number;
  rounds: number;
  problems: string[];
}

/**
 * The six checks on every round: none missing before it; `previous` is the digest of the round
 * before; its own digest and every reading rule hold; `from_seq` continues the previous
 * `through_seq` (the one check no digest can make: skipped evidence); every landed sequence it
 * names is still on disk; its input digest recomputes from those files.
 */
export function verifyChains(root: string, only?: string): ChainReport {
  const r: ChainReport = { chains: 0, rounds: 0, problems: [] };
  for (const conv of only ? [only] : listConversations(root)) {
    const rounds = listRounds(root, conv);
    if (!rounds.length) continue;
    r.chains++;
    const landed = new Map<number, string>();
    let session: string | undefined;
    let prevDigest: string | undefined;
    let prevThrough = 0;
    let prevInput = '';
    let expected = 1;
    for (const f of rounds) {
      r.rounds++;
      const where = f.path;
      if (f.round !== expected) r.problems.push(`${where}: round ${expected} is missing before round ${f.round}`);
      expected = f.round + 1;
      let round;
      try {
        round = decodeRound(readFileSync(f.path, 'utf8'), f.path);
      } catch (err) {
        r.problems.push((err as Error).message);
        prevDigest = undefined;
        continue;
      }
      const h = round.header;
      if (!session) {
        session = h.session;
        for (const l of listLanded(root, session)) landed.set(l.seq, l.path);
      }
      if (f.round > 1 && h.previous !== prevDigest)
        r.problems.push(`${where}: previous ${h.previous} is not the digest of round ${f.round - 1} (${prevDigest ?? 'unreadable'})`);
      if (!f.name.includes(round.commit.digest.slice(0, 12)))
        r.problems.push(`${where}: the file name does not carry the round's digest ${round.commit.digest.slice(0, 12)}`);
      if (h.from_seq !== prevThrough + 1)
        r.problems.push(`${where}: from_seq ${h.from_seq} does not follow the previous through_seq ${prevThrough}: landed evidence was skipped`);
      const missing = new Set<number>();
      for (const fr of round.frames) {
        const refs: Ref[] = fr.t === 'node' ? [...(fr.ref ? [fr.ref] : []), ...(fr.refs ?? [])] : fr.t === 'relation' ? (fr.evidence ?? []) : [];
        for (const ref of refs) if (!landed.has(ref.seq)) missing.add(ref.seq);
      }
      for (const s of [...missing].sort((a, b) => a - b)) r.problems.push(`${where}: names landed sequence ${s}, which is not on disk`);
      const digests: string[] = [];
      const absent: number[] = [];
      for (let s = h.from_seq; s <= h.through_seq; s++) {
        const p = landed.get(s);
        if (p) digests.push(createHash('sha256').update(readFileSync(p)).digest('hex'));
        else absent.push(s);
      }
      const input = chainInputDigest(prevInput, digests);
      // One problem per lost file, as the view counts it: a sequence the round names, else one its digest binds.
      if (input !== h.input_digest) {
        if (absent.length) {
          const unnamed = absent.filter((s) => !missing.has(s));
          if (unnamed.length) r.problems.push(`${where}: the input digest cannot be recomputed: landed sequence(s) ${unnamed.join(', ')} are not on disk`);
        } else
          r.problems.push(
            `${where}: the input digest recomputed from landed files ${h.from_seq}..${h.through_seq} is ${input}, the header says ${h.input_digest}`,
          );
      }
      prevDigest = round.commit.digest;
      prevThrough = h.through_seq;
      prevInput = h.input_digest;
    }
  }
  return r;
}
