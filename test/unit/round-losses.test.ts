/**
 * A lost landed file is the problem of the round that consumed it, once: a later round citing its
 * records again reports nothing, a number taken and never landed is no loss while the input digest
 * still recomputes, and files that are all there but digest otherwise are a mismatch.
 */
import { describe, expect, test } from '@jest/globals';
import { chainInputDigest } from '../../src/formats/session-flow/encode.js';
import { roundLosses } from '../../src/formats/session-flow/round-losses.js';
import type { EntityFrame, RoundHeader } from '../../src/formats/session-flow/types.js';

/** Landed file digests by sequence, as a storage root holds them before anything is lost. */
const LANDED: Record<number, string> = { 1: 'd1', 2: 'd2', 3: 'd3', 4: 'd4' };

function round(from: number, through: number, prevInput: string, cites: number[], landedThen = LANDED) {
  const digests = Object.entries(landedThen)
    .filter(([s]) => +s >= from && +s <= through)
    .map(([, d]) => d);
  const header = { from_seq: from, through_seq: through, input_digest: chainInputDigest(prevInput, digests) } as RoundHeader;
  const frames: EntityFrame[] = cites.map((seq, i) => ({ t: 'node', id: `n${i}`, revision: 1, ref: { seq, row: 1 } }));
  return { header, frames };
}

const on =
  (gone: number[], landed = LANDED) =>
  (s: number) =>
    gone.includes(s) ? undefined : landed[s];

describe('round losses', () => {
  const r1 = round(1, 2, '', [1, 2]);
  const r2 = round(3, 3, r1.header.input_digest, [1, 3]);

  test('the round that consumed a lost file names it; the round after, citing it again, names nothing', () => {
    expect(roundLosses(r1, 0, '', on([1]))).toEqual({ incomplete: ['names landed sequence 1, which is not on disk'], mismatch: [] });
    expect(roundLosses(r2, 2, r1.header.input_digest, on([1]))).toEqual({ incomplete: [], mismatch: [] });
  });

  test('a file no frame cites is found by the input digest; one never landed is no loss', () => {
    const quiet = round(1, 2, '', [1]);
    expect(roundLosses(quiet, 0, '', on([2]))).toEqual({
      incomplete: ['the input digest cannot be recomputed: landed sequence(s) 2 are not on disk'],
      mismatch: [],
    });
    const { 2: _skipped, ...neverLanded } = LANDED;
    const gap = round(1, 2, '', [1], neverLanded);
    expect(roundLosses(gap, 0, '', on([], neverLanded))).toEqual({ incomplete: [], mismatch: [] });
  });

  test('every file there but digesting otherwise is a mismatch, not a loss', () => {
    const changed = { ...LANDED, 2: 'edited' };
    expect(roundLosses(r1, 0, '', on([], changed)).mismatch).toHaveLength(1);
    expect(roundLosses(r1, 0, '', on([], changed)).incomplete).toEqual([]);
  });

  test('a round citing a lost file past its own window names it: no earlier round consumed it', () => {
    const ahead = round(1, 2, '', [1, 4]);
    expect(roundLosses(ahead, 0, '', on([4])).incomplete).toEqual(['names landed sequence 4, which is not on disk']);
  });
});
