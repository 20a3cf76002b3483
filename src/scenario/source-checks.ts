/**
 * Two runtime-format properties that work on a copy of the finished root and its sources, each
 * with one collect pass as a newly started process would run it:
 *
 * - `discovery_ignores_noise`: files that are not a session's (editor leftovers, notes, an empty
 *   directory) planted beside the session's files must land nothing, meet no error or conflict,
 *   and add or change no cursor.
 * - `pruned_sources_gone`: after Claude Code prunes a session, its main transcript first and then
 *   every other file, each deleted file's active cursor must say `source_gone` and every other
 *   cursor what it said before; once the files are back with their bytes, every cursor says what
 *   it said before. After every step nothing lands, nothing errs, landed files keep their digests,
 *   a parse writes no round and `verify` counts as many problems as before.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { LocalCollector } from '../receivers/claude-code-local/pass.js';
import { parseSession } from '../processors/assembler/parse.js';
import { loadCursor } from '../storage/cursor.js';
import { SessionCursors } from '../storage/session-cursors.js';
import { isHookCursorName } from '../storage/hook-landing.js';
import { listLanded } from '../storage/landed-files.js';
import { landedDirs, listDir } from '../storage/layout.js';
import { verifyRoot } from '../storage/verify.js';
import { verifyChains } from '../storage/verify-chain.js';

interface Violation {
  where: string;
  expected: unknown;
  got: unknown;
}

const PROJECTS = join('_source', 'projects');

/**
 * Each cursor of the session as `source state`, named as an older root's per-source file would be:
 * the plugin's cursor files, and the source cursors (of the session's cursor file, or its old files).
 */
function cursors(root: string, session: string): Map<string, { source: string; state: string }> {
  const out = new Map<string, { source: string; state: string }>();
  for (const { dir, otlp } of landedDirs(root, session)) {
    if (otlp) continue;
    for (const n of listDir(dir)) {
      if (!isHookCursorName(n)) continue;
      const c = loadCursor(join(dir, n));
      if (c) out.set(join(dir, n).slice(root.length + 1), { source: c.source, state: c.state });
    }
  }
  for (const { key, cursor } of SessionCursors.read(root, session).all()) out.set(`${session}/${key}.cursor`, { source: cursor.source, state: cursor.state });
  return out;
}

const digests = (root: string, session: string) =>
  new Map(listLanded(root, session).map((l) => [l.rel, createHash('sha256').update(readFileSync(l.path)).digest('hex')]));

const problemCount = (root: string) => verifyRoot(root).problems.length + verifyChains(root).problems.length;

function pass(root: string) {
  return new LocalCollector({ root, sourceRoot: join(root, PROJECTS), filter: { include: [], exclude: [] }, maxDeltaBytes: 2 * 1024 * 1024 }).pass();
}

/** What one pass over the copy did that a pass with nothing new must not. */
function quietPass(name: string, step: string, root: string, session: string, before: { digests: Map<string, string>; problems: number }): Violation[] {
  const out: Violation[] = [];
  const where = `${name} (${step})`;
  const r = pass(root);
  if (r.landedRecords) out.push({ where, expected: 'nothing landed', got: `${r.landedRecords} record(s)` });
  for (const e of r.errors) out.push({ where, expected: 'no error', got: `${e.where}: ${e.message}` });
  for (const c of r.newConflicts) out.push({ where, expected: 'no new conflict', got: `${c.source}: ${c.reason}` });
  const now = digests(root, session);
  for (const [rel, d] of before.digests) if (now.get(rel) !== d) out.push({ where: `${where}: ${rel}`, expected: d, got: now.get(rel) ?? '(gone)' });
  if (parseSession({ root, session, maxRoundBytes: 2 ** 40 }).status === 'written')
    out.push({ where, expected: 'a parse writes no round', got: 'a round was written' });
  const problems = problemCount(root);
  if (problems !== before.problems) out.push({ where: `${where}: verify`, expected: before.problems, got: problems });
  return out;
}

