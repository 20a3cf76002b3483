import { describe, expect, test } from '@jest/globals';
import { clip, partText, recordText } from '../../src/formats/view/text.js';
import { mergeByTime, type Placed } from '../../src/formats/view/order.js';
import type { SdRecord } from '../../src/formats/session-data/types.js';

const bytes = (s: string) => Buffer.byteLength(s, 'utf8');

describe('clipping to 2,000 bytes on whole characters', () => {
  test('a text that fits is returned whole, at exactly the limit too', () => {
    expect(clip('short')).toBe('short');
    const exact = 'a'.repeat(2000);
    expect(clip(exact)).toBe(exact);
    expect(clip('a'.repeat(2001))).toBe(exact);
  });

  test.each([
    ['two-byte', 'é', 2],
    ['three-byte', '€', 3],
    ['four-byte (a surrogate pair)', '😀', 4],
  ])('%s characters are never cut in half', (_name, ch, width) => {
    const text = 'x' + ch.repeat(1000);
    const out = clip(text);
    expect(bytes(out)).toBeLessThanOrEqual(2000);
    expect(bytes(out)).toBeGreaterThan(2000 - width);
    expect(text.startsWith(out)).toBe(true);
    expect(Buffer.from(out, 'utf8').toString('utf8')).toBe(out); // no lone surrogate, no replacement character
    expect(out.includes('\uFFFD')).toBe(false);
  });

  test('another limit', () => {
    expect(clip('€€€', 7)).toBe('€€');
  });
});

describe('what a part and a record show', () => {
  test('each part kind', () => {
    expect(partText({ k: 'text', state: 'available', bytes: 2, text: 'hi' })).toEqual({ text: 'hi', state: 'available', bytes: 2, readable: true });
    expect(partText({ k: 'reasoning', state: 'unavailable', bytes: 0 })).toEqual({ state: 'unavailable', bytes: 0, readable: false });
    expect(partText({ k: 'call', state: 'available', bytes: 16, id: 't', name: 'Bash', data: { command: 'ls' } }).text).toBe('{"command":"ls"}');
    expect(partText({ k: 'result', state: 'available', bytes: 2, of: 't', text: 'ok', data: { stdout: 'ok' } }).text).toBe('ok');
    expect(partText({ k: 'result', state: 'available', bytes: 9, of: 't', data: [{ type: 'image' }] }).text).toBe('[{"type":"image"}]');
    expect(partText({ k: 'data', state: 'available', bytes: 10, data: { a: '<b>&' } }).text).toBe('{"a":"<b>&"}');
    expect(partText({ k: 'unknown', state: 'available', bytes: 3, text: 'the record is not valid JSON', data: '{x' }).text).toBe('{x');
    expect(partText({ k: 'media', state: 'available', bytes: 4, media: 'image/png', data: 'AAAA' }).text).toBeUndefined();
    expect(partText(undefined)).toEqual({ readable: false });
  });

  test('a whole record: its text parts joined, else its first result part, else its first part', () => {
    const base = { ord: 1, off: 0, sha: 'x', bytes: 1 };
    const r = (parts: SdRecord['parts']): SdRecord => ({ ...base, parts });
    expect(
      recordText(
        r([
          { k: 'text', state: 'available', bytes: 1, text: 'a' },
          { k: 'call', state: 'available', bytes: 2, data: {} },
          { k: 'text', state: 'available', bytes: 1, text: 'b' },
        ]),
      ),
    ).toEqual({ text: 'a\nb', state: 'available', bytes: 2, readable: true });
    expect(
      recordText(
        r([
          { k: 'data', state: 'available', bytes: 2, data: {} },
          { k: 'result', state: 'available', bytes: 2, of: 't', text: 'ok' },
        ]),
      ).text,
    ).toBe('ok');
    expect(recordText(r([{ k: 'data', state: 'available', bytes: 7, data: { t: 1 } }]))).toMatchObject({ text: '{"t":1}', readable: false });
  });
});

describe('the order things happened in', () => {
  const p = (id: string, lane: string, seq: number, row: number, time?: number): Placed<string> => ({ item: id, lane, seq, row, block: -1, time, id });

  test('inside a lane position orders, even when a time steps backward; lanes merge by time', () => {
    const order = mergeByTime([
      p('m2', 'main', 1, 2, 100), // a record whose clock stepped back stays after m1
      p('m1', 'main', 1, 1, 300),
      p('c1', 'child', 2, 1, 200),
      p('m3', 'main', 1, 3, 400),
    ]);
    expect(order).toEqual(['c1', 'm1', 'm2', 'm3']);
  });

  test('a timed item before an untimed one; ids decide only at one position', () => {
    expect(mergeByTime([p('u', 'a', 1, 1), p('t', 'b', 2, 1, 5)])).toEqual(['t', 'u']);
    expect(mergeByTime([p('z', 'a', 1, 1, 5), p('y', 'a', 1, 1, 5)])).toEqual(['y', 'z']);
    expect(mergeByTime([])).toEqual([]);
  });
});
