/**
 * Issue 19: `aszcol collect --once` with nothing new costs a stat per source and per session
 * directory. Each one-shot pass remembers in the root (`_conversations/collect.quiet`) where
 * discovery found the sources, by the stats of the directories it listed, and the sessions it left
 * with nothing to do, by their sources' stats and their directory's in the root; the next pass
 * judges only what moved. Each scenario runs the real CLI, and a fresh collector with no memory
 * (`LocalCollector.pass`, which judges everything) is the ground truth that nothing was left.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalCollector } from '../../src/receivers/claude-code-local/pass.js';
import { collectQuietPath } from '../../src/storage/collect-quiet.js';
import { runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { rec, writeLines } from '../helpers/transcript.js';

afterAll(cleanupTemp);

const sid = (i: number) => `7d2c1e90-1111-4222-8333-${String(i).padStart(12, '0')}`;
const AGENT = 'a0123456789abcdef';

interface Pass {
  sessions: number;
  sources: number;
  landedFiles: number;
  errors: unknown[];
}

/** Everything under `dir` (itself included) dated a minute back: older than any clock grain, as a day-old history is. */
function age(dir: string): void {
  const then = new Date(Date.now() - 60_000);
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) if (e.isDirectory()) walk(join(d, e.name));
    for (const e of readdirSync(d)) utimesSync(join(d, e), then, then);
  };
  walk(dir);
  utimesSync(dir, then, then);
}

function history(base: string, sessions: number) {
  const root = join(base, 'data');
  const src = join(base, 'projects');
  mkdirSync(src, { recursive: true });
  const config = writeConfig(base, root, src);
  for (let i = 0; i < sessions; i++) writeLines(join(src, '-p', `${sid(i)}.jsonl`), [rec.user(sid(i), `first ${i}`), rec.user(sid(i), `second ${i}`)]);
  return { root, src, config };
}

async function collect(config: string, base: string): Promise<Pass> {
  const r = await runCli(['collect', '--once', '--json', '--config', config], { env: { XDG_CACHE_HOME: join(base, 'cache') } });
  expect(r.stderr).toBe('');
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Pass;
}

/** A collector with no memory judges every session in full: what it still finds to land, the remembered passes missed. */
const leftOver = (root: string, src: string) =>
  new LocalCollector({ root, sourceRoot: src, filter: { include: [], exclude: [] }, maxDeltaBytes: 1 << 20 }).pass();

/** The remembered sessions and whether discovery is remembered. */
function memory(root: string): { sessions: string[]; discovery: boolean } {
  const m = JSON.parse(readFileSync(collectQuietPath(root), 'utf8')) as { sessions: object; discovery?: unknown };
  return { sessions: Object.keys(m.sessions).sort(), discovery: m.discovery !== undefined };
}

describe('a one-shot collect remembers what it left quiet', () => {
  test('the pass after a landing is answered from the memory, by stats alone; a source that moved is judged and its line lands', async () => {
    const base = tempDir('aszcol-remembered-');
    const { root, src, config } = history(base, 3);
    age(src);
    expect(await collect(config, base)).toMatchObject({ sessions: 3, landedFiles: 3, errors: [] });
    age(root); // the landing a minute ago: every session directory's time is trusted
    expect(await collect(config, base)).toMatchObject({ sessions: 3, sources: 3, landedFiles: 0, errors: [] });
    expect(memory(root)).toEqual({ sessions: [sid(0), sid(1), sid(2)], discovery: true });

    // Inside a landed stream, by hand: a full judgement would see the index file gone and rebuild it; the memory does not look.
    rmSync(join(root, sid(1), 'index', 'entries.bin'));
    expect(await collect(config, base)).toMatchObject({ sessions: 3, landedFiles: 0, errors: [] });
    expect(existsSync(join(root, sid(1), 'index', 'entries.bin'))).toBe(false);

    // The source moves: its stat differs, the session is judged in full (the index rebuilt) and the line lands.
    writeLines(join(src, '-p', `${sid(1)}.jsonl`), [rec.user(sid(1), 'third 1')], { append: true });
    expect(await collect(config, base)).toMatchObject({ sessions: 3, landedFiles: 1, errors: [] });
    expect(existsSync(join(root, sid(1), 'index', 'entries.bin'))).toBe(true);
    expect(leftOver(root, src)).toMatchObject({ landedFiles: 0, errors: [] });
  }, 120_000);

  test("a writer's lock or a hand-deleted index in a session's directory moves its time: the session is judged in full again", async () => {
    const base = tempDir('aszcol-remembered-');
    const { root, src, config } = history(base, 2);
    age(src);
    await collect(config, base);
    age(root);
    await collect(config, base);
    expect(memory(root).sessions).toEqual([sid(0), sid(1)]);

    rmSync(join(root, sid(0), 'index'), { recursive: true });
    expect(await collect(config, base)).toMatchObject({ sessions: 2, landedFiles: 0, errors: [] });
    expect(readdirSync(join(root, sid(0), 'index')).sort()).toEqual(['entries.bin']);

    // A lock taken and let go (any writer of the session, the index's included) leaves the directory's time moved:
    // the session is judged in full and remembered again with the new time, not carried over with the old one.
    const remembered = () => (JSON.parse(readFileSync(collectQuietPath(root), 'utf8')) as { sessions: Record<string, { dir: string }> }).sessions[sid(1)]?.dir;
    const before = remembered();
    expect(before).toContain(`/${statSync(join(root, sid(1))).mtimeMs}/`);
    writeFileSync(join(root, sid(1), '.lock'), `${process.pid}\n`);
    rmSync(join(root, sid(1), '.lock'));
    const moved = statSync(join(root, sid(1))).mtimeMs;
    await collect(config, base);
    expect(remembered()).not.toBe(before);
    expect([undefined, expect.stringContaining(`/${moved}/`)]).toContainEqual(remembered()); // not remembered while within the clock's grain
    expect(leftOver(root, src)).toMatchObject({ landedFiles: 0, errors: [] });
  }, 120_000);

  test('a new session, a new helper transcript and a new project directory are discovered though discovery was remembered', async () => {
    const base = tempDir('aszcol-remembered-');
    const { root, src, config } = history(base, 2);
    age(src);
    await collect(config, base);
    age(root);
    await collect(config, base);
    expect(memory(root).discovery).toBe(true);

    // A helper of session 0: its session directory and `subagents/` are new entries under the project directory.
    writeLines(join(src, '-p', sid(0), 'subagents', `agent-${AGENT}.jsonl`), [rec.user(sid(0), 'helper task', { isSidechain: true, agentId: AGENT })]);
    expect(await collect(config, base)).toMatchObject({ sessions: 2, sources: 3, landedFiles: 1, errors: [] });
    age(src);
    age(root);
    await collect(config, base);
    expect(memory(root).discovery).toBe(true);

    // Another line of that helper (a file inside a remembered directory) and a new session in a new project directory.
    writeLines(join(src, '-p', sid(0), 'subagents', `agent-${AGENT}.jsonl`), [rec.user(sid(0), 'helper again', { isSidechain: true, agentId: AGENT })], {
      append: true,
    });
    writeLines(join(src, '-q', `${sid(5)}.jsonl`), [rec.user(sid(5), 'elsewhere')]);
    expect(await collect(config, base)).toMatchObject({ sessions: 3, sources: 4, landedFiles: 2, errors: [] });
    expect(leftOver(root, src)).toMatchObject({ sessions: 3, landedFiles: 0, errors: [] });
  }, 120_000);
});
