import { describe, expect, test } from '@jest/globals';
import { lazy } from '../../src/util/lazy.js';
import { ScratchBuffer } from '../../src/util/scratch-buffer.js';

describe('lazy', () => {
  test('makes the value on the first call, not before, and never again', () => {
    let made = 0;
    const get = lazy(() => ({ n: ++made }));
    expect(made).toBe(0);
    const first = get();
    expect(get()).toBe(first);
    expect(get()).toBe(first);
    expect(made).toBe(1);
    expect(first.n).toBe(1);
  });

  test('keeps a made undefined or 0 as made, without calling again', () => {
    let calls = 0;
    const zero = lazy(() => (calls++, 0));
    const none = lazy(() => (calls++, undefined));
    expect([zero(), zero(), none(), none()]).toEqual([0, 0, undefined, undefined]);
    expect(calls).toBe(2);
  });

  test('a make that throws keeps nothing: the next call tries again', () => {
    let calls = 0;
    const get = lazy(() => {
      if (++calls === 1) throw new Error('not yet');
      return 'ready';
    });
    expect(() => get()).toThrow('not yet');
    expect(get()).toBe('ready');
    expect(get()).toBe('ready');
    expect(calls).toBe(2);
  });
});

describe('ScratchBuffer', () => {
  test('hands back the same buffer while it is big enough, so a loop allocates once', () => {
    const s = new ScratchBuffer(1024);
    expect(s.capacity).toBe(0);
    const a = s.take(10);
    expect(a.length).toBe(1024);
    expect(s.take(1024)).toBe(a);
    expect(s.take(1)).toBe(a);
  });

  test('grows by at least doubling, keeping the bytes asked to be kept', () => {
    const s = new ScratchBuffer(8);
    const a = s.take(8);
    a.write('abcdefgh', 'latin1');
    const b = s.take(9, 5);
    expect(b).not.toBe(a);
    expect(b.length).toBe(16);
    expect(b.toString('latin1', 0, 5)).toBe('abcde');
    const c = s.take(100, 16);
    expect(c.length).toBe(100);
    expect(c.toString('latin1', 0, 5)).toBe('abcde');
    expect(s.capacity).toBe(100);
  });

  test('trim lets go of a buffer grown past the limit, and only then', () => {
    const s = new ScratchBuffer();
    const big = s.take(4096);
    s.trim(8192);
    expect(s.take(10)).toBe(big);
    s.trim(1024);
    expect(s.capacity).toBe(0);
    const small = s.take(512);
    expect(small).not.toBe(big);
    expect(small.length).toBe(512);
  });
});
