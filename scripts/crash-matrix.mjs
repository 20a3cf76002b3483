#!/usr/bin/env node
/**
 * The crash matrix: kill -9 a part of aszcol N times while it works, then a clean run, then
 * count: every source line / every answered OTLP record landed exactly once (lost, duplicated),
 * and `aszcol verify` passes. Loopback only, bounded loops. Run by `npm run crash-matrix` (after
 * a build); prints a JSON summary and writes it to bench-out/crash-matrix.json.
 *
 *   node scripts/crash-matrix.mjs [--kills N] [--cases collect,receiver]
 *
 * Cases done: collect (aszcol collect while transcripts are appended), receiver (the OTLP
 * receiver under ≈200 requests/s). Still to add: service under append load, parse, push.
 */
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(REPO, 'bin', 'aszcol.js');
const dist = (p) => import(join(REPO, 'dist', p));
const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const KILLS = Number(opt('--kills', '5'));
const CASES = opt('--cases', 'collect,receiver').split(',');
const SID = '0438c73b-1111-4222-8333-444455556666';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const { landedFiles } = await dist('test/helpers/root.js');

function countIds(root, session) {
  const n = new Map();
  for (const f of landedFiles(root, session)) for (const r of f.records) n.set(r.id, (n.get(r.id) ?? 0) + 1);
  return n;
}

function verify(root, sourceRoot) {
  const cfg = writeConfig(root, sourceRoot);
  const r = spawnSync(process.execPath, [BIN, 'verify', '--config', cfg], { encoding: 'utf8', timeout: 120_000 });
  return { ok: r.status === 0, code: r.status, tail: (r.stdout + r.stderr).trim().split('\n').slice(-3).join(' | ') };
}

function writeConfig(root, sourceRoot) {
  const path = join(dirname(root), 'aszcol.yaml');
  writeFileSync(path, `storage:\n  root: ${JSON.stringify(root)}\nreceivers:\n  claude_code_local:\n    source_root: ${JSON.stringify(sourceRoot)}\n    exclude: []\n    interval: 200ms\n`);
  return path;
}

/** kill -9 `aszcol collect` (watching every 200 ms) at a random moment while lines are appended; then `collect --once`. */
async function collectCase(base) {
  const root = join(base, 'data');
  const src = join(base, 'projects');
  const main = join(src, '-crash-matrix', `${SID}.jsonl`);
  mkdirSync(dirname(main), { recursive: true });
  const cfg = writeConfig(root, src);
  const written = [];
  let n = 0;
  const line = () => {
    const uuid = `c0000000-0000-4000-8000-${(++n).toString(16).padStart(12, '0')}`;
    written.push(uuid);
    return JSON.stringify({ parentUuid: null, isSidechain: false, type: 'user', uuid, timestamp: new Date(Date.UTC(2026, 10, 30) + n * 1000).toISOString(), sessionId: SID, message: { role: 'user', content: `line ${n} ${'x'.repeat(n % 300)}` } });
  };
  for (let k = 0; k < KILLS; k++) {
    const child = spawn(process.execPath, [BIN, 'collect', '--config', cfg], { stdio: 'ignore' });
    const until = Date.now() + 300 + Math.random() * 1200;
    while (Date.now() < until) {
      appendFileSync(main, Array.from({ length: 20 }, line).join('\n') + '\n');
      await sleep(10);
    }
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
  }
  spawnSync(process.execPath, [BIN, 'collect', '--once', '--config', cfg], { timeout: 120_000 });
  const ids = countIds(root, SID);
  return {
    kills: KILLS,
    sent: written.length,
    lost: written.filter((u) => !ids.has(u)).length,
    duplicated: written.filter((u) => (ids.get(u) ?? 0) > 1).length,
    verify: verify(root, src),
  };
}

/** kill -9 the OTLP receiver (its own process) under ≈200 requests/s, one session per request; restart; then a clean run lands the rest. */
async function receiverCase(base) {
  const root = join(base, 'data');
  const { ccLogsRequest, httpPost } = await dist('test/helpers/otlp.js');
  const runner = join(REPO, 'dist', 'test', 'helpers', 'otlp-runner.js');
  const start = () =>
    new Promise((res, rej) => {
      const child = spawn(process.execPath, [runner, root, JSON.stringify({ protocols: { http: { endpoint: '127.0.0.1:0' } } })], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('\n')) res({ child, http: JSON.parse(out.split('\n')[0]).addresses.http });
      });
      child.once('exit', (c) => rej(new Error(`runner exited ${c}`)));
    });
  const answered = [];
  let i = 0;
  for (let k = 0; k < KILLS; k++) {
    const rx = await start();
    const until = Date.now() + 400 + Math.random() * 1200;
    const inflight = [];
    while (Date.now() < until) {
      const session = `cm-${k}-${i++}`;
      inflight.push(httpPost(rx.http, '/v1/logs', ccLogsRequest(session), {}, false).then((r) => r.status === 200 && answered.push(session), () => undefined));
      await sleep(5); // ≈200 requests/s
    }
    rx.child.kill('SIGKILL');
    await Promise.all(inflight);
  }
  // The clean run: start, let landing drain, stop gracefully.
  const rx = await start();
  const deadline = Date.now() + 60_000;
  const landedOf = (s) => landedFiles(root, s).reduce((a, f) => a + f.records.length, 0);
  while (Date.now() < deadline && answered.some((s) => landedOf(s) < 5)) await sleep(250);
  rx.child.kill('SIGTERM');
  await new Promise((r) => rx.child.once('exit', r));
  const counts = answered.map(landedOf);
  return {
    kills: KILLS,
    answered: answered.length,
    answeredRecords: answered.length * 5,
    lost: counts.reduce((a, c) => a + Math.max(0, 5 - c), 0),
    duplicated: counts.reduce((a, c) => a + Math.max(0, c - 5), 0),
    verify: verify(root, join(base, 'projects')),
  };
}

const CASE_FNS = { collect: collectCase, receiver: receiverCase };
const summary = { kills: KILLS, at: new Date().toISOString(), cases: {} };
for (const name of CASES) {
  const fn = CASE_FNS[name];
  if (!fn) throw new Error(`unknown case ${name}; known: ${Object.keys(CASE_FNS).join(', ')}`);
  const base = mkdtempSync(join(tmpdir(), `aszcol-crash-${name}-`));
  try {
    summary.cases[name] = await fn(base);
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}
const text = JSON.stringify(summary, null, 2);
console.log(text);
mkdirSync(join(REPO, 'bench-out'), { recursive: true });
writeFileSync(join(REPO, 'bench-out', 'crash-matrix.json'), text + '\n');
const bad = Object.values(summary.cases).some((c) => c.lost || c.duplicated || !c.verify.ok);
process.exit(bad ? 1 : 0);
