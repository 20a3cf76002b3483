#!/usr/bin/env node
/**
 * The crash matrix: kill -9 a part of aszcol N times while it works, then a clean run, then
 * count: every source line / every answered OTLP record landed exactly once (lost, duplicated),
 * and `aszcol verify` passes. Loopback only, bounded loops. Run by `npm run crash-matrix` (after
 * a build); prints a JSON summary and writes it to bench-out/crash-matrix.json.
 *
 *   node scripts/crash-matrix.mjs [--kills N] [--cases collect,receiver]
 *
 * Cases: collect (aszcol collect while transcripts are appended), service (the service under
 * append load), receiver (the OTLP receiver under ≈200 requests/s), parse, push (to a local sink).
 */
import { spawn, spawnSync } from 'node:child_process';
import { appendFileSync, cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const BIN = join(REPO, 'bin', 'aszcol.js');
const dist = (p) => import(join(REPO, 'dist', p));
const args = process.argv.slice(2);
const opt = (name, dflt) => (args.includes(name) ? args[args.indexOf(name) + 1] : dflt);
const KILLS = Number(opt('--kills', '5'));
const CASES = opt('--cases', 'collect,service,receiver,parse,push').split(',');
const SID = '0438c73b-1111-4222-8333-444455556666';
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

const { landedFiles } = await dist('test/helpers/root.js');
const { chainDir } = await dist('src/storage/chain.js');

/** Waits (bounded) until `check()` holds; returns whether it did. */
async function until(check, ms = 30_000, every = 25) {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (check()) return true;
    await sleep(every);
  }
  return check();
}

