import { describe, expect, test } from '@jest/globals';
import { decodeRound, decodeRoundBytes } from '../../src/formats/session-flow/decode.js';
import { chainInputDigest, encodeRound } from '../../src/formats/session-flow/encode.js';
import { applyRound, emptyFold } from '../../src/formats/session-flow/fold.js';
import { NODE_KINDS, RELATION_TYPES, UNRESOLVED_KINDS, entityId, type EntityFrame, type RoundHeader } from '../../src/formats/session-flow/types.js';
import { TERMS } from '../../src/adapters/claude-code/glossary.js';
import { createHash } from 'node:crypto';

const header = (round: number, extra: Partial<RoundHeader> = {}): RoundHeader => ({
  t: 'header',
  schema: 'sf/1',
  conversation: 'c',
  session: 'c',
  round,
  ...(round > 1 ? { previous: 'x' } : {}),
  from_seq: 1,
  through_seq: 3,
  input_digest: 'd',
  parser: 'aszcol-v1',
  policy: 'v1+idle=10m0s',
  talks: 0,
  steps: 0,
  streams: 0,
  segments: 0,
  unresolved: 0,
  changes: 0,
  lines_added: 0,
  lines_removed: 0,
  llm_calls: 0,
  subagents: 0,
  bash_runs: 0,
  ...extra,
});
const node = (id: string, extra: Record<string, unknown> = {}): EntityFrame =>
  ({ t: 'node', id, revision: 1, kind: 'tool', ref: { seq: 1, row: 2 }, ...extra }) as EntityFrame;

