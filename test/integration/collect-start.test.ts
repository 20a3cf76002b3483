/**
 * Issue 19: `aszcol collect --once` with nothing new is mostly the command's start, so the plain
 * one-shot form starts without commander, and on the configuration's remembered answer (the one
 * `aszcol parse` keeps, config-answers.ts) without the YAML reader or the component registry. These
 * scenarios read which way a run took from the modules it loaded (a loader hook, through
 * NODE_OPTIONS), and show that a changed or broken configuration is loaded and reported as before.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { oneShotCollectArgs } from '../../src/cli/collect-main.js';
import { runCli, writeConfig } from '../helpers/cli.js';
import { moduleListing, splitListing } from '../helpers/module-listing.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { rec, writeLines } from '../helpers/transcript.js';

afterAll(cleanupTemp);

const sid = (i: number) => `c011ec70-1111-4222-8333-${String(i).padStart(12, '0')}`;
const HEAVY = ['/yaml/', '/commander/', '/service/registry.js', '/service/config.js', '/cli/context.js', '/cli/main.js'];

async function collectCli(args: string[], env: NodeJS.ProcessEnv) {
  const r = await runCli(args, { env });
  const { loaded, stderr } = splitListing(r.stderr);
  return { code: r.code, stdout: r.stdout, stderr, heavy: loaded.filter((u) => HEAVY.some((h) => u.includes(h))) };
}

function history(base: string) {
  const root = join(base, 'data');
  const src = join(base, 'projects');
  mkdirSync(src, { recursive: true });
  const config = writeConfig(base, root, src);
  for (let i = 0; i < 2; i++) writeLines(join(src, '-p', `${sid(i)}.jsonl`), [rec.user(sid(i), `hello ${i}`)]);
  return { root, src, config };
}

describe('collect --once starts on what it needs', () => {
  test('the configuration is loaded once and remembered; the next collect and parse start without the YAML reader, commander or registry', async () => {
    const base = tempDir('aszcol-collect-start-');
    const env = { XDG_CACHE_HOME: join(base, 'cache'), NODE_OPTIONS: moduleListing(base) };
    const { src, config } = history(base);
    const first = await collectCli(['collect', '--once', '--json', '--config', config], env);
    expect(first).toMatchObject({ code: 0, stderr: '' });
    expect(first.heavy.some((u) => u.endsWith('/service/config.js'))).toBe(true);
    expect(first.heavy.filter((u) => u.includes('/commander/'))).toEqual([]);
    expect(JSON.parse(first.stdout)).toMatchObject({ sessions: 2, landedFiles: 2 });

    writeLines(join(src, '-p', `${sid(0)}.jsonl`), [rec.user(sid(0), 'again')], { append: true });
    const second = await collectCli(['collect', '--once', '--json', '--config', config], env);
    expect(second).toMatchObject({ code: 0, stderr: '', heavy: [] });
    expect(JSON.parse(second.stdout)).toMatchObject({ sessions: 2, landedFiles: 1, errors: [] });

    // The answer collect remembered serves parse as well (the same configuration, directory, variables and build).
    const parse = await collectCli(['parse', '--config', config], env);
    expect(parse).toMatchObject({ code: 0, heavy: [] });
  }, 120_000);

  test('a changed configuration is loaded again, and a broken one exits 2 with its error, remembered answer or not', async () => {
    const base = tempDir('aszcol-collect-start-');
    const env = { XDG_CACHE_HOME: join(base, 'cache'), NODE_OPTIONS: moduleListing(base) };
    const { root, src, config } = history(base);
    expect((await collectCli(['collect', '--once', '--config', config], env)).code).toBe(0);

    // Another source root in the file: the long way reads it, and the sessions found there land.
    const other = join(base, 'other');
    writeLines(join(other, '-q', `${sid(7)}.jsonl`), [rec.user(sid(7), 'elsewhere')]);
    writeConfig(base, root, other);
    const moved = await collectCli(['collect', '--once', '--json', '--config', config], env);
    expect(moved.heavy.some((u) => u.endsWith('/service/config.js'))).toBe(true);
    expect(JSON.parse(moved.stdout)).toMatchObject({ sessions: 1, landedFiles: 1 });

    writeFileSync(
      config,
      `storage:\n  root: ${JSON.stringify(root)}\nreceivers:\n  claude_code_local:\n    source_root: ${JSON.stringify(src)}\n    intervall: 5s\n`,
    );
    const broken = await collectCli(['collect', '--once', '--config', config], env);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/configuration error: .*intervall/);
  }, 120_000);

  test('only the plain one-shot form is taken; the watching collect, help or anything unknown is commander’s', async () => {
    expect(oneShotCollectArgs(['collect', '--once'])).toEqual({ once: true });
    expect(oneShotCollectArgs(['collect', '--json', '--config=a.yaml', '--once'])).toEqual({ once: true, json: true, config: 'a.yaml' });
    expect(oneShotCollectArgs(['collect', '--once', '--config', 'a.yaml'])).toEqual({ once: true, config: 'a.yaml' });
    for (const argv of [
      ['collect'],
      ['collect', '--json'],
      ['collect', '--once', '--help'],
      ['collect', '--once', '--config'],
      ['collect', '--once', '--bogus'],
    ])
      expect(oneShotCollectArgs(argv)).toBeUndefined();
    const unknown = await runCli(['collect', '--once', '--bogus']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain("unknown option '--bogus'");
    const help = await runCli(['collect', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('--once');
  }, 60_000);
});