const exited = (child) => new Promise((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', r)));

/** Transcript lines with unique uuids for a session, remembering every uuid written. */
class Lines {
  n = 0;
  written = [];
  constructor(session, tag) {
    this.session = session;
    this.tag = tag;
  }
  next() {
    const uuid = `${this.tag}000000-0000-4000-8000-${(++this.n).toString(16).padStart(12, '0')}`;
    this.written.push(uuid);
    return JSON.stringify({
      parentUuid: null,
      isSidechain: false,
      type: 'user',
      uuid,
      timestamp: new Date(Date.UTC(2026, 10, 30) + this.n * 1000).toISOString(),
      sessionId: this.session,
      message: { role: 'user', content: `line ${this.n} ${'x'.repeat(this.n % 300)}` },
    });
  }
  append(path, count) {
    mkdirSync(dirname(path), { recursive: true });
    appendFileSync(path, Array.from({ length: count }, () => this.next()).join('\n') + '\n');
  }
}

const landedFileCount = (root, session) => landedFiles(root, session).length;

/** Lost and duplicated source lines: every uuid written must be landed exactly once. */
function compareLines(root, session, written) {
  const ids = countIds(root, session);
  return { sent: written.length, lost: written.filter((u) => !ids.has(u)).length, duplicated: written.filter((u) => (ids.get(u) ?? 0) > 1).length };
}

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
  writeFileSync(
    path,
    `storage:\n  root: ${JSON.stringify(root)}\nreceivers:\n  claude_code_local:\n    source_root: ${JSON.stringify(sourceRoot)}\n    exclude: []\n    interval: 200ms\n`,
  );
  return path;
}

/** kill -9 `aszcol collect` (watching every 200 ms) once it has landed something, at a random moment after, while lines are appended; then `collect --once`. */
async function collectCase(base) {
  const root = join(base, 'data');
  const src = join(base, 'projects');
  const main = join(src, '-crash-matrix', `${SID}.jsonl`);
  const cfg = writeConfig(root, src);
  const lines = new Lines(SID, 'c');
  lines.append(main, 20);
  for (let k = 0; k < KILLS; k++) {
    const child = spawn(process.execPath, [BIN, 'collect', '--config', cfg], { stdio: 'ignore' });
    const had = landedFileCount(root, SID);
    const progress = until(() => landedFileCount(root, SID) > had, 30_000);
    const appendLoop = (async () => {
      for (let i = 0; i < 3000 && child.exitCode === null && child.signalCode === null; i++) {
        lines.append(main, 20);
        await sleep(10);
      }
    })();
    await progress;
    await sleep(Math.random() * 400);
    child.kill('SIGKILL');
    await exited(child);
    await appendLoop;
  }
  spawnSync(process.execPath, [BIN, 'collect', '--once', '--config', cfg], { timeout: 120_000 });
  const landed = compareLines(root, SID, lines.written);
  // A pass killed between landing and moving its cursor lands those lines again (verify counts
  // them; assembly removes them): what counts as duplicated is what the conversation holds twice.
  spawnSync(process.execPath, [BIN, 'parse', '--config', cfg], { timeout: 120_000 });
  const folded = foldAgainstReference(base, root, src, cfg, [SID]);
  return {
    kills: KILLS,
    sent: landed.sent,
    lost: landed.lost + folded.lost,
    duplicated: folded.duplicated,
    relandedLines: landed.duplicated,
    conversationsDiffering: folded.differing,
    verify: verify(root, src),
  };
}

/** kill -9 the service (`aszcol` with the default pipeline, passes every 200 ms) under append load, once it has landed something; then a clean service run drains and stops on SIGTERM. */
async function serviceCase(base) {
  const root = join(base, 'data');
  const src = join(base, 'projects');
  const cfg = writeConfig(root, src);
  const sessions = Array.from({ length: 4 }, (_, i) => `0438c73b-1111-4222-8333-44445555666${i}`);
  const lines = sessions.map((s, i) => new Lines(s, String.fromCharCode(97 + i)));
  const pathOf = (s) => join(src, '-crash-matrix', `${s}.jsonl`);
  lines.forEach((l, i) => l.append(pathOf(sessions[i]), 10));
  const service = () => spawn(process.execPath, [BIN, '--config', cfg], { stdio: 'ignore', env: { ...process.env } });
  const files = () => sessions.reduce((a, s) => a + landedFileCount(root, s), 0);
  for (let k = 0; k < KILLS; k++) {
    const child = service();
    const had = files();
    const progress = until(() => files() > had, 30_000);
    const appendLoop = (async () => {
      for (let i = 0; i < 3000 && child.exitCode === null && child.signalCode === null; i++) {
        lines.forEach((l, j) => l.append(pathOf(sessions[j]), 5));
        await sleep(10);
      }
    })();
    await progress;
    await sleep(Math.random() * 600);
    child.kill('SIGKILL');
    await exited(child);
    await appendLoop;
  }
  const clean = service();
  await until(() => sessions.every((s, i) => compareLines(root, s, lines[i].written).lost === 0), 60_000, 250);
  clean.kill('SIGTERM');
  await exited(clean);
  const per = sessions.map((s, i) => compareLines(root, s, lines[i].written));
  // A pass killed between landing and moving its cursor lands those lines again (verify counts
  // them; assembly removes them): what counts as duplicated is what the conversation holds twice.
  spawnSync(process.execPath, [BIN, 'parse', '--config', cfg], { timeout: 120_000 });
  const folded = foldAgainstReference(base, root, src, cfg, sessions);
  return {
    kills: KILLS,
    sent: per.reduce((a, p) => a + p.sent, 0),
    lost: per.reduce((a, p) => a + p.lost, 0) + folded.lost,
    duplicated: folded.duplicated,
    relandedLines: per.reduce((a, p) => a + p.duplicated, 0),
    conversationsDiffering: folded.differing,
    cleanExit: clean.exitCode,
    verify: verify(root, src),
  };
}

/**
 * Each conversation as folded from its chain (`conversation --json`), against a reference that
 * parsed the same landed data once, without a kill: entities (by id) missing here are lost,
 * entities here more often than there are duplicated.
 */
function foldAgainstReference(base, root, src, cfg, sessions) {
  // The reference: the same landed data, its chains removed, parsed once.
  const ref = join(base, 'reference');
  cpSync(root, ref, { recursive: true });
  rmSync(dirname(chainDir(ref, 'x')), { recursive: true, force: true });
  const refCfg = join(base, 'reference.yaml');
  writeFileSync(
    refCfg,
    `storage:\n  root: ${JSON.stringify(ref)}\nreceivers:\n  claude_code_local:\n    source_root: ${JSON.stringify(src)}\n    exclude: []\n`,
  );
  spawnSync(process.execPath, [BIN, 'parse', '--config', refCfg], { timeout: 120_000 });
  const fold = (c, s) =>
    JSON.parse(spawnSync(process.execPath, [BIN, 'conversation', s, '--json', '--config', c], { encoding: 'utf8', timeout: 120_000 }).stdout || 'null');
  let lost = 0;
  let duplicated = 0;
  let differing = 0;
  for (const s of sessions) {
    const got = JSON.stringify(fold(cfg, s));
    const want = JSON.stringify(fold(refCfg, s));
    if (got !== want) differing++;
    // Entities by their id: in the reference and missing here (lost), or here more often than there (duplicated).
    const ids = (t) => [...t.matchAll(/"id":"([^"]+)"/g)].map((m) => m[1]);
    const count = (xs) => xs.reduce((m, x) => m.set(x, (m.get(x) ?? 0) + 1), new Map());
    const g = count(ids(got));
    const w = count(ids(want));
    for (const [id, n] of w) lost += Math.max(0, n - (g.get(id) ?? 0));
    for (const [id, n] of g) duplicated += Math.max(0, n - (w.get(id) ?? 0));
  }
  return { lost, duplicated, differing };
}

/**
 * kill -9 `aszcol parse` at a random moment (sessions get new lines and a collect between kills);
 * then a clean parse. Lost and duplicated: each conversation as folded from the chain, against a
 * reference that parsed the same landed data once, without a kill (`conversation --json`).
 */
async function parseCase(base) {
  const root = join(base, 'data');
  const src = join(base, 'projects');
  const cfg = writeConfig(root, src);
  const sessions = Array.from({ length: 6 }, (_, i) => `0438c73b-2222-4222-8333-44445555666${i}`);
  const lines = sessions.map((s, i) => new Lines(s, String.fromCharCode(97 + i)));
  const pathOf = (s) => join(src, '-crash-matrix', `${s}.jsonl`);
  for (let k = 0; k < KILLS; k++) {
    lines.forEach((l, i) => l.append(pathOf(sessions[i]), 400));
    spawnSync(process.execPath, [BIN, 'collect', '--once', '--config', cfg], { timeout: 120_000 });
    const child = spawn(process.execPath, [BIN, 'parse', '--config', cfg], { stdio: 'ignore' });
    await sleep(150 + Math.random() * 600);
    child.kill('SIGKILL');
    await exited(child);
  }
  spawnSync(process.execPath, [BIN, 'parse', '--config', cfg], { timeout: 120_000 });
  const { lost, duplicated, differing } = foldAgainstReference(base, root, src, cfg, sessions);
  return { kills: KILLS, sessions: sessions.length, lost, duplicated, conversationsDiffering: differing, verify: verify(root, src) };
}

/**
 * kill -9 `aszcol push` (watching) while it sends to a local test receiver (an HTTP sink that
 * counts every landed file by its `asz.file`, answering each request after 20 ms); then
 * `push --once`. Lost: a landed file never received. A file sent again after the push that sent
 * it was killed within a second of the answer is `resent` (at-least-once: its answer may not have
 * been recorded in push.state yet); sent again by the same push, or long after its answer, it is
 * `duplicated`.
 */
async function pushCase(base) {
  const root = join(base, 'data');
  const src = join(base, 'projects');
  const { LocalCollector } = await dist('src/receivers/claude-code-local/pass.js');
  const { requestType } = await dist('src/otlp/proto.js');
  const sessions = Array.from({ length: 8 }, (_, i) => `0438c73b-3333-4222-8333-44445555666${i}`);
  const lines = sessions.map((s, i) => new Lines(s, String.fromCharCode(97 + i)));
  const collector = new LocalCollector({ root, sourceRoot: src, filter: { include: [], exclude: [] }, maxDeltaBytes: 2 * 1024 * 1024 });
  for (let pass = 0; pass < 40; pass++) {
    lines.forEach((l, i) => l.append(join(src, '-crash-matrix', `${sessions[i]}.jsonl`), 3));
    collector.pass();
  }
  const received = new Map();
  /** asz.file → every receipt: which push process (generation) sent it and when the answer went out. */
  const receipts = new Map();
  const killedAt = [];
  let generation = 0;
  let requests = 0;
  const T = requestType('logs');
  const sink = createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      requests++;
      const files = [];
      const msg = T.toObject(T.decode(Buffer.concat(chunks)), { longs: String });
      for (const rl of msg.resourceLogs ?? [])
        for (const sl of rl.scopeLogs ?? [])
          for (const lr of sl.logRecords ?? []) {
            const file = (lr.attributes ?? []).find((a) => a.key === 'asz.file')?.value?.stringValue;
            if (file) received.set(file, (received.get(file) ?? 0) + 1);
            if (file) files.push(file);
          }
      const gen = generation;
      setTimeout(() => {
        res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end();
        for (const f of files) receipts.set(f, [...(receipts.get(f) ?? []), { gen, answeredAt: Date.now() }]);
      }, 20);
    });
  });
  await new Promise((r) => sink.listen(0, '127.0.0.1', r));
  const cfg = join(base, 'push.yaml');
  writeFileSync(
    cfg,
    `storage:\n  root: ${JSON.stringify(root)}\nreceivers:\n  claude_code_local:\n    source_root: ${JSON.stringify(src)}\n    exclude: []\n` +
      `exporters:\n  otlp/sink:\n    protocol: http\n    endpoint: "http://127.0.0.1:${sink.address().port}"\n    batch_bytes: 4KiB\n` +
      `service:\n  pipelines:\n    sessions:\n      receivers: [claude_code_local]\n      exporters: [otlp/sink]\n  telemetry:\n    metrics:\n      address: ""\n`,
  );
  for (let k = 0; k < KILLS; k++) {
    const had = requests;
    const child = spawn(process.execPath, [BIN, 'push', '--config', cfg, '--interval', '200ms'], { stdio: 'ignore' });
    await until(() => requests > had, 30_000, 10);
    await sleep(Math.random() * 300);
    child.kill('SIGKILL');
    killedAt[generation] = Date.now();
    await exited(child);
    generation++;
  }
  // Not spawnSync: the sink answers from this process's event loop.
  const last = spawn(process.execPath, [BIN, 'push', '--once', '--config', cfg], { stdio: 'ignore' });
  await exited(last);
  await new Promise((r) => sink.close(r));
  const landed = sessions.flatMap((s) => landedFiles(root, s).map((f) => relative(root, f.path)));
  // Every repeat follows a receipt whose push was killed within a second of its answer, by a later push.
  const resentAfterKill = (r) =>
    r.slice(1).every((next, i) => next.gen > r[i].gen && killedAt[r[i].gen] !== undefined && killedAt[r[i].gen] - r[i].answeredAt < 1000);
  return {
    kills: KILLS,
    files: landed.length,
    requests,
    lost: landed.filter((f) => !received.has(f)).length,
    duplicated: [...receipts.values()].filter((r) => r.length > 1 && !resentAfterKill(r)).length,
    resent: [...receipts.values()].filter((r) => r.length > 1 && resentAfterKill(r)).length,
    ...(process.env.CRASH_DEBUG ? { debug: [...receipts].filter(([, r]) => r.length > 1 && !resentAfterKill(r)).map(([f, r]) => ({ f, r, killedAt })) } : {}),
    unknownReceived: [...received.keys()].filter((f) => !landed.includes(f)).length,
    cleanPushExit: last.exitCode,
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
      const child = spawn(process.execPath, [runner, root, JSON.stringify({ protocols: { http: { endpoint: '127.0.0.1:0' } } })], {
        stdio: ['ignore', 'pipe', 'ignore'],
      });
      let out = '';
      child.stdout.on('data', (d) => {
        out += d;
        if (out.includes('\n')) res({ child, http: JSON.parse(out.split('\n')[0]).addresses.http });
      });
      child.once('exit', (c) => rej(new Error(`runner exited ${c}`)));
    });
  const answered = [];
  let i = 0;
  let sent = 0;
  let windowMs = 0;
  for (let k = 0; k < KILLS; k++) {
    const rx = await start();
    // Paced at 200 requests/s by a schedule (request n at t0 + 5n ms), not by sleeping 5 ms after each.
    const t0 = Date.now();
    const stopAt = t0 + 1000 + Math.random() * 1500;
    const inflight = [];
    for (let n = 0; Date.now() < stopAt; n++) {
      const session = `cm-${k}-${i++}`;
      sent++;
      inflight.push(
        httpPost(rx.http, '/v1/logs', ccLogsRequest(session), {}, false).then(
          (r) => r.status === 200 && answered.push(session),
          () => undefined,
        ),
      );
      const wait = t0 + (n + 1) * 5 - Date.now();
      if (wait > 0) await sleep(wait);
    }
    windowMs += Date.now() - t0;
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
    sent,
    requestsPerSecond: Math.round((sent / windowMs) * 1000),
    answered: answered.length,
    answeredRecords: answered.length * 5,
    lost: counts.reduce((a, c) => a + Math.max(0, 5 - c), 0),
    duplicated: counts.reduce((a, c) => a + Math.max(0, c - 5), 0),
    verify: verify(root, join(base, 'projects')),
  };
}

const CASE_FNS = { collect: collectCase, service: serviceCase, receiver: receiverCase, parse: parseCase, push: pushCase };
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
const bad = Object.values(summary.cases).some(
  (c) => c.lost || c.duplicated || c.conversationsDiffering || c.unknownReceived || c.cleanPushExit || c.cleanExit || !c.verify.ok,
);
process.exit(bad ? 1 : 0);
