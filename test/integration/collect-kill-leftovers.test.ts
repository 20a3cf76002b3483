/**
 * What a killed run leaves behind (issue 13, M1 and M2), with real kills: `collect --once` with
 * ASZCOL_TEST_CRASH_AFTER_LAND dies by SIGKILL right after landing a file, before its cursor
 * commits. The next run lands nothing twice and leaves no temporary file behind.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { landedFiles } from '../helpers/root.js';

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
});
