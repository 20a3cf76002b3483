import { describe, expect, test } from '@jest/globals';
import { expandEnv } from '../../src/config/env.js';
import { bytes, duration, parseEndpoint, mapping } from '../../src/config/reader.js';

describe('${env:…} expansion', () => {
  const env = { A: 'alpha', N: '42', F: '1.5', T: 'true', Z: '007', EMPTY: '' } as NodeJS.ProcessEnv;

  test('inside strings, with defaults, everywhere in the tree', () => {
    expect(expandEnv({ a: 'x-${env:A}-y', b: ['${env:MISSING:-dflt}', '${env:EMPTY:-e}'], c: { d: '${env:A}${env:A}' } }, env)).toEqual({
      a: 'x-alpha-y',
      b: ['dflt', 'e'],
      c: { d: 'alphaalpha' },
    });
  });

  test('a value that is exactly one reference takes the type its text reads as', () => {
    expect(expandEnv({ n: '${env:N}', f: '${env:F}', t: '${env:T}', z: '${env:Z}', s: 'p${env:N}' }, env)).toEqual({
      n: 42,
      f: 1.5,
      t: true,
      z: '007',
      s: 'p42',
    });
    expect(expandEnv('${env:MISSING:-8}', env)).toBe(8);
  });

  test('$$ is a literal dollar sign, so a literal reference can be written', () => {
    expect(expandEnv('cost $$5 and $${env:A}', env)).toBe('cost $5 and ${env:A}');
  });

  test('an unset or empty variable with no default is an error at the exact path', () => {
    expect(() => expandEnv({ exporters: { 'otlp/oap': { endpoint: '${env:NOPE}' } } }, env)).toThrow(
      'exporters.otlp/oap.endpoint: environment variable NOPE is not set and no default is given (write ${env:NOPE:-default})',
    );
    expect(() => expandEnv({ l: ['ok', '${env:EMPTY}'] }, env)).toThrow(/^l\[1\]: environment variable EMPTY is not set/);
  });

  test('non-strings and text that only looks like a reference are left alone', () => {
    expect(expandEnv({ a: 1, b: true, c: null, d: '${ENV:A}', e: '$A' }, env)).toEqual({ a: 1, b: true, c: null, d: '${ENV:A}', e: '$A' });
  });
});

describe('value readers', () => {
  test('durations and byte sizes in human units, with their path in errors', () => {
    expect(duration('1m30s', 'x', 0)).toBe(90_000);
    expect(duration(undefined, 'x', 7)).toBe(7);
    expect(() => duration('5 minutes', 'a.b', 0)).toThrow(/^a\.b: "5 minutes" is not a duration/);
    expect(bytes('2MiB', 'x', 0)).toBe(2 * 1024 * 1024);
    expect(bytes('8MB', 'x', 0)).toBe(8_000_000);
    expect(() => bytes('-1', 'a.c', 0)).toThrow(/^a\.c: "-1" is not a byte size/);
    expect(() => bytes('1KiB', 'a.c', 0, { min: 4096 })).toThrow('a.c: must be at least 4096 bytes, got "1KiB"');
  });

  test('listen addresses', () => {
    expect(parseEndpoint('127.0.0.1:4317', 'p')).toEqual({ host: '127.0.0.1', port: 4317 });
    expect(parseEndpoint('[::1]:0', 'p')).toEqual({ host: '::1', port: 0 });
    expect(parseEndpoint('localhost:13133', 'p')).toEqual({ host: 'localhost', port: 13133 });
    expect(parseEndpoint(':4318', 'p')).toEqual({ host: '0.0.0.0', port: 4318 });
    expect(() => parseEndpoint('http://x:1', 'e.p')).toThrow(/^e\.p: "http:\/\/x:1" is not a listen address/);
    expect(() => parseEndpoint('x:70000', 'e.p')).toThrow('e.p: port 70000 is out of range 0-65535');
  });

  test('mappings refuse unknown keys and name what is allowed; null is an empty mapping', () => {
    expect(mapping(null, 'a', ['x'])).toEqual({});
    expect(() => mapping({ y: 1 }, 'a', ['x', 'z'])).toThrow('a.y: unknown key; allowed here: x, z');
    expect(() => mapping([1], 'a')).toThrow('a: must be a mapping, got a list');
  });
});
