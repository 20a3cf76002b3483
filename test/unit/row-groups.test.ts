/**
 * The join's row groups: rows of one key come back in row order whatever keys come between them
 * (a key repeated in a row, then again after others, must not start a second group), and a group
 * the caller holds by its first row (a tool use's rows) chains the same way without any key.
 */
import { describe, expect, test } from '@jest/globals';
import { RowGroups } from '../../src/assemble/row-groups.js';

describe('row groups', () => {
  test('a key seen in consecutive rows and again later keeps one group, in row order', () => {
    const keys = ['req_a', 'req_a', 'req_b', undefined, 'req_a', 'req_b', 'req_b', 'req_c', 'req_a'];
    const g = new RowGroups(keys.length);
    keys.forEach((k, r) => g.add(k, r));
    expect([...g.keys()]).toEqual(['req_a', 'req_b', 'req_c']);
    expect(g.rows('req_a')).toEqual([0, 1, 4, 8]);
    expect(g.rows('req_b')).toEqual([2, 5, 6]);
    expect(g.rows('req_c')).toEqual([7]);
    expect(g.first('req_missing')).toBe(-1);
    expect(g.first(undefined)).toBe(-1);
  });

  test('groups started by their first row chain beside keyed ones in the same table', () => {
    const g = new RowGroups(6);
    g.start(0);
    g.add('req_a', 1);
    g.start(2);
    g.append(0, 3);
    g.append(2, 4);
    g.append(0, 5);
    const walk = (first: number) => {
      const out: number[] = [];
      for (let r = first; r >= 0; r = g.after(r)) out.push(r);
      return out;
    };
    expect(walk(0)).toEqual([0, 3, 5]);
    expect(walk(2)).toEqual([2, 4]);
    expect(g.rows('req_a')).toEqual([1]);
  });
});
