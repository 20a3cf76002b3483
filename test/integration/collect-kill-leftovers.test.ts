/**
 * What a killed run leaves behind (issue 13, M1 and M2), with real kills: `collect --once` with
 * ASZCOL_TEST_CRASH_AFTER_LAND dies by SIGKILL right after landing a file, before its cursor
 * commits. The next run lands nothing twice and leaves no temporary file behind.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { collectAndParse, runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { landedFiles } from '../helpers/root.js';
import { rec, writeLines } from '../helpers/transcript.js';

afterAll(cleanupTemp);

const S = '0438c73b-1111-4222-8333-000000000007';
const A1 = 'a687426e8a37aa323';

function setup() {
  const base = tempDir('aszcol-kill-');
  const root = join(base, 'data');
  const src = join(base, 'projects');
  mkdirSync(src, { recursive: true });
  return { root, src, config: writeConfig(base, root, src) };
}

describe('a killed collect', () => {
  test('an unchanged sidecar killed between landing and its cursor lands once, and verify finds nothing re-landed', async () => {
    const { root, src, config } = setup();
    const dir = join(src, '-p', S, 'subagents');
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, `agent-${A1}.meta.json`), JSON.stringify({ description: 'helper', toolUseId: 'toolu_1' }));

    const killed = await runCli(['collect', '--once', '--config', config], { env: { ASZCOL_TEST_CRASH_AFTER_LAND: '1' } });
    expect(killed.code).toBe(137);
    expect(landedFiles(root, S)).toHaveLength(1);
    const next = await runCli(['collect', '--once', '--config', config]);
    expect(next.code).toBe(0);
    expect(next.stdout).toMatch(/landed 0 file\(s\)/);
    expect(landedFiles(root, S).map((f) => f.header.kind)).toEqual(['agent_meta']);
    const v = await runCli(['verify', '--config', config, '--json']);
    expect(JSON.parse(v.stdout)).toMatchObject({ problems: [], relanded: 0, files: 1 });
  });

  test("temporary files a killed run left are listed by verify, and removed by the next collect and parse; a live writer's are kept", async () => {
    const { root, src, config } = setup();
    writeLines(join(src, '-p', `${S}.jsonl`), [rec.user(S, 'hello')]);
    await collectAndParse(config);

    const dead = spawnSync(process.execPath, ['-e', '']).pid; // a process that has exited: its pid names no writer
    const leftovers = [
      join(root, S, 'streams', 'main', `.tmp-transcript-20260831T091204.481523000Z-000009.sd-${dead}-abcd1234`),
      join(root, S, 'index', `.tmp-entries.bin-${dead}-0badf00d`),
      join(root, S, `.tmp-session.state-${dead}-12345678`),
      join(root, '_conversations', S, 'rounds', `.tmp-r000002-0123456789ab.sf-${dead}-deadbeef`),
    ];
    const live = join(root, S, 'streams', 'main', `.tmp-transcript.cursor-${process.pid}-cafebabe`); // this test process: alive
    const journal = join(root, '_journal', 'otlp', `.tmp-landed.state-${dead}-feedf00d`); // no pass of ours sweeps the journal
    for (const p of [...leftovers, live, journal]) {
      mkdirSync(join(p, '..'), { recursive: true });
      writeFileSync(p, 'partial');
    }

    const before = await runCli(['verify', '--config', config, '--json']);
    expect(before.code).toBe(1);
    const report = JSON.parse(before.stdout) as { temporaries: { path: string; writer: string }[]; problems: string[] };
    expect(report.temporaries.map((t) => [t.path, t.writer]).sort()).toEqual([...leftovers.map((p) => [p, 'gone']), [live, 'alive'], [journal, 'gone']].sort());
    expect(report.problems).toHaveLength(leftovers.length);
    for (const p of leftovers) expect(report.problems).toContainEqual(expect.stringContaining(`${p}: a temporary file left by a writer that is gone`));

    expect((await runCli(['collect', '--once', '--config', config])).code).toBe(0);
    expect(leftovers.slice(0, 3).filter(existsSync)).toEqual([]);
    expect(existsSync(live)).toBe(true);
    expect((await runCli(['parse', '--config', config])).code).toBe(0);
    expect(existsSync(leftovers[3]!)).toBe(false);

    const after = await runCli(['verify', '--config', config]);
    expect(after.code).toBe(0);
    expect(after.stdout).toMatch(/2 temporary file\(s\) found/);
    expect(after.stdout).toContain(`warning: temporary file ${live} (its writer is running, pid ${process.pid})`);
  });
});