describe('sf/1 rounds', () => {
  test('frames are written header, nodes, relations, unresolved, each sorted by id, and the commit digests every line before it', () => {
    const frames: EntityFrame[] = [
      { t: 'unresolved', id: 'unres/tool_result/b', revision: 1, kind: 'tool_result', ref: 'b', reason: 'r', state: 'open' },
      {
        t: 'relation',
        id: 'rel/starts/x/y',
        revision: 1,
        type: 'starts',
        from: 'x',
        to: 'y',
        quality: 'exact_unique',
        via: 'v',
        evidence: [{ seq: 1, row: 1 }],
      },
      node('tool/b'),
      node('tool/a'),
    ];
    const { text, digest } = encodeRound(header(1), frames);
    const lines = text
      .trimEnd()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.id ?? l.t)).toEqual(['header', 'tool/a', 'tool/b', 'rel/starts/x/y', 'unres/tool_result/b', 'commit']);
    expect(digest).toBe(
      createHash('sha256')
        .update(text.slice(0, text.lastIndexOf('{"t":"commit"')))
        .digest('hex'),
    );
    expect(lines[5].counts).toEqual({ nodes: 2, relations: 1, unresolved: 1 });
    expect(decodeRound(text).frames).toHaveLength(4);
    expect(text).not.toMatch(/updated_at|written_at/); // no wall-clock time in a round
  });

  test('the input digest chains the previous one with the sorted file digests', () => {
    const d1 = 'b'.repeat(64),
      d2 = 'a'.repeat(64);
    const expected = createHash('sha256')
      .update('prev')
      .update(Buffer.from([0]))
      .update(d2)
      .update(Buffer.from([0]))
      .update(d1)
      .digest('hex');
    expect(chainInputDigest('prev', [d1, d2])).toBe(expected);
  });

  test.each([
    ['the first line is not a header', (t: string) => t.split('\n').slice(1).join('\n'), /first line is not a header/],
    [
      'a second header',
      (t: string) => {
        const l = t.split('\n');
        return [l[0], l[0], ...l.slice(1)].join('\n');
      },
      /second header/,
    ],
    ['a line after the commit', (t: string) => t + '{"t":"node"}\n', /follows the commit/],
    ['an undecodable line', (t: string) => t.replace('{"t":"node"', '{"t":node'), /does not decode/],
    ['an unknown frame type', (t: string) => t.replace('"t":"node"', '"t":"nodule"'), /unknown frame type/],
    ['a wrong schema', (t: string) => t.replace('"schema":"sf/1"', '"schema":"sf/2"'), /schema/],
    ['round 0', (t: string) => t.replace('"round":1', '"round":0'), /round must be/],
    ['previous on round 1', (t: string) => t.replace('"round":1,', '"round":1,"previous":"x",'), /round 1 carries previous/],
    ['through_seq below from_seq minus one', (t: string) => t.replace('"through_seq":3', '"through_seq":-1'), /through_seq/],
    ['a revision other than the round', (t: string) => t.replace('"revision":1', '"revision":2'), /revision 2 differs/],
    ['a reference past through_seq', (t: string) => t.replace('"ref":{"seq":1,"row":2}', '"ref":{"seq":9,"row":2}'), /past through_seq/],
    ['a reference to sequence 0 row 0', (t: string) => t.replace('"ref":{"seq":1,"row":2}', '"ref":{"seq":0,"row":0}'), /sequence 0 row 0/],
    ['a missing commit', (t: string) => t.slice(0, t.lastIndexOf('{"t":"commit"')), /no commit/],
    ['a changed byte', (t: string) => t.replace('"kind":"tool"', '"kind":"tooo"'), /commit digest/],
    ['a relation with no from', (t: string) => t, /lacks type, from or to/],
  ])('the strict reader refuses %s', (name, mutate, error) => {
    const frames =
      name === 'a relation with no from'
        ? [{ t: 'relation', id: 'rel/x', revision: 1, type: 'starts', to: 'y', quality: 'exact_unique', via: 'v', evidence: [] } as unknown as EntityFrame]
        : [node('tool/a')];
    const text = mutate(encodeRound(header(1), frames).text);
    expect(() => decodeRound(text)).toThrow(error);
    expect(() => decodeRoundBytes(Buffer.from(text, 'utf8'))).toThrow(error); // the reader over a file's bytes, the same rules
  });

  test('an id twice in one round is refused', () => {
    const text = encodeRound(header(1), [node('tool/a'), node('tool/a')]).text;
    expect(() => decodeRound(text)).toThrow(/appears twice/);
  });

  test('the fold takes the next round only, naming the previous digest, under one parser and policy; tombstones remove; resolved stays', () => {
    const r1 = encodeRound(header(1), [
      node('tool/a'),
      { t: 'unresolved', id: 'unres/tool_result/a', revision: 1, kind: 'tool_result', ref: 'a', reason: 'r', state: 'open' },
    ]);
    const f = emptyFold();
    applyRound(f, decodeRound(r1.text));
    const r2 = encodeRound(header(2, { previous: r1.digest }), [
      { t: 'node', id: 'tool/a', revision: 2, tombstone: true },
      { t: 'unresolved', id: 'unres/tool_result/a', revision: 2, kind: 'tool_result', ref: 'a', reason: 'r', state: 'resolved' },
    ]);
    const wrongPrev = encodeRound(header(2, { previous: 'nope' }), []);
    expect(() => applyRound(f, decodeRound(wrongPrev.text))).toThrow(/previous/);
    const otherPolicy = encodeRound(header(2, { previous: r1.digest, policy: 'v1+idle=20m0s' }), []);
    expect(() => applyRound(f, decodeRound(otherPolicy.text))).toThrow(/policy/);
    const skip = encodeRound(header(3, { previous: r1.digest }), []);
    expect(() => applyRound(f, decodeRound(skip.text))).toThrow(/does not follow/);
    applyRound(f, decodeRound(r2.text));
    expect(f.entities.has('tool/a')).toBe(false);
    expect(f.entities.get('unres/tool_result/a')).toMatchObject({ state: 'resolved' });
  });

  test('ids join parts with /, leave out empty parts and turn a / inside a part into _', () => {
    expect(entityId('run', 'talk/main/8d53', '8d53')).toBe('run/talk_main_8d53/8d53');
    expect(entityId('epoch', 'main', '', '0')).toBe('epoch/main/0');
  });

  test('the glossary has an entry for every name assembly can emit', () => {
    for (const name of [...NODE_KINDS, ...RELATION_TYPES, ...UNRESOLVED_KINDS, 'exact_unique', 'exact_ambiguous', 'strong_inference']) {
      expect([name, TERMS[name] !== undefined]).toEqual([name, true]);
    }
  });
});
