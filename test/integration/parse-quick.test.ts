/**
 * Issue 19: `aszcol parse` with nothing new is answered from the settled stamps with nothing else
 * loaded — no YAML reader, no commander, no component registry — because the configuration's
 * answer (its storage root) is remembered from the last parse that loaded it. These scenarios hold
 * the quick answer to the long way's own output, byte for byte, and show that everything that
 * decided the configuration (its text, an environment variable it reads, the working directory it
 * resolves against) and every session that moved sends the parse the long way again. Which way a
 * run took is read from the modules it loaded (a loader hook, through NODE_OPTIONS).
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, type CliResult } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { rec, writeLines } from '../helpers/transcript.js';
import { settledRoot, settledSid } from '../helpers/settled-root.js';
import { moduleListing, splitListing } from '../helpers/module-listing.js';
import { runParse } from '../../src/cli/parse.js';
import { recordingEnv } from '../../src/cli/config-answers.js';
import { wholeRootParseArgs } from '../../src/cli/parse-quick.js';

afterAll(cleanupTemp);

const sid = settledSid;
interface Run extends CliResult {
  loaded: string[];
  /** Whether the configuration was loaded (no remembered answer was used). */
  longWay: boolean;
  /** Whether the sessions were looked at the long way (parse-all), not answered from the stamps alone. */
  parsed: boolean;
}

/** `aszcol parse …` as a user runs it, with the modules it loaded split off its stderr. */
async function parseCli(args: string[], env: NodeJS.ProcessEnv, cwd?: string): Promise<Run> {
  const r = await runCli(['parse', ...args], { env, ...(cwd ? { cwd } : {}) });
  const { loaded, stderr } = splitListing(r.stderr);
  return {
    ...r,
    stderr,
    loaded,
    longWay: loaded.some((u) => u.endsWith('/service/config.js')),
    parsed: loaded.some((u) => u.endsWith('/assembler/parse-all.js')),
  };
}

/** What the long way prints for the same arguments, run in this process. */
async function longWay(config: string, json: boolean): Promise<{ code: number; out: string; err: string }> {
  let out = '',
    err = '';
  const code = await runParse(undefined, { config, json }, { out: (l) => (out += l + '\n'), err: (l) => (err += l + '\n') });
  return { code, out, err };
}

