#!/usr/bin/env node
/**
 * Lands one source directory with two builds of aszcol and compares what they landed: the check that a change to
 * collection leaves landed bytes as they were. Usage:
 *   node scripts/compare-collect.mjs <base worktree> <other worktree> <projects dir> [work dir]
 * Each worktree must be built (`npx tsc -p tsconfig.json`). Two comparisons:
 *  1. in process, with one fixed clock: every file of the two roots byte for byte (names, stamps, digests, index, cursors);
 *  2. `aszcol collect --once` (worker threads, the real clock): the same files once the pass's stamp is taken out of
 *     the names, and every landed record line identical (the header's `at` and the digests that cover it differ).
 * Either build may keep a session's source cursors in one file (`<session>/sources.cursor`) or one file per source
 * (`<stream>/<prefix>.cursor`, before it): the one file is read as the per-source files it replaces, each entry's bytes
 * exactly as that file held them, and the counter in its head as the `session.state` it replaces, so the comparison
 * is byte for byte either way. An `index/index.state` (the older
 * layout's second index file, its facts now in the index file's head) is counted apart, not as a difference.
 * Exits 1 and names the first differences when the roots differ.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { tmpdir } from 'node:os';

const [baseTree, otherTree, projects, workArg] = process.argv.slice(2);
if (!baseTree || !otherTree || !projects) {
  process.stderr.write('usage: compare-collect.mjs <base worktree> <other worktree> <projects dir> [work dir]\n');
  process.exit(2);
}
const work = mkdtempSync(join(workArg ?? tmpdir(), 'aszcol-compare-'));

const walk = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? walk(join(dir, e.name)) : e.name === '.lock' ? [] : [join(dir, e.name)]));

/** Runs a snippet in a child process, so each build's modules load alone. */
function inProcess(tree, root) {
  const code = `
    const { LocalCollector } = await import(${JSON.stringify(join(tree, 'dist/src/receivers/claude-code-local/pass.js'))});
    const r = new LocalCollector({ root: ${JSON.stringify(root)}, sourceRoot: ${JSON.stringify(projects)}, filter: { include: [], exclude: [] },
      maxDeltaBytes: 8 << 20, clock: () => 1764633600000000000n }).pass();
    if (r.errors.length) { console.error(JSON.stringify(r.errors.slice(0, 5))); process.exit(1); }`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', code], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${tree}: in-process collect failed: ${r.stderr}`);
}

function viaCli(tree, root) {
  const config = join(work, `${relative(work, root).replace(/\//g, '_')}.yaml`);
  const yaml = `storage:\n  root: ${JSON.stringify(root)}\nreceivers:\n  claude_code_local:\n    source_root: ${JSON.stringify(projects)}\n    exclude: []\n`;
  writeFileSync(config, `${yaml}service:\n  pipelines:\n    sessions:\n      receivers: [claude_code_local]\n`);
  const r = spawnSync(process.execPath, [join(tree, 'bin/aszcol.js'), 'collect', '--once', '--json', '--config', config], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`${tree}: collect --once exited ${r.status}: ${r.stderr.slice(-2000)}`);
}

const STAMP = /\d{8}T\d{6}\.\d+Z/g;

/** The files of a root by name, with `normalize` applied to names and bytes. */
function snapshot(root, normalize) {
  const out = new Map();
  for (const path of walk(root)) {
    for (const [layoutName, layoutBytes] of layoutFree(relative(root, path), readFileSync(path))) {
      const [name, bytes] = normalize(layoutName, layoutBytes);
      if (name !== undefined) out.set(name, bytes);
    }
  }
  return out;
}

function compare(label, a, b) {
  const problems = [];
  for (const name of a.keys()) if (!b.has(name)) problems.push(`only in the base: ${name}`);
  for (const name of b.keys()) if (!a.has(name)) problems.push(`only in the other: ${name}`);
  for (const [name, bytes] of a) if (b.has(name) && Buffer.compare(bytes, b.get(name)) !== 0) problems.push(`differs: ${name}`);
  process.stdout.write(`${label}: ${a.size} files in the base, ${b.size} in the other, ${problems.length} differences\n`);
  for (const p of problems.slice(0, 20)) process.stdout.write(`  ${p}\n`);
  return problems.length;
}

/** Byte for byte, but for the landing epoch: a token each landing makes afresh (its writer's pid and a time), not landed data. */
const exact = (name, bytes) => (name.startsWith('_conversations/.landing/') ? [undefined] : [name, bytes]);

/**
 * A session's `sources.cursor` as the per-source cursor files it stands for: `[name, bytes]` pairs; a head that
 * carries the session's counter stands for the `session.state` the local receiver wrote before, in its words.
 */
function perSourceCursors(name, bytes) {
  const session = name.slice(0, name.indexOf('/'));
  const [head, ...blocks] = bytes.toString('utf8').split('\n\n');
  const kv = new Map(
    head
      .split('\n')
      .map((l) => /^(\S+)\s+(.*)$/.exec(l))
      .filter(Boolean)
      .map((m) => [m[1], m[2]]),
  );
  const state = kv.has('next_seq')
    ? [[`${session}/session.state`, Buffer.from(`schema     1\nnext_seq   ${kv.get('next_seq')}\nliveness   unknown\nlast_scan  ${kv.get('last_scan')}\n`)]]
    : [];
  return state.concat(
    blocks.map((block) => {
      const nl = block.indexOf('\n');
      const key = block.slice(0, nl).replace(/^at\s+/, '');
      const rest = block.slice(nl + 1);
      return [`${session}/${key}.cursor`, Buffer.from(rest.endsWith('\n') ? rest : `${rest}\n`)];
    }),
  );
}

let retiredIndexStates = 0;
/** Files of either cursor layout made comparable; the older layout's index.state set aside and counted. */
function layoutFree(name, bytes) {
  if (/^[^/]+\/index\/index\.state$/.test(name)) {
    retiredIndexStates++;
    return [];
  }
  if (/^[^/]+\/sources\.cursor$/.test(name)) return perSourceCursors(name, bytes);
  return [[name, bytes]];
}
/** Landed files without the pass's time: record lines only; state files that carry the time or digests over it are left out. */
function timeless(name, bytes) {
  if (!name.endsWith('.sd')) return [undefined];
  const lines = bytes.toString('utf8').split('\n');
  return [name.replace(STAMP, 'STAMP'), Buffer.from(lines.slice(1, -2).join('\n'))];
}

let differences = 0;
const roots = (tag) => [join(work, `${tag}-base`), join(work, `${tag}-other`)];
const [fixedBase, fixedOther] = roots('fixed-clock');
inProcess(baseTree, fixedBase);
inProcess(otherTree, fixedOther);
differences += compare('fixed clock, every file byte for byte', snapshot(fixedBase, exact), snapshot(fixedOther, exact));
const [cliBase, cliOther] = roots('cli');
viaCli(baseTree, cliBase);
viaCli(otherTree, cliOther);
differences += compare('collect --once, landed records', snapshot(cliBase, timeless), snapshot(cliOther, timeless));
if (retiredIndexStates) process.stdout.write(`index.state files of the older layout, set aside: ${retiredIndexStates}\n`);
process.stdout.write(`roots kept under ${work}\n`);
process.exit(differences ? 1 : 0);
