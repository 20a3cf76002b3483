/**
 * Symbolic links in the source root (issue 13, M4): nothing outside the root is ever collected,
 * a file reached under two names lands once under its real path, a loop is skipped, and
 * `aszcol sources` says what it skipped and why.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { rec, writeLines } from '../helpers/transcript.js';
import { landedFiles, recordsOf } from '../helpers/root.js';
import { listDir } from '../../src/storage/layout.js';

afterAll(cleanupTemp);

const S = '0438c73b-1111-4222-8333-000000000001';
const T = '0438c73b-1111-4222-8333-000000000002';
const A1 = 'a0123456789abcdef';
const SECRET = 'do-not-collect-this-secret';

function setup() {
  const base = tempDir('aszcol-links-');
  const root = join(base, 'data');
  const src = join(base, 'projects');
  const outside = join(base, 'outside');
  mkdirSync(src, { recursive: true });
  mkdirSync(outside, { recursive: true });
  return { base, root, src, outside, config: writeConfig(base, root, src) };
}

/** Every landed byte of the storage root as one string, to look for what must never be there. */
function landedText(root: string): string {
  return listDir(root)
    .filter((s) => !s.startsWith('_') && !s.startsWith('.'))
    .flatMap((s) => landedFiles(root, s).map((f) => readFileSync(f.path, 'utf8')))
    .join('\n');
}

async function sourcesJson(config: string): Promise<{ skipped: { path: string; why: string }[]; sessions: { session: string; streams: number }[] }> {
  const r = await runCli(['sources', '--config', config, '--json']);
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout);
}

