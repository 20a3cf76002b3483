/**
 * What one round of a chain says about landed files that are gone, shared by `aszcol verify` and
 * the view so both count a loss the same way. A lost file is the problem of the round that
 * consumed it, the one whose `from_seq..through_seq` holds its sequence, and of no later round
 * that cites its records again: asz 0.6 counts it so (its chain check reports "the landed
 * sequences the round consumed that are no longer on disk", and its lost-ends scenario counts one
 * problem per lost file in the document). A later round that cites a lost file's records is still
 * verified: its own input is whole.
 *
 * A sequence inside the window that no frame cites may never have landed at all (a writer took
 * the number and died), so its absence is a loss only when the input digest no longer recomputes.
 */
import { chainInputDigest } from './encode.js';
import type { Ref, Round } from './types.js';

export interface RoundLosses {
  /** Evidence is missing: one line per lost file the round cites, one for those it binds only by digest. */
  incomplete: string[];
  /** Evidence is changed: the files are all there and digest to something else. */
  mismatch: string[];
}

/** The landed positions a frame cites; a tombstone cites none. */
export function frameRefs(f: Round['frames'][number]): Ref[] {
  if (f.tombstone) return [];
  if (f.t === 'node') return [...(f.ref ? [f.ref] : []), ...(f.refs ?? [])];
  if (f.t === 'relation') return f.evidence ?? [];
  return [];
}

/**
 * The round's own losses. `prevThrough` and `prevInput` are the round before's `through_seq` and
 * `input_digest` (0 and '' for round 1); `digestOf` gives a landed file's digest, undefined when
 * it is not on disk.
 */
export function roundLosses(
  round: Pick<Round, 'header' | 'frames'>,
  prevThrough: number,
  prevInput: string,
  digestOf: (seq: number) => string | undefined,
): RoundLosses {
  const h = round.header;
  const out: RoundLosses = { incomplete: [], mismatch: [] };
  // Cited and gone; a sequence an earlier round consumed is that round's to report.
  const cited = new Set<number>();
  for (const fr of round.frames) for (const r of frameRefs(fr)) if (r.seq > prevThrough && digestOf(r.seq) === undefined) cited.add(r.seq);
  for (const s of [...cited].sort((a, b) => a - b)) out.incomplete.push(`names landed sequence ${s}, which is not on disk`);
  const digests: string[] = [];
  const absent: number[] = [];
  for (let s = h.from_seq; s <= h.through_seq; s++) {
    const d = digestOf(s);
    if (d !== undefined) digests.push(d);
    else absent.push(s);
  }
  if (chainInputDigest(prevInput, digests) === h.input_digest) return out;
  const uncited = absent.filter((s) => !cited.has(s));
  if (uncited.length) out.incomplete.push(`the input digest cannot be recomputed: landed sequence(s) ${uncited.join(', ')} are not on disk`);
  else if (!absent.length)
    out.mismatch.push(
      `the input digest recomputed from landed files ${h.from_seq}..${h.through_seq} is ${chainInputDigest(prevInput, digests)}, the header says ${h.input_digest}`,
    );
  return out;
}
