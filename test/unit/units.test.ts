import { describe, expect, test } from '@jest/globals';
import { parseBytes, parseDuration } from '../../src/util/units.js';
import { compactStamp, rfc3339 } from '../../src/util/time.js';

describe('human units', () => {
  test('byte sizes', () => {
    expect(parseBytes('2MiB')).toBe(2 * 1024 * 1024);
    expect(parseBytes('8 MiB')).toBe(8 * 1024 * 1024);
    expect(parseBytes('1KB')).toBe(1000);
    expect(parseBytes(4096)).toBe(4096);
    expect(() => parseBytes('2 furlongs')).toThrow(/not a byte size/);
    expect(() => parseBytes(-1)).toThrow();
  });
  test('durations', () => {
    expect(parseDuration('5s')).toBe(5000);
    expect(parseDuration('1m30s')).toBe(90_000);
    expect(parseDuration('250ms')).toBe(250);
    expect(parseDuration('24h')).toBe(86_400_000);
    expect(() => parseDuration('5 seconds')).toThrow(/not a duration/);
    expect(() => parseDuration('s5')).toThrow();
  });
  test('file stamps have nine fraction digits, no colon, and sort as text', () => {
    const ns = 1_788_167_524_481_523_000n;
    expect(compactStamp(ns)).toBe('20260831T091204.481523000Z');
    expect(rfc3339(ns)).toBe('2026-08-31T09:12:04.481523Z');
    expect(compactStamp(ns) < compactStamp(ns + 1n)).toBe(true);
  });
});
