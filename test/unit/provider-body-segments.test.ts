/**
 * Provider bodies cut the way asz 0.6 lands them (`provider_body/1` with `piece` and `copy`
 * segments), built here by hand from known bodies: the store rebuilds each to its exact bytes —
 * a piece as its part was spelled, Go's `\u003c` escapes included — across files, and refuses or
 * holds back what does not add up, saying why.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { ProviderBodyError, ProviderBodyStore } from '../../src/formats/session-data/provider-body-store.js';
import { bodyParts } from '../../src/formats/session-data/provider-body.js';
import { encodeRecord } from '../../src/formats/session-data/encode.js';
import { rawRecord } from '../../src/formats/session-data/raw-parts.js';
import { SessionProviderBodies } from '../../src/storage/provider-body-files.js';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

const sha = (s: string) => createHash('sha256').update(s, 'utf8').digest('hex');
const len = (s: string) => Buffer.byteLength(s, 'utf8');

/** A tool definition as a Go writer spells it: `<` escaped, which JSON.stringify would not reproduce. */
const TOOL = '{"name":"Bash","description":"runs a \\u003ccommand\\u003e"}';
const BODY_A = `{"tools":[${TOOL}],"messages":[{"role":"user","content":"hi"}]}`;
const FRONT_A = BODY_A.slice(0, BODY_A.length - 2); // everything before the closing `]}`
const BODY_B = `${FRONT_A},{"role":"assistant","content":"yo"},{"role":"user","content":"and now?"}]}`;
const BODY_C = `{"system":"short","tools":[${TOOL}]}`;

function manifest(id: string, body: string, depth: number, segments: object[]) {
  return { schema: 'provider_body/1', role: 'request', src: `${id}.json`, sha256: sha(body), bytes: len(body), depth, segments };
}

/** A record line: its own pieces as raw data parts, then its manifest. */
function line(id: string, pieces: string[], m: object): string {
  const parts = [
    ...pieces.map((p) => `{"k":"data","state":"available","bytes":${len(p)},"data":${p}}`),
    `{"k":"data","state":"available","bytes":1,"data":${JSON.stringify(m)}}`,
  ];
  return `{"ord":1,"off":0,"sha":"000000000000","bytes":1,"id":${JSON.stringify(id)},"from":"runtime","parts":[${parts.join(',')}]}`;
}

const HEADER = (seq: number) =>
  `{"h":1,"schema":"sd/1","seq":${seq},"at":"2026-06-01T09:00:00Z","kind":"provider_body","adapter":"asz","dialect":"claude-code/1","src":".","session":"s"}`;
const file = (seq: number, lines: string[]) => [HEADER(seq), ...lines, `{"t":"end","records":${lines.length},"digest":"x"}`, ''].join('\n');

const A = line('a.request', [TOOL], manifest('a', BODY_A, 0, [{ lit: '{"tools":[' }, { part: 0 }, { lit: '],"messages":[{"role":"user","content":"hi"}]}' }]));
const B = line(
  'b.request',
  [],
  manifest('b', BODY_B, 1, [{ copy: { from: 'a.request', sha256: sha(BODY_A), len: len(FRONT_A) } }, { lit: BODY_B.slice(FRONT_A.length) }]),
);
const C = line('c.request', [], manifest('c', BODY_C, 0, [{ lit: '{"system":"short","tools":[' }, { piece: sha(TOOL) }, { lit: ']}' }]));

afterAll(cleanupTemp);