describe('aszcol parse with nothing new, answered quickly', () => {
  test('the quick answer prints what the long way prints, byte for byte, and loads no configuration reader, commander nor registry', async () => {
    const base = tempDir('aszcol-parse-quick-');
    const env = { XDG_CACHE_HOME: join(base, 'cache'), NODE_OPTIONS: moduleListing(base) };
    const { config } = await settledRoot(base, 3, env);
    for (const json of [true, false]) {
      const quick = await parseCli([...(json ? ['--json'] : []), '--config', config], env);
      expect([quick.longWay, quick.parsed]).toEqual([false, false]);
      for (const heavy of ['/yaml/', '/commander/', '/service/registry.js', '/cli/context.js', '/assemble/'])
        expect(quick.loaded.filter((u) => u.includes(heavy))).toEqual([]);
      const reference = await longWay(config, json);
      expect({ code: quick.code, out: quick.stdout, err: quick.stderr }).toEqual({ ...reference, err: '' });
      expect(reference.err).toBe('');
    }
    const rows = JSON.parse((await parseCli(['--json', '--config', config], env)).stdout) as { session: string; status: string }[];
    expect(rows.map((r) => [r.session, r.status])).toEqual([0, 1, 2].map((i) => [sid(i), 'unchanged']));
  });

  test('a session that advanced, a new one and a removed one each send the parse the long way, which parses them on the remembered root', async () => {
    const base = tempDir('aszcol-parse-quick-');
    const env = { XDG_CACHE_HOME: join(base, 'cache'), NODE_OPTIONS: moduleListing(base) };
    const { root, src, config } = await settledRoot(base, 2, env);
    expect((await parseCli(['--config', config], env)).parsed).toBe(false);

    writeLines(join(src, '-p', `${sid(0)}.jsonl`), [rec.user(sid(0), 'one more')], { append: true });
    writeLines(join(src, '-p', `${sid(2)}.jsonl`), [rec.user(sid(2), 'a new session')]);
    expect((await runCli(['collect', '--once', '--config', config], { env })).code).toBe(0);
    const moved = await parseCli(['--json', '--config', config], env);
    expect([moved.longWay, moved.parsed]).toEqual([false, true]);
    const statuses = Object.fromEntries((JSON.parse(moved.stdout) as { session: string; status: string }[]).map((r) => [r.session, r.status]));
    expect(statuses).toEqual({ [sid(0)]: 'written', [sid(1)]: 'unchanged', [sid(2)]: 'written' });

    // The parse that wrote them waited for its writes to leave the clock's grain and stamped them: the next one is quick.
    expect((await parseCli(['--config', config], env)).parsed).toBe(false);
    // A stamped session removed from the root: its stamp no longer answers for the root, the long way drops it.
    rmSync(join(root, sid(1)), { recursive: true });
    const dropped = await parseCli(['--json', '--config', config], env);
    expect(dropped.parsed).toBe(true);
    expect((JSON.parse(dropped.stdout) as { session: string }[]).map((r) => r.session)).toEqual([sid(0), sid(2)]);
  });

  test('a changed configuration, a changed variable it reads and another working directory each take the long way, with their own root', async () => {
    const base = tempDir('aszcol-parse-quick-');
    const listing = moduleListing(base);
    const envA = { XDG_CACHE_HOME: join(base, 'cache'), NODE_OPTIONS: listing, ASZ_TEST_ROOT: join(base, 'data') };
    const { config, src } = await settledRoot(
      base,
      2,
      envA,
      (_root, source) =>
        `storage:\n  root: \${env:ASZ_TEST_ROOT}\nreceivers:\n  claude_code_local:\n    source_root: ${JSON.stringify(source)}\n    exclude: []\n`,
    );
    expect((await parseCli(['--json', '--config', config], envA)).longWay).toBe(false);

    // The same text, the variable pointing at an empty root: the long way, answering for that root (the remembered one would print two sessions).
    const envB = { ...envA, ASZ_TEST_ROOT: join(base, 'other') };
    const other = await parseCli(['--json', '--config', config], envB);
    expect(other.longWay).toBe(true);
    expect(other.stdout.trim()).toBe('[]');
    expect(other.stderr).toContain(`no landed session under ${join(base, 'other')}`);
    expect((await parseCli(['--json', '--config', config], envA)).longWay).toBe(true); // the answer kept is B's now
    expect((await parseCli(['--json', '--config', config], envA)).longWay).toBe(false);

    // The text changed into a configuration with a problem: reported as the long way always did, exit 2.
    const text = readFileSync(config, 'utf8');
    writeFileSync(config, text + 'processors:\n  assembler:\n    max_round_bytes: lots\n');
    const bad = await parseCli(['--config', config], envA);
    expect(bad.longWay).toBe(true);
    expect(bad.code).toBe(2);
    writeFileSync(config, text);

    // A relative root resolves against the working directory: another directory is another root.
    const rel = join(base, 'relative.yaml');
    writeFileSync(rel, `storage:\n  root: ./data\nreceivers:\n  claude_code_local:\n    source_root: ${JSON.stringify(src)}\n    exclude: []\n`);
    expect((await parseCli(['--json', '--config', rel], envA, base)).code).toBe(0);
    expect(JSON.parse((await parseCli(['--json', '--config', rel], envA, base)).stdout)).toHaveLength(2);
    const elsewhere = join(base, 'elsewhere');
    mkdirSync(elsewhere);
    const moved = await parseCli(['--json', '--config', rel], envA, elsewhere);
    expect(moved.longWay).toBe(true);
    expect(moved.stdout.trim()).toBe('[]');
  });

  test('a remembered answer from another build of aszcol is not used', async () => {
    const base = tempDir('aszcol-parse-quick-');
    const env = { XDG_CACHE_HOME: join(base, 'cache'), NODE_OPTIONS: moduleListing(base) };
    const { config } = await settledRoot(base, 1, env);
    expect((await parseCli(['--config', config], env)).longWay).toBe(false);
    const file = join(base, 'cache', 'aszcol', 'parse-config-answers.json');
    const answers = JSON.parse(readFileSync(file, 'utf8')) as { answers: { build: string }[] };
    for (const a of answers.answers) a.build = `0.0.0 ${a.build}`;
    writeFileSync(file, JSON.stringify(answers));
    expect((await parseCli(['--config', config], env)).longWay).toBe(true);
  });
});

describe('what the quick answer reads', () => {
  test('only a whole-root parse with --json and --config is taken; a session, a round budget, help or anything unknown is commander’s', () => {
    expect(wholeRootParseArgs(['parse'])).toEqual({});
    expect(wholeRootParseArgs(['parse', '--json', '--config', 'a.yaml'])).toEqual({ json: true, config: 'a.yaml' });
    expect(wholeRootParseArgs(['parse', '--config=b.yaml', '--json'])).toEqual({ json: true, config: 'b.yaml' });
    for (const argv of [
      ['parse', 'some-session'],
      ['parse', '--max-round-bytes', '1MiB'],
      ['parse', '--help'],
      ['parse', '--config'],
      ['parse', '--config', '--json'],
      ['parse', '--config='],
      ['parse', '--jsonx'],
      ['usage'],
    ])
      expect(wholeRootParseArgs(argv)).toBeUndefined();
  });

  test('the recording environment keeps every variable asked of it, set or not, and gives up when the whole environment is listed', () => {
    const r = recordingEnv({ A: '1', B: '2' });
    expect(r.env.A).toBe('1');
    expect('C' in r.env).toBe(false);
    expect(r.read()).toEqual({ A: '1', C: null });
    expect(Object.keys(r.env).sort()).toEqual(['A', 'B']);
    expect(r.read()).toBeUndefined();
  });
});
