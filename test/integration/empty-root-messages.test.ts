/** A command that reads the storage root and finds nothing says which root it read, so a missing or wrong --config is obvious. */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

describe('an empty storage root', () => {
  const base = tempDir('aszcol-empty-root-');
  const root = join(base, 'data');
  const src = join(base, 'projects');
  mkdirSync(src, { recursive: true });
  const config = writeConfig(base, root, src);

  test('parse, conversation and verify each name the root they read', async () => {
    const parse = await runCli(['parse', '--config', config]);
    expect(parse.code).toBe(0);
    expect(parse.stderr).toContain(`no landed session under ${root} (the storage root of ${config})`);

    const conv = await runCli(['conversation', '7e1f0c2a-2222-4333-8444-000000000001', '--config', config]);
    expect(conv.code).toBe(1);
    expect(conv.stderr).toContain(`no rounds under ${root} (the storage root of ${config}`);

    const verify = await runCli(['verify', '--config', config]);
    expect(verify.code).toBe(0);
    expect(verify.stdout).toContain(`checked 0 session(s), 0 stream(s), 0 file(s), 0 record(s) under ${root}`);
  });
});