describe('reading bodies whose repeats were taken out', () => {
  test('a part, a copy of an earlier body and a piece held in an earlier file rebuild to the exact bytes', () => {
    const store = new ProviderBodyStore();
    expect(store.addFile(4, file(4, [A, B]))).toEqual([]);
    expect(store.addFile(7, file(7, [C]))).toEqual([]);
    expect(store.bodyAt(4, 1).toString('utf8')).toBe(BODY_A);
    expect(store.bodyAt(4, 2).toString('utf8')).toBe(BODY_B);
    expect(store.bodyAt(7, 1).toString('utf8')).toBe(BODY_C);
    // The piece travels as it was spelled: a decode and print would have written `<`.
    expect(store.bodyAt(7, 1).toString('utf8')).toContain('\\u003ccommand\\u003e');
  });

  test('a body that refers to what has not landed yet waits, and one whose references do not add up is refused', () => {
    const early = new ProviderBodyStore();
    expect(early.add(7, 1, C)).toEqual({ unresolved: expect.stringMatching(/piece [0-9a-f]{64} is held by no earlier record/) });
    expect(early.add(4, 2, B)).toEqual({ unresolved: expect.stringMatching(/copied body a.request has not landed/) });

    const store = new ProviderBodyStore();
    expect(store.add(4, 1, A)).toBe('added');
    const wrongDigest = line('d', [], manifest('d', BODY_B, 1, [{ copy: { from: 'a.request', sha256: sha('other'), len: 3 } }, { lit: 'x' }]));
    expect(store.add(4, 3, wrongDigest)).toEqual({ refused: expect.stringContaining('the copy names digest') });
    const wrongDepth = line('e', [], manifest('e', BODY_B, 0, [{ copy: { from: 'a.request', sha256: sha(BODY_A), len: 3 } }]));
    expect(store.add(4, 4, wrongDepth)).toEqual({ refused: "depth 0 is not one more than the copied body's 0" });
    const tooLong = line('f', [], manifest('f', BODY_B, 1, [{ copy: { from: 'a.request', sha256: sha(BODY_A), len: len(BODY_A) + 1 } }]));
    expect(store.add(4, 5, tooLong)).toEqual({ refused: expect.stringContaining(`of a ${len(BODY_A)}-byte body`) });
    const twoKinds = line('g', [], manifest('g', 'x', 0, [{ lit: 'x', piece: sha(TOOL) }]));
    expect(store.add(4, 6, twoKinds)).toEqual({ refused: 'a segment is not exactly one of lit, part, piece, copy' });
  });

  test('a body whose segments do not rebuild its digest says so instead of returning other bytes', () => {
    const store = new ProviderBodyStore();
    const tampered = line('h', [], manifest('h', BODY_A, 0, [{ lit: BODY_A.replace('hi', 'HI') }]));
    expect(store.add(1, 1, tampered)).toBe('added');
    expect(() => store.bodyAt(1, 1)).toThrow(ProviderBodyError);
    expect(() => store.bodyAt(1, 1)).toThrow(/rebuilds to \d+ bytes that do not match its digest/);
  });

  test("aszcol's own whole bodies (one lit, or an unknown part) read the same way", () => {
    const store = new ProviderBodyStore();
    const whole = encodeRecord({
      ord: 1,
      off: 0,
      sha: 'x',
      bytes: 1,
      id: 'w.request',
      parts: bodyParts(Buffer.from(BODY_A), { role: 'request', src: 'w.json' }),
    });
    const cut = Buffer.from('{"model":"m","messa');
    const broken = encodeRecord({ ord: 2, off: 0, sha: 'x', bytes: 1, id: 'x.request', parts: bodyParts(cut, { role: 'request', src: 'x.json' }) });
    expect(store.add(2, 1, whole)).toBe('added');
    expect(store.add(2, 2, broken)).toBe('added');
    expect(store.bodyAt(2, 1).toString('utf8')).toBe(BODY_A);
    expect(store.bodyAt(2, 2).equals(cut)).toBe(true);
  });

  test('the line walker keeps each part as written and reads the record id', () => {
    const r = rawRecord(A);
    expect(r.id).toBe('a.request');
    expect(r.parts.map((p) => p.k)).toEqual(['data', 'data']);
    expect(r.parts[0]!.raw).toBe(TOOL);
    expect(JSON.parse(r.parts[1]!.raw!)).toMatchObject({ schema: 'provider_body/1', depth: 0 });
  });

  test("a session's landed files are read in landing order, once, up to the body asked for; a body held back says why", () => {
    const dir = tempDir('aszcol-body-segments-');
    const at = (seq: number, lines: string[]) => {
      const path = join(dir, `provider_body-${seq}.sd`);
      writeFileSync(path, file(seq, lines));
      return { seq, path };
    };
    // Listed out of order; the piece in seq 7 is held by seq 4, and seq 9 copies a body that never landed.
    const orphan = line('o.request', [], manifest('o', BODY_B, 1, [{ copy: { from: 'gone.request', sha256: sha(BODY_A), len: 3 } }, { lit: 'x' }]));
    const bodies = new SessionProviderBodies([at(9, [orphan]), at(7, [C]), at(4, [A, B])]);
    expect(bodies.bodyAt(7, 1).toString('utf8')).toBe(BODY_C);
    expect(bodies.bodyAt(4, 2).toString('utf8')).toBe(BODY_B);
    expect(() => bodies.bodyAt(9, 1)).toThrow(/waiting: the copied body gone.request has not landed before this one/);
  });
});
