/**
 * push.state remembers under which `hide` each file went to each receiver: appended as a `hide`
 * line above the request's files, kept through a rewrite (forgetting a removed file), read back by
 * a new reader, reset by a later whole send, and refused when it does not read. `sentUnder` is
 * what a pusher plans from: a file that went under another hide is not in it, so it goes again.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { appendFileSync, readFileSync } from 'node:fs';
import { PushState } from '../../src/storage/push-state.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const A = 'a'.repeat(64),
  B = 'b'.repeat(64),
  C = 'c'.repeat(64);
const GRPC = 'grpc://127.0.0.1:11800',
  HTTP = 'http://127.0.0.1:4318';

describe('push.state and hide', () => {
  test('each file is kept with the hide it went under, per receiver; sentUnder holds only the files of that exact hide', () => {
    const root = tempDir('aszcol-push-hide-');
    const s = new PushState(root);
    s.record(GRPC, [{ rel: 'x/transcript.sd', digest: A }], undefined, ['user_prompts', 'tool_outputs']);
    s.record(GRPC, [{ rel: 'x/otlp_log.sd', digest: B }]);
    s.record(HTTP, [{ rel: 'x/transcript.sd', digest: A }], undefined, ['api_bodies']);
    expect(readFileSync(s.path, 'utf8')).toContain(`endpoint ${GRPC}\nhide tool_outputs,user_prompts\npushed x/transcript.sd ${A}\n`);

    const fresh = new PushState(root);
    expect(fresh.hideOf(GRPC, 'x/transcript.sd')).toEqual(['tool_outputs', 'user_prompts']);
    expect(fresh.hideOf(GRPC, 'x/otlp_log.sd')).toEqual([]);
    expect(fresh.hideOf(HTTP, 'x/transcript.sd')).toEqual(['api_bodies']);
    expect([...fresh.sentUnder(GRPC, ['tool_outputs', 'user_prompts']).keys()]).toEqual(['x/transcript.sd']);
    expect([...fresh.sentUnder(GRPC, []).keys()]).toEqual(['x/otlp_log.sd']);
    expect([...fresh.sentUnder(HTTP, ['user_prompts']).keys()]).toEqual([]);
    // sent() is still every file, whatever hide it went under.
    expect([...fresh.sent(GRPC).keys()].sort()).toEqual(['x/otlp_log.sd', 'x/transcript.sd']);

    // Sent whole again: no hide is remembered for it any more.
    fresh.record(GRPC, [{ rel: 'x/transcript.sd', digest: A }]);
    expect(new PushState(root).hideOf(GRPC, 'x/transcript.sd')).toEqual([]);
  });

  test('a rewrite (forgetting a removed file) keeps every other file under its hide', () => {
    const root = tempDir('aszcol-push-hide-rewrite-');
    const s = new PushState(root);
    s.record(GRPC, [{ rel: 'x/a.sd', digest: A }], undefined, ['tool_inputs']);
    s.record(GRPC, [{ rel: 'x/b.sd', digest: B }]);
    s.record(GRPC, [{ rel: 'x/c.sd', digest: C }], undefined, ['tool_inputs']);
    expect(s.forgetFiles(new Set(['x/b.sd']))).toBe(1);
    const text = readFileSync(s.path, 'utf8');
    expect(text).not.toContain('x/b.sd');
    expect(text).toContain(`hide tool_inputs\npushed x/a.sd ${A}\npushed x/c.sd ${C}\n`);
    const fresh = new PushState(root);
    expect([...fresh.sentUnder(GRPC, ['tool_inputs']).keys()]).toEqual(['x/a.sd', 'x/c.sd']);
    expect([...fresh.sentUnder(GRPC, []).keys()]).toEqual([]);
  });

  test('a hide line that does not read, or a category name with a comma or space, is refused naming where', () => {
    const root = tempDir('aszcol-push-hide-bad-');
    const s = new PushState(root);
    s.record(GRPC, [{ rel: 'x/a.sd', digest: A }]);
    expect(() => s.record(GRPC, [{ rel: 'x/b.sd', digest: B }], undefined, ['tool inputs'])).toThrow('not a category name: "tool inputs"');
    appendFileSync(s.path, `endpoint ${GRPC}\nhide tool_inputs,,Bad\n`);
    expect(() => new PushState(root).sent(GRPC)).toThrow(/push\.state:5/);
  });
});
