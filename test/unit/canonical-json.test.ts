/**
 * Canonical JSON is what every round's digest is taken over: a faster encoder must write exactly
 * the bytes the first one wrote, for every value a frame can hold and for the odd ones it should
 * not (undefined in arrays, holes, functions, dates, NaN). The reference below is that first
 * encoder, kept here as the ground truth; values are drawn from a seeded generator.
 */
import { describe, expect, test } from '@jest/globals';
import { canonical, encodeRound } from '../../src/formats/session-flow/encode.js';
import type { EntityFrame, RoundHeader } from '../../src/formats/session-flow/types.js';

/** The encoder as it was first written: keys filtered, sorted, mapped and joined. */
function reference(v: unknown): string {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(reference).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .filter((k) => o[k] !== undefined)
    .sort()
    .map((k) => `${JSON.stringify(k)}:${reference(o[k])}`)
    .join(',')}}`;
}

/** A small deterministic generator (xorshift), so a failure names a seed that reproduces it. */
function generator(seed: number) {
  let x = seed || 1;
  const next = () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) / 2 ** 32;
  };
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)]!;
  const KEYS = ['a', 'b', 'kind', 'attrs', 'Z', 'z', '10', '2', 'é', '🧪', 'quote"d', 'back\\slash', 'new\nline', '', 'started_at', 'unavailable'];
  const STRINGS = ['', 'x', 'é', '🧪 emoji', 'quote " and \\', 'tab\tcontrol\u0001', '\u2028 line sep', 'long '.repeat(20)];
  const NUMBERS = [0, -0, 1, -1, 0.1, 1e21, 1e-7, 123456789.125, NaN, Infinity, -Infinity, 2 ** 53];
  const value = (depth: number): unknown => {
    const r = next();
    if (depth > 3 || r < 0.35) return pick<unknown>([...STRINGS, ...NUMBERS, true, false, null, undefined]);
    if (r < 0.4) return pick<unknown>([() => 1, new Date(0), Symbol('s')]);
    if (r < 0.7) {
      const n = Math.floor(next() * 5);
      const arr: unknown[] = [];
      for (let i = 0; i < n; i++) arr.push(value(depth + 1));
      if (next() < 0.15) arr.length += 2; // holes at the end
      return arr;
    }
    const o: Record<string, unknown> = {};
    const n = Math.floor(next() * 6);
    for (let i = 0; i < n; i++) o[pick(KEYS)] = value(depth + 1);
    return o;
  };
  return { value };
}

describe('canonical JSON', () => {
  test('writes the first encoder’s bytes for 20,000 drawn values, odd ones included', () => {
    for (let seed = 1; seed <= 20_000; seed++) {
      const v = generator(seed).value(0);
      const got = canonical(v);
      if (got !== reference(v)) expect({ seed, got }).toEqual({ seed, got: reference(v) });
    }
  });

  test('the values a frame holds: keys sorted by code unit, undefined left out, nesting kept', () => {
    const v = { b: [1, { z: 'é', a: undefined, y: null }], a: { '10': 1, '2': 2, Z: true }, c: undefined };
    expect(canonical(v)).toBe('{"a":{"10":1,"2":2,"Z":true},"b":[1,{"y":null,"z":"é"}]}');
    expect(canonical([undefined, 1, , 2])).toBe(reference([undefined, 1, , 2])); // eslint-disable-line no-sparse-arrays
  });

  test('a round’s bytes and digest are those the first encoder gave (pinned from it)', () => {
    // prettier-ignore
    const header = { t: 'header', schema: 'sf/1', conversation: 'c', session: 'c', round: 1, from_seq: 1, through_seq: 2, input_digest: 'd' } as unknown as RoundHeader;
    const frames = [
      {
        t: 'node',
        id: 'tool/b',
        kind: 'tool',
        parent: 'call/x',
        attrs: { name: 'Bash', unavailable: ['execution_ms'], timing: 'unavailable', started_at: undefined },
        refs: [{ seq: 1, row: 2 }],
      },
      {
        t: 'node',
        id: 'call/x',
        kind: 'llm.call',
        attrs: { usage_at: { seq: 1, row: 1 }, cost_usd: 0.25, model: 'm', é: '🧪' },
        ref: { seq: 1, row: 1, block: 0 },
      },
      { t: 'relation', id: 'r/1', from: 'call/x', to: 'tool/b', type: 'calls', evidence: [{ seq: 1, row: 2 }] },
      { t: 'unresolved', id: 'u/1', kind: 'telemetry', reason: 'a "quoted" reason', state: 'open' },
    ] as unknown as EntityFrame[];
    const { text, digest } = encodeRound(header, frames);
    expect(digest).toBe('c858b177576a67e9f97803d06e449017cfd5d5a8ec336c358e4dadcb9909a677');
    expect(text.split('\n')[1]).toBe(
      '{"t":"node","id":"call/x","kind":"llm.call","ref":{"seq":1,"row":1,"block":0},"attrs":{"cost_usd":0.25,"model":"m","usage_at":{"row":1,"seq":1},"é":"🧪"}}',
    );
  });
});
