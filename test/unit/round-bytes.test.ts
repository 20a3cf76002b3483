/**
 * A chain is folded from its round files' bytes (`decodeRoundBytes`): the digest is taken over the
 * bytes once instead of line by line, and ASCII is read without a UTF-8 pass. It must give exactly
 * what the text reader gives, refuse exactly what it refuses, and not let bytes that are not UTF-8
 * through just because a digest was computed over them.
 */
import { describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { decodeRound, decodeRoundBytes } from '../../src/formats/session-flow/decode.js';
import { encodeRound } from '../../src/formats/session-flow/encode.js';
import type { EntityFrame, RoundHeader } from '../../src/formats/session-flow/types.js';

const header = (extra: Partial<RoundHeader> = {}): RoundHeader => ({
  t: 'header',
  schema: 'sf/1',
  conversation: 'c',
  session: 'c',
  round: 1,
  from_seq: 1,
  through_seq: 4,
  input_digest: 'd',
  parser: 'aszcol-v1',
  policy: 'v1+idle=10m0s',
  talks: 1,
  steps: 2,
  streams: 1,
  segments: 1,
  unresolved: 1,
  changes: 0,
  lines_added: 0,
  lines_removed: 0,
  llm_calls: 1,
  subagents: 0,
  bash_runs: 1,
  ...extra,
});

function frames(text: string): EntityFrame[] {
  return [
    {
      t: 'node',
      id: 'call/m1',
      revision: 1,
      kind: 'llm.call',
      parent: 'run/r',
      stream: 'main',
      ref: { seq: 1, row: 2 },
      refs: [
        { seq: 1, row: 2 },
        { seq: 2, row: 1, block: 0 },
      ],
      attrs: { fragments: 2, usage_at: { seq: 1, row: 2 }, note: text },
    },
    { t: 'node', id: 'tool/tu1', revision: 1, kind: 'tool', parent: 'call/m1', ref: { seq: 1, row: 3 }, attrs: { name: 'Bash', ok: true } },
    { t: 'relation', id: 'rel/starts/a/b', revision: 1, type: 'starts', from: 'a', to: 'b', quality: 'exact_unique', via: 'v', evidence: [{ seq: 3, row: 1 }] },
    { t: 'unresolved', id: 'unres/tool_result/x', revision: 1, kind: 'tool_result', ref: 'x', reason: `no call holds it: ${text}`, state: 'open' },
  ];
}

describe('reading a round from its bytes', () => {
  test.each([
    ['ASCII only', 'plain words'],
    ['accents, a dash, a check mark and an emoji', 'naïve — ✓ 🚀'],
  ])('the bytes reader gives the text reader’s round, frame for frame (%s)', (_, text) => {
    const written = encodeRound(header({ title: text }), frames(text));
    const fromBytes = decodeRoundBytes(Buffer.from(written.text, 'utf8'));
    expect(fromBytes).toEqual(decodeRound(written.text));
    expect(fromBytes.commit.digest).toBe(written.digest); // the writer's own digest, not only the two readers agreeing
    expect(fromBytes.header.title).toBe(text);
    expect(fromBytes.frames[0]).toMatchObject({ attrs: { note: text } });
  });

  test('bytes that are not UTF-8 are refused as their text is, even under a digest of those very bytes', () => {
    const text = encodeRound(header(), frames('café')).text;
    const utf8 = Buffer.from(text, 'utf8');
    const at = utf8.indexOf(Buffer.from('é', 'utf8'));
    // The same text with é as one latin1 byte: not UTF-8. Its commit is rewritten to digest these bytes.
    const body = Buffer.concat([utf8.subarray(0, at), Buffer.from([0xe9]), utf8.subarray(at + 2, utf8.lastIndexOf('{"t":"commit"'))]);
    const digest = createHash('sha256').update(body).digest('hex');
    const commit = JSON.stringify({ t: 'commit', digest, counts: { nodes: 2, relations: 1, unresolved: 1 } });
    const bytes = Buffer.concat([body, Buffer.from(commit + '\n')]);
    expect(() => decodeRound(bytes.toString('utf8'))).toThrow(/commit digest/);
    expect(() => decodeRoundBytes(bytes, 'r000001.sf')).toThrow(/r000001\.sf: commit digest [0-9a-f]{64} does not match/);
  });

  /** A round's text with one piece replaced and its commit digest made right again, as a careless writer would leave it. */
  function rewritten(text: string, from: string, to: string): string {
    expect(text).toContain(from);
    const changed = text.replace(from, to);
    const cut = changed.lastIndexOf('{"t":"commit"');
    const commit = JSON.parse(changed.slice(cut)) as { digest: string };
    commit.digest = createHash('sha256').update(changed.slice(0, cut)).digest('hex');
    return changed.slice(0, cut) + JSON.stringify(commit) + '\n';
  }

  test.each([
    ['refs', '"refs":[{"seq":1,"row":2},{"seq":2,"row":1,"block":0}]', '"refs":{"seq":1,"row":2}', /call\/m1: refs is not a list/],
    ['evidence', '"evidence":[{"seq":3,"row":1}]', '"evidence":"seq 3 row 1"', /rel\/starts\/a\/b: evidence is not a list/],
  ])('a frame whose %s is not a list is refused by name', (_, from, to, error) => {
    const text = rewritten(encodeRound(header(), frames('x')).text, from, to);
    expect(() => decodeRound(text)).toThrow(error);
    expect(() => decodeRoundBytes(Buffer.from(text, 'utf8'))).toThrow(error);
  });
});
