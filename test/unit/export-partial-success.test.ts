/**
 * A partial success in push.state: asz 0.6's `rejected <path>` line for each file of a request a
 * receiver took while rejecting part of it, with the receiver's reason on a `reason` line above,
 * kept through a reload and a rewrite, read alongside asz's own reason-less lines.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { PushState, reasonLine } from '../../src/storage/push-state.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const digest = (s: string) => createHash('sha256').update(s).digest('hex');

describe('push.state after a partial success', () => {
  test('the request is recorded as pushed, and each of its files as rejected with the reason, in lines asz reads', async () => {
    const root = tempDir();
    const s = new PushState(root);
    s.record('grpc://oap:11800', [{ rel: 'a/1.sd', digest: digest('1') }]);
    await s.recordAsync(
      'grpc://oap:11800',
      [
        { rel: 'a/2.sd', digest: digest('2') },
        { rel: 'a/3.sd', digest: digest('3') },
      ],
      {
        reason: "grpc://oap:11800 rejected 1 of the request's log records: digest mismatch\nsecond line",
        files: ['a/2.sd', 'a/3.sd'],
      },
    );
    const text = readFileSync(join(root, 'push.state'), 'utf8');
    // asz's own line for each file, exactly `rejected <path>`.
    expect(text.match(/^rejected .*$/gm)).toEqual(['rejected a/2.sd', 'rejected a/3.sd']);
    expect(text).toContain("reason grpc://oap:11800 rejected 1 of the request's log records: digest mismatch second line\n");
    const again = new PushState(root);
    expect([...again.sent('grpc://oap:11800').keys()].sort()).toEqual(['a/1.sd', 'a/2.sd', 'a/3.sd']);
    expect(again.allRejected()).toEqual([
      { endpoint: 'grpc://oap:11800', rel: 'a/2.sd', reason: "grpc://oap:11800 rejected 1 of the request's log records: digest mismatch second line" },
      { endpoint: 'grpc://oap:11800', rel: 'a/3.sd', reason: "grpc://oap:11800 rejected 1 of the request's log records: digest mismatch second line" },
    ]);
    expect(again.rejected('http://other:12800').size).toBe(0);
  });

  test('rejections survive the rewrite that groups appends by endpoint, and go with a forgotten file', () => {
    const root = tempDir();
    const s = new PushState(root);
    s.record('e', [{ rel: 'r.sd', digest: digest('r') }], { reason: 'bad record', files: ['r.sd'] });
    for (let n = 0; n < 80; n++) s.record(n % 2 ? 'e' : 'f', [{ rel: `f${n}`, digest: digest(String(n)) }]);
    expect(readFileSync(join(root, 'push.state'), 'utf8').match(/^endpoint /gm)!.length).toBeLessThan(30);
    expect(new PushState(root).rejected('e').get('r.sd')).toBe('bad record');
    s.forgetFiles(new Set(['r.sd']));
    expect(new PushState(root).allRejected()).toEqual([]);
  });

  test("asz's rejected lines without a reason read as such; a reason belongs to its endpoint only", () => {
    const root = tempDir();
    writeFileSync(
      join(root, 'push.state'),
      `schema 1\nendpoint e\npushed x.sd ${digest('x')}\nreason too old\nrejected x.sd\nendpoint g\npushed y.sd ${digest('y')}\nrejected y.sd\n`,
    );
    const s = new PushState(root);
    expect(s.allRejected()).toEqual([
      { endpoint: 'e', rel: 'x.sd', reason: 'too old' },
      { endpoint: 'g', rel: 'y.sd', reason: 'no reason recorded' },
    ]);
  });

  test("a rejected file must be one of the request's files; a reason is one bounded line", () => {
    const s = new PushState(tempDir());
    expect(() => s.record('e', [{ rel: 'a.sd', digest: digest('a') }], { reason: 'r', files: ['b.sd'] })).toThrow(/one of the request's files/);
    expect(reasonLine('a\r\nb\u0000c')).toBe('a b c');
    expect(reasonLine('x'.repeat(600))).toHaveLength(500);
    expect(reasonLine('  ')).toBe('no reason given');
  });
});
