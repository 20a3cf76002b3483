import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { SHARED } from '../helpers/cli.js';
import { parseScenario } from '../../src/scenario/model.js';

afterAll(cleanupTemp);

function tree(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) walk(p);
      else out[relative(dir, p)] = readFileSync(p, 'utf8');
    }
  };
  walk(dir);
  return out;
}

const FIXTURE = join(SHARED, 'conformance', 'scenarios', 'fixture.yaml');

describe('scenario build', () => {
  test('a fixed --at gives byte-identical output, in both formats', async () => {
    for (const format of ['claude-code', 'sd']) {
      const a = tempDir(),
        b = tempDir();
      for (const out of [a, b]) {
        const r = await runCli(['scenario', 'build', FIXTURE, '--format', format, '--out', out, '--at', '2026-06-01T09:00:00Z']);
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
      }
      const ta = tree(a),
        tb = tree(b);
      // A cursor records the inode and mtime of what it read, and the landing epoch is a fresh token
      // at every landing: collection state, not build output.
      const strip = (t: Record<string, string>, root: string) =>
        Object.fromEntries(
          Object.entries(t)
            .filter(([k]) => !k.endsWith('.cursor') && !k.startsWith('_conversations/.landing/'))
            .map(([k, v]) => [k, v.split(root).join('<root>')]),
        );
      expect(strip(ta, a)).toEqual(strip(tb, b));
      expect(Object.keys(ta).length).toBeGreaterThan(3);
    }
  });

  test('the claude-code build is a storage root the ordinary commands collect, parse and verify', async () => {
    const out = tempDir();
    await runCli(['scenario', 'build', FIXTURE, '--out', out, '--at', '2026-06-01T09:00:00Z', '--repeat', '3']);
    const cfg = join(out, 'aszcol.yaml');
    const c = await runCli(['collect', '--once', '--config', cfg]);
    expect(c.code).toBe(0);
    expect(c.stdout).toMatch(/sessions 3 /);
    const p = await runCli(['parse', '--config', cfg]);
    expect(p.code).toBe(0);
    expect(p.stdout.split('\n').filter((l) => /^00000001-0000-4000-8000-00000000000[123]\s+1\s/.test(l))).toHaveLength(3);
    expect((await runCli(['verify', '--config', cfg])).code).toBe(0);
  });

  test('--every with --repeat feeds whole sessions, each stamped to end now, each with a new id', async () => {
    const out = tempDir();
    const before = Date.now();
    const r = await runCli(['scenario', 'build', FIXTURE, '--out', out, '--every', '50ms', '--repeat', '2']);
    expect(r.code).toBe(0);
    const ids = [...r.stdout.matchAll(/built (\S+)/g)].map((m) => m[1]);
    expect(new Set(ids).size).toBe(2);
    const main = readFileSync(join(out, '_source', 'projects', '-Users-dev-01-full-conversation', `${ids[0]}.jsonl`), 'utf8')
      .trim()
      .split('\n');
    const times = main
      .map((l) => JSON.parse(l).timestamp)
      .filter(Boolean)
      .map((t: string) => Date.parse(t));
    expect(Math.max(...times)).toBeGreaterThanOrEqual(before - 1000);
    expect(Math.max(...times)).toBeLessThanOrEqual(Date.now() + 1000);
  });

  test('an unknown key in a scenario is an error with its path, never skipped', async () => {
    expect(() => parseScenario({ steps: [{ input: 'x', colour: 'red' }] }, 'x')).toThrow(/x\.steps\[0\].*unknown key "colour"/);
    expect(() => parseScenario({ steps: [{ call: { txt: 'x' } }] }, 'x')).toThrow(/steps\[0\]\.call.*unknown key "txt"/);
    const dir = tempDir();
    writeFileSync(join(dir, 'bad.yaml'), 'steps:\n  - input: hi\n');
    writeFileSync(join(dir, 'bad.expect.yaml'), 'checkpoints:\n  final:\n    kinds: {talk: 1}\n    colour: red\n');
    const r = await runCli(['scenario', 'check', join(dir, 'bad.yaml')]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/unknown key "colour"/);
  });

  test('a failing expectation prints expected, got and where, and exits non-zero', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'wrong.yaml'), 'steps:\n  - input: hi\n  - call: {text: hello}\n');
    writeFileSync(join(dir, 'wrong.expect.yaml'), 'checkpoints:\n  final:\n    kinds: {talk: 2}\n');
    const r = await runCli(['scenario', 'check', join(dir, 'wrong.yaml'), '--format', 'sd']);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/sd: final\.kinds\.talk\n\s+expected: 2\n\s+got:\s+1/);
  });
});
