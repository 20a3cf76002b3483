import { afterAll, describe, expect, test } from '@jest/globals';
import { readdirSync, rmSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { TranscriptBuilder, mainPath } from '../helpers/cc.js';
import { encodeRound } from '../../src/formats/session-flow/encode.js';
import { roundName } from '../../src/storage/chain.js';

afterAll(cleanupTemp);

const S = '0438c73b-1111-4222-8333-444455556666';

function setup() {
  const base = tempDir();
  const root = join(base, 'data');
  const src = join(base, 'projects');
  const config = writeConfig(base, root, src);
  const t = new TranscriptBuilder(S);
  t.prompt('hello', 'p1');
  t.fragment('msg_1', { type: 'tool_use', id: 'tu_1', name: 'Bash', input: { command: 'ls' } }, { stop: 'tool_use' });
  t.result('tu_1', 'a b', 'p1', { toolUseResult: { stdout: 'a b' } });
  t.fragment('msg_2', { type: 'text', text: 'done' });
  t.write(mainPath(src, '-p', S));
  return { root, src, config, t };
}

const roundsOf = (root: string) =>
  readdirSync(join(root, '_conversations', S, 'rounds'))
    .filter((n) => n.endsWith('.sf'))
    .sort();

describe('the round chain through the CLI', () => {
  test('four parsers at once write exactly one round; it is read-only', async () => {
    const { root, config } = setup();
    expect((await runCli(['collect', '--once', '--config', config])).code).toBe(0);
    const results = await Promise.all([1, 2, 3, 4].map(() => runCli(['parse', '--config', config])));
    expect(roundsOf(root)).toHaveLength(1);
    for (const r of results) expect(r.stderr === '' || /another parser holds/.test(r.stderr)).toBe(true);
    expect(statSync(join(root, '_conversations', S, 'rounds', roundsOf(root)[0]!)).mode & 0o777).toBe(0o444);
    expect((await runCli(['verify', '--config', config])).code).toBe(0);
  });

  test('the head is recovered by listing when conversation.state is lost; a later round extends it', async () => {
    const { root, src, config, t } = setup();
    await runCli(['collect', '--once', '--config', config]);
    await runCli(['parse', '--config', config]);
    rmSync(join(root, '_conversations', S, 'conversation.state'));
    t.prompt('again', 'p2');
    t.fragment('msg_3', { type: 'text', text: 'sure' });
    t.write(mainPath(src, '-p', S));
    await runCli(['collect', '--once', '--config', config]);
    const p = await runCli(['parse', '--config', config]);
    expect(p.code).toBe(0);
    expect(p.stdout).toMatch(new RegExp(`${S}\\s+2\\s+2`));
    expect(roundsOf(root)).toHaveLength(2);
    const v = await runCli(['verify', '--config', config]);
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/1 conversation chain\(s\), 2 round\(s\)/);
  });

  test('the index is disposable: deleted, it is rebuilt and the next parse agrees with the chain', async () => {
    const { root, config } = setup();
    await runCli(['collect', '--once', '--config', config]);
    await runCli(['parse', '--config', config]);
    rmSync(join(root, S, 'index'), { recursive: true });
    const p = await runCli(['parse', '--config', config]);
    expect(p.code).toBe(0);
    expect(p.stdout).toMatch(new RegExp(`${S}\\s+-\\s+1`)); // nothing changed: no round
    expect(roundsOf(root)).toHaveLength(1);
  });

  test('a chain built by another parser or policy is refused, not extended', async () => {
    const { root, config } = setup();
    await runCli(['collect', '--once', '--config', config]);
    const dir = join(root, '_conversations', S, 'rounds');
    mkdirSync(dir, { recursive: true });
    const { text, digest } = encodeRound(
      {
        t: 'header',
        schema: 'sf/1',
        conversation: S,
        session: S,
        round: 1,
        from_seq: 1,
        through_seq: 0,
        input_digest: 'x',
        parser: 'v1',
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
      },
      [],
    );
    writeFileSync(join(dir, roundName(1, digest)), text);
    const p = await runCli(['parse', '--config', config]);
    expect(p.code).toBe(1);
    expect(p.stderr).toMatch(/built by parser v1/);
    expect(roundsOf(root)).toHaveLength(1);
  });

  test('verify finds a tampered round and a skipped landed range', async () => {
    const { root, config } = setup();
    await runCli(['collect', '--once', '--config', config]);
    await runCli(['parse', '--config', config]);
    const name = roundsOf(root)[0]!;
    const path = join(root, '_conversations', S, 'rounds', name);
    const { chmodSync, readFileSync } = await import('node:fs');
    chmodSync(path, 0o644);
    writeFileSync(path, readFileSync(path, 'utf8').replace('"name":"Bash"', '"name":"Bosh"'));
    const v = await runCli(['verify', '--config', config]);
    expect(v.code).toBe(1);
    expect(v.stderr).toMatch(/commit digest/);
  });
});
