import { afterAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync, chmodSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { SessionDataBuilder, encodeHeader, shortSha } from '../../src/formats/session-data/encode.js';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import { writeOnce } from '../../src/storage/write-once.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const header = {
  seq: 3,
  at: '2026-09-01T12:56:03.1818Z',
  kind: 'transcript' as const,
  adapter: 'test/1',
  dialect: 'claude-code/1',
  src: 'p/s.jsonl',
  session: 's',
  stream: 'main',
};

function build(n = 2): Buffer {
  const b = new SessionDataBuilder(header);
  for (let i = 1; i <= n; i++)
    b.add({
      ord: i,
      off: (i - 1) * 10,
      sha: shortSha(Buffer.from(String(i))),
      bytes: 9,
      parts: [{ k: 'text', state: 'available', bytes: 1, text: String(i) }],
    });
  return b.finish().bytes;
}

describe('Session Data sd/1', () => {
  test('the closing line counts the records and digests every byte before it', () => {
    const bytes = build(3);
    const lines = bytes.toString('utf8').trimEnd().split('\n');
    expect(lines).toHaveLength(5);
    const closing = JSON.parse(lines[4]!);
    expect(closing.t).toBe('end');
    expect(closing.records).toBe(3);
    const before = bytes.subarray(0, bytes.length - Buffer.byteLength(lines[4]! + '\n'));
    expect(closing.digest).toBe(createHash('sha256').update(before).digest('hex'));
  });

  test('header keys are in the documented order and empty values are left out', () => {
    const h = JSON.parse(encodeHeader({ ...header, batch: '' }));
    expect(Object.keys(h)).toEqual(['h', 'schema', 'seq', 'at', 'kind', 'adapter', 'dialect', 'src', 'session', 'stream']);
  });

  test('the writer refuses a header a reader would refuse', () => {
    expect(() => encodeHeader({ ...header, dialect: '' })).toThrow(/dialect/);
    expect(() => encodeHeader({ ...header, seq: 0 })).toThrow(/seq/);
  });

  test('a reader reads back what was written', () => {
    const dir = tempDir();
    const p = join(dir, 'f.sd');
    writeFileSync(p, build(2));
    const r = readSessionData(p);
    expect(r.header.seq).toBe(3);
    expect(r.records.map((x) => x.ord)).toEqual([1, 2]);
  });

  test.each([
    ['a file cut short (no closing line)', (b: Buffer) => b.subarray(0, b.toString().lastIndexOf('{"t":"end"')), /no closing line/],
    ['a file cut mid-line', (b: Buffer) => b.subarray(0, b.length - 5), /cut short/],
    ['a changed byte', (b: Buffer) => Buffer.from(b.toString().replace('"text":"1"', '"text":"7"')), /digest mismatch/],
    ['a wrong count', (b: Buffer) => Buffer.from(b.toString().replace('"records":2', '"records":3')), /closing line says 3 records/],
    ['a bad header', (b: Buffer) => Buffer.from(b.toString().replace('"schema":"sd/1"', '"schema":"sd/9"')), /schema/],
    [
      'a line that is not JSON',
      (b: Buffer) => Buffer.concat([b.subarray(0, b.indexOf(10) + 1), Buffer.from('{oops\n'), b.subarray(b.indexOf(10) + 1)]),
      /line 2.*not valid JSON|:2: line is not valid JSON/,
    ],
  ])('a reader refuses %s', (_name, mutate, error) => {
    const dir = tempDir();
    const p = join(dir, 'f.sd');
    writeFileSync(p, mutate(build(2)));
    expect(() => readSessionData(p)).toThrow(error);
  });

  test('write-once lands a read-only file and never replaces one', () => {
    const dir = tempDir();
    const p = join(dir, 'x', 'a.sd');
    writeOnce(p, 'first\n');
    expect(statSync(p).mode & 0o777).toBe(0o444);
    expect(() => writeOnce(p, 'second\n')).toThrow(/EEXIST/);
    expect(readFileSync(p, 'utf8')).toBe('first\n');
    chmodSync(p, 0o644);
  });
});
