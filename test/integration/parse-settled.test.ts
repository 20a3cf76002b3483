/**
 * `aszcol parse` with nothing new (issue 19): a session whose landed evidence did not advance past
 * its chain is answered from the chain's cached head and the summary counted at that head, without
 * reading its index or rounds; anything that advanced, or a cache that does not match, is parsed.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { chmodSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { landingNow } from '../../src/storage/landing-epoch.js';
import { loadSettledStamps } from '../../src/storage/settled-stamps-read.js';
import { PARSER, POLICY } from '../../src/formats/session-flow/types.js';
import { cliRoot, runCli } from '../helpers/cli.js';
import { cleanupTemp } from '../helpers/tmp.js';
import { rec, writeLines } from '../helpers/transcript.js';

afterAll(cleanupTemp);

const sid = (i: number) => `0438c73b-3333-4444-8555-${String(i).padStart(12, '0')}`;

interface Row {
  session: string;
  status: string;
  rounds: unknown[];
  throughSeq: number;
  head: number;
  summary: Record<string, unknown>;
}

async function parse(config: string): Promise<Map<string, Row>> {
  const p = await runCli(['parse', '--config', config, '--json']);
  expect(p.stderr).toBe('');
  expect(p.code).toBe(0);
  return new Map((JSON.parse(p.stdout) as Row[]).map((r) => [r.session, r]));
}

describe('parse with nothing new', () => {
  test('a settled session is answered without reading its rounds, with the summary a full parse gives; a session that advanced is parsed', async () => {
    const { root, src, config } = cliRoot('aszcol-parse-settled-');
    for (let i = 0; i < 3; i++) writeLines(join(src, '-p', `${sid(i)}.jsonl`), [rec.user(sid(i), `first ${i}`), rec.user(sid(i), `second ${i}`)]);
    expect((await runCli(['collect', '--once', '--config', config])).code).toBe(0);
    const first = await parse(config);
    expect([...first.values()].map((r) => r.status)).toEqual(['written', 'written', 'written']);

    // The head round of session 0 no longer reads: a parse that opened it would fail.
    const rounds = join(root, '_conversations', sid(0), 'rounds');
    const [head] = readdirSync(rounds);
    chmodSync(join(rounds, head!), 0o644);
    writeFileSync(join(rounds, head!), 'not a round\n');

    // Session 2 advances: one more prompt landed.
    writeLines(join(src, '-p', `${sid(2)}.jsonl`), [rec.user(sid(2), 'third 2')], { append: true });
    expect((await runCli(['collect', '--once', '--config', config])).code).toBe(0);

    const second = await parse(config);
    for (const i of [0, 1]) {
      const r = second.get(sid(i))!;
      expect(r).toMatchObject({ status: 'unchanged', rounds: [], throughSeq: 1, head: 1 });
      expect(r.summary).toEqual(first.get(sid(i))!.summary);
    }
    expect(second.get(sid(2))).toMatchObject({ status: 'written', throughSeq: 2, head: 2 });
    expect(second.get(sid(2))!.summary).toMatchObject({ talks: 3 });

    // Without its cached summary, session 1 is parsed in full and gives the same answer.
    rmSync(join(root, '_conversations', sid(1), 'parse.summary'));
    const third = await parse(config);
    expect(third.get(sid(1))).toMatchObject({ status: 'unchanged', summary: first.get(sid(1))!.summary });
  }, 120_000);

  test('an index deleted under a settled chain is rebuilt by the next parse, though no writer landed since the epoch was recorded', async () => {
    const { root, src, config } = cliRoot('aszcol-parse-settled-');
    writeLines(join(src, '-p', `${sid(9)}.jsonl`), [rec.user(sid(9), 'only')]);
    expect((await runCli(['collect', '--once', '--config', config])).code).toBe(0);
    await parse(config);
    await parse(config); // answered from the recorded epoch: the stamps and one look at each session's index
    const epoch = landingNow(root);
    expect(loadSettledStamps(root, PARSER, POLICY)?.landed?.epoch).toBe(epoch.epoch);

    // By hand, the whole index directory: the epoch does not move, the index directory's stat does.
    rmSync(join(root, sid(9), 'index'), { recursive: true });
    expect((await parse(config)).get(sid(9))).toMatchObject({ status: 'unchanged', throughSeq: 1 });
    expect(readdirSync(join(root, sid(9), 'index')).sort()).toEqual(['entries.bin']);
    expect(landingNow(root).epoch).toBe(epoch.epoch);
  }, 120_000);
});