describe('symbolic links in the source root', () => {
  test('a transcript name linked to a file outside the root is not collected, and sources says why', async () => {
    const { root, src, outside, config } = setup();
    const secret = join(outside, 'passwd');
    writeLines(secret, [rec.user(S, SECRET)]);
    mkdirSync(join(src, '-p'), { recursive: true });
    symlinkSync(secret, join(src, '-p', `${S}.jsonl`));
    writeLines(join(src, '-p', `${T}.jsonl`), [rec.user(T, 'inside')]);

    const c = await runCli(['collect', '--once', '--config', config]);
    expect(c.code).toBe(0);
    expect(listDir(root).filter((n) => !n.startsWith('_') && !n.startsWith('.'))).toEqual([T]);
    expect(landedText(root)).not.toContain(SECRET);

    const d = await sourcesJson(config);
    expect(d.sessions.map((s) => s.session)).toEqual([T]);
    expect(d.skipped).toEqual([{ path: join(src, '-p', `${S}.jsonl`), why: expect.stringMatching(/outside the source root.*not followed/) }]);
    const text = await runCli(['sources', '--config', config]);
    expect(text.stdout).toMatch(new RegExp(`skipped +.*${S}\\.jsonl: a symbolic link to .*passwd, outside the source root`));
  });

  test('a directory linked out of the root (a project directory, a subagents directory) is not entered, and sources says why', async () => {
    const { root, src, outside, config } = setup();
    writeLines(join(outside, 'proj', `${S}.jsonl`), [rec.user(S, SECRET)]);
    writeLines(join(outside, 'agents', `agent-${A1}.jsonl`), [rec.user(T, SECRET)]);
    symlinkSync(join(outside, 'proj'), join(src, '-linked-out'));
    writeLines(join(src, '-p', `${T}.jsonl`), [rec.user(T, 'inside')]);
    mkdirSync(join(src, '-p', T), { recursive: true });
    symlinkSync(join(outside, 'agents'), join(src, '-p', T, 'subagents'));
    // A fixed name below a refused link is refused with it, not reached through it.
    mkdirSync(join(outside, 'wf', 'scripts'), { recursive: true });
    writeFileSync(join(outside, 'wf', 'scripts', 'x-wf_1.js'), `// ${SECRET}\n`);
    symlinkSync(join(outside, 'wf'), join(src, '-p', T, 'workflows'));

    const c = await runCli(['collect', '--once', '--config', config]);
    expect(c.code).toBe(0);
    expect(landedText(root)).not.toContain(SECRET);
    expect(recordsOf(landedFiles(root, T))).toHaveLength(1);

    const d = await sourcesJson(config);
    expect(d.skipped.map((s) => s.path).sort()).toEqual([join(src, '-linked-out'), join(src, '-p', T, 'subagents'), join(src, '-p', T, 'workflows')].sort());
    for (const s of d.skipped) expect(s.why).toMatch(/outside the source root/);
  });

  test('an agent transcript linked to the main transcript lands once, as the main transcript', async () => {
    const { root, src, config } = setup();
    writeLines(join(src, '-p', `${S}.jsonl`), [rec.user(S, 'one'), rec.user(S, 'two')]);
    mkdirSync(join(src, '-p', S, 'subagents'), { recursive: true });
    symlinkSync(join('..', '..', `${S}.jsonl`), join(src, '-p', S, 'subagents', `agent-${A1}.jsonl`));

    const c = await runCli(['collect', '--once', '--config', config]);
    expect(c.code).toBe(0);
    const files = landedFiles(root, S);
    expect(files.map((f) => [f.header.stream, f.header.src])).toEqual([['main', `-p/${S}.jsonl`]]);
    expect(recordsOf(files)).toHaveLength(2);
    const d = await sourcesJson(config);
    expect(d.skipped).toEqual([{ path: join(src, '-p', S, 'subagents', `agent-${A1}.jsonl`), why: expect.stringContaining(`another name for -p/${S}.jsonl`) }]);
  });

  test('a link inside the root to a session file, and a project directory linked twice, are collected once under the real path', async () => {
    const { root, src, config } = setup();
    writeLines(join(src, '-real', `${T}.jsonl`), [rec.user(T, 'x')]);
    symlinkSync('-real', join(src, '-alias')); // the whole project directory under a second name
    // A transcript whose only name is a link: collected under the file it points to.
    writeLines(join(src, 'kept', 'elsewhere.jsonl'), [rec.user(S, 'y'), rec.user(S, 'z')]);
    mkdirSync(join(src, '-p'), { recursive: true });
    symlinkSync(join('..', 'kept', 'elsewhere.jsonl'), join(src, '-p', `${S}.jsonl`));

    const first = await runCli(['collect', '--once', '--config', config]);
    expect(first.code).toBe(0);
    expect(landedFiles(root, T).map((f) => f.header.src)).toEqual([`-real/${T}.jsonl`]);
    expect(landedFiles(root, S).map((f) => f.header.src)).toEqual(['kept/elsewhere.jsonl']);
    expect(recordsOf(landedFiles(root, S))).toHaveLength(2);
    // A second pass finds nothing new under either name.
    const again = await runCli(['collect', '--once', '--config', config]);
    expect(again.stdout).toMatch(/landed 0 file\(s\)/);
    const v = await runCli(['verify', '--config', config]);
    expect(v.code).toBe(0);
  });

  test('a link loop is skipped with its reason and does not hang discovery', async () => {
    const { root, src, config } = setup();
    writeLines(join(src, '-p', `${T}.jsonl`), [rec.user(T, 'x')]);
    symlinkSync(`${S}.jsonl`, join(src, '-p', `${S}.jsonl`)); // points at itself
    symlinkSync('-loop-b', join(src, '-loop-a'));
    symlinkSync('-loop-a', join(src, '-loop-b'));
    mkdirSync(join(src, '-p', T, 'subagents', 'workflows'), { recursive: true });
    symlinkSync('..', join(src, '-p', T, 'subagents', 'workflows', 'up')); // a directory cycle inside the root

    const c = await runCli(['collect', '--once', '--config', config]);
    expect(c.code).toBe(0);
    expect(recordsOf(landedFiles(root, T))).toHaveLength(1);
    const d = await sourcesJson(config);
    const loops = d.skipped.filter((s) => /loop/.test(s.why)).map((s) => s.path);
    expect(loops.sort()).toEqual([join(src, '-loop-a'), join(src, '-loop-b'), join(src, '-p', `${S}.jsonl`)].sort());
  });
});