/** Cursor states after a step against what they must say: `gone` sources say `source_gone`, the rest what they said. */
function compareCursors(
  where: string,
  was: Map<string, { source: string; state: string }>,
  now: Map<string, { source: string; state: string }>,
  gone: Set<string>,
) {
  const out: Violation[] = [];
  for (const k of new Set([...was.keys(), ...now.keys()])) {
    const w = was.get(k),
      n = now.get(k);
    if (!w || !n) {
      out.push({ where: `${where}: ${k}`, expected: w ? w.state : '(no cursor)', got: n ? n.state : '(no cursor)' });
      continue;
    }
    const want = gone.has(w.source) && w.state === 'active' ? 'source_gone' : w.state;
    if (n.state !== want) out.push({ where: `${where}: ${k} (${w.source})`, expected: want, got: n.state });
  }
  return out;
}

/** Every source file of the session under the projects directory, relative to it, with its bytes. */
function sessionSources(root: string, session: string): Map<string, Buffer> {
  const base = join(root, PROJECTS);
  const out = new Map<string, Buffer>();
  for (const rel of readdirSync(base, { recursive: true }).map(String)) {
    const parts = rel.split('/');
    const ofSession = parts[1] === `${session}.jsonl` || parts[1] === session;
    if (ofSession && statSync(join(base, rel)).isFile()) out.set(rel, readFileSync(join(base, rel)));
  }
  return out;
}

export function discoveryIgnoresNoise(root: string, session: string): Violation[] {
  const main = [...sessionSources(root, session).keys()].find((r) => r.endsWith(`${session}.jsonl`));
  if (!main) return [{ where: 'discovery_ignores_noise', expected: "the session's main transcript", got: '(none)' }];
  const project = join(root, PROJECTS, dirname(main));
  // What a person's tools leave beside a session: backups, notes, an OS file, an empty directory.
  const noise: [string, string][] = [
    [`${session}.jsonl.bak`, '{"type":"user"}\n'],
    [`${session}.jsonl~`, '{"type":"user"}\n'],
    ['notes.txt', 'remember the milk\n'],
    ['.DS_Store', '\u0000\u0001'],
    [`${session}/subagents/README.md`, '# not an agent\n'],
    [`${session}/subagents/agent-notes.txt`, 'plain text\n'],
  ];
  const before = { digests: digests(root, session), problems: problemCount(root) };
  const was = cursors(root, session);
  for (const [rel, body] of noise) {
    mkdirSync(dirname(join(project, rel)), { recursive: true });
    writeFileSync(join(project, rel), body);
  }
  mkdirSync(join(project, session, 'empty-dir'), { recursive: true });
  return [
    ...quietPass('discovery_ignores_noise', 'noise planted', root, session, before),
    ...compareCursors('discovery_ignores_noise: cursors', was, cursors(root, session), new Set()),
  ];
}

export function prunedSourcesGone(root: string, session: string): Violation[] {
  const files = sessionSources(root, session);
  const main = [...files.keys()].find((r) => r.endsWith(`${session}.jsonl`));
  if (!main) return [{ where: 'pruned_sources_gone', expected: "the session's main transcript", got: '(none)' }];
  const before = { digests: digests(root, session), problems: problemCount(root) };
  const was = cursors(root, session);
  const out: Violation[] = [];
  const gone = new Set<string>();
  // The main transcript first (the session stays for discovery to find), then everything else.
  for (const [step, rels] of [
    ['main transcript deleted', [main]],
    ['every file deleted', [...files.keys()]],
  ] as const) {
    for (const rel of rels) {
      rmSync(join(root, PROJECTS, rel), { force: true });
      gone.add(rel);
    }
    out.push(...quietPass('pruned_sources_gone', step, root, session, before));
    out.push(...compareCursors(`pruned_sources_gone (${step})`, was, cursors(root, session), gone));
  }
  for (const [rel, bytes] of files) {
    mkdirSync(dirname(join(root, PROJECTS, rel)), { recursive: true });
    writeFileSync(join(root, PROJECTS, rel), bytes);
  }
  out.push(...quietPass('pruned_sources_gone', 'files back', root, session, before));
  out.push(...compareCursors('pruned_sources_gone (files back)', was, cursors(root, session), new Set()));
  return out;
}
