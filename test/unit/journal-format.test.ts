import { describe, expect, test } from '@jest/globals';
import { NAMES_RULE_VERSION } from '../../src/storage/entry-names.js';
import { FRAME_BYTES, entryFrame, nextGoodEntry, readEntry, segmentBase, segmentName } from '../../src/receivers/claude-code-otlp/journal-format.js';

const entry = (signal: 'logs' | 'metrics' | 'traces', body: string, at = 1n) => Buffer.concat([entryFrame(signal, at, Buffer.from(body)), Buffer.from(body)]);

describe('journal entries', () => {
  test('an entry reads back whole: signal, time, body, the names rule it was answered under, and its place', () => {
    const buf = Buffer.concat([entry('logs', 'first', 5n), entry('metrics', 'second!', 6n)]);
    const a = readEntry(buf, 0, 1000);
    expect(a).toEqual({
      ok: true,
      entry: { signal: 'logs', receivedAtNs: 5n, body: Buffer.from('first'), namesRule: NAMES_RULE_VERSION, at: 1000, end: 1000 + FRAME_BYTES + 5 },
    });
    // An entry an older version wrote (the field was reserved, always 0) reads as rule 0.
    const old = Buffer.concat([entryFrame('logs', 5n, Buffer.from('x'), 0), Buffer.from('x')]);
    expect(readEntry(old, 0, 0)).toMatchObject({ ok: true, entry: { namesRule: 0 } });
    const b = readEntry(buf, FRAME_BYTES + 5, 1000);
    expect(b.ok && [b.entry.signal, b.entry.body.toString(), b.entry.end]).toEqual(['metrics', 'second!', 1000 + buf.length]);
    expect(readEntry(buf, buf.length, 1000)).toEqual({ ok: false, short: true });
  });

  test('a cut entry is short, not damaged; a changed byte anywhere in it is damage', () => {
    const one = entry('traces', 'a span or two');
    for (let cut = 1; cut < one.length; cut++) expect(readEntry(one.subarray(0, cut), 0, 0)).toEqual({ ok: false, short: true });
    for (let i = 0; i < one.length; i++) {
      if (i >= 4 && i < 8) continue; // the length: changing it makes the entry longer (short) or shorter (checksum)
      const bad = Buffer.from(one);
      bad[i] ^= 0x01;
      const r = readEntry(bad, 0, 0);
      expect(r.ok).toBe(false);
      if (!r.ok) expect(r.short).toBe(false);
    }
    const shorter = Buffer.from(one);
    shorter.writeUInt32LE(one.readUInt32LE(4) - 1, 4);
    expect(readEntry(shorter, 0, 0)).toMatchObject({ ok: false, short: false, reason: 'checksum mismatch' });
  });

  test('after damage the next good entry is found, skipping a false start', () => {
    const good = entry('logs', 'after the damage');
    const junk = Buffer.concat([Buffer.from('garbage'), entry('logs', 'x').subarray(0, 10), Buffer.from('more')]);
    const buf = Buffer.concat([junk, good]);
    expect(nextGoodEntry(buf, 0, 0)).toBe(junk.length);
    expect(nextGoodEntry(buf, junk.length + 1, 0)).toBe(-1);
  });

  test('segment names are their first position in hex, and only those names count', () => {
    expect(segmentName(0)).toBe('0000000000000000.wal');
    expect(segmentName(0x4000000 * 3)).toBe('000000000c000000.wal');
    expect(segmentBase(segmentName(2 ** 40 + 7))).toBe(2 ** 40 + 7);
    expect(segmentBase('landed.state')).toBeUndefined();
    expect(segmentBase('000000000000000.wal')).toBeUndefined();
  });
});
