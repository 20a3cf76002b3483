import { describe, expect, test } from '@jest/globals';
import { removeDuplicates } from '../../src/assemble/stage1-dedupe.js';
import type { IndexEntry } from '../../src/storage/index.js';

const e = (seq: number, row: number, id?: string, run?: string): IndexEntry => ({
  seq,
  row,
  fileKind: 'transcript',
  stream: 'main',
  id,
  run,
  flags: [],
  parts: [],
});

describe('stage 1: duplicates', () => {
  test('the first copy in landed order wins across files; a record with no id is never a copy', () => {
    const first = e(1, 5, 'x', 'p1');
    const { live, byId, duplicates } = removeDuplicates([e(1, 1), first, e(1, 6), e(2, 1, 'x', 'p-rewritten'), e(2, 2)]);
    expect(duplicates).toBe(1);
    expect(byId.get('x')).toBe(first);
    expect(live.map((x) => `${x.seq}/${x.row}`)).toEqual(['1/1', '1/5', '1/6', '2/2']);
  });
});
