#!/usr/bin/env node
// The README's screenshots, from a real session: the real Claude Code CLI runs against the lab's
// scripted API on loopback (../shared/lab), aszcol collects and parses what it wrote, `aszcol view`
// serves it, and Debian's Chromium (driven by playwright-core, nothing downloaded) photographs the
// list and one conversation.
//
//   npm run screenshots                  # into docs/
//   node scripts/screenshots.mjs --out DIR
//
// Prints one JSON line: the files written and their sizes. Needs the build (dist/) and /usr/bin/chromium.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SHARED = resolve(REPO, '..', 'shared');
const BIN = join(REPO, 'bin', 'aszcol.js');
const CHROMIUM = '/usr/bin/chromium';
const VIEWPORT = { width: 1440, height: 900 };

function fail(message) {
  process.stderr.write(`screenshots: ${message}\n`);
  process.exit(1);
}

function argValue(name, fallback) {
  const i = process.argv.indexOf(name);
  return i >= 0 && process.argv[i + 1] ? resolve(process.argv[i + 1]) : fallback;
}

function aszcol(args) {
  const r = spawnSync(process.execPath, [BIN, ...args], { encoding: 'utf8' });
  if (r.status !== 0) fail(`aszcol ${args.join(' ')} exited ${r.status}: ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** Starts `aszcol view` on a free loopback port; resolves with the process and its URL once it serves. */
function serve(config) {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [BIN, 'view', '--config', config, '--listen', '127.0.0.1:0'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      rej(new Error(`aszcol view did not say where it serves within 30 s: ${out}${err}`));
    }, 30_000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /at (http:\/\/[^ ]+?)\/? /.exec(out);
      if (m) {
        clearTimeout(timer);
        res({ child, url: m[1] });
      }
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`aszcol view exited ${code}: ${err}`));
    });
  });
}

async function main() {
  const out = argValue('--out', join(REPO, 'docs'));
  if (!existsSync(join(REPO, 'dist', 'src', 'cli', 'main.js'))) fail('no build: run `npm run build` first');
  if (!existsSync(CHROMIUM)) fail(`${CHROMIUM} is missing: apt-get install -y --no-install-recommends chromium`);
  if (!existsSync(join(SHARED, 'lab', 'claude-lab.mjs'))) fail(`the lab is missing: ${join(SHARED, 'lab')} (../shared beside the repo)`);
  const { chromium } = await import('playwright-core');
  const lab = await import(pathToFileURL(join(SHARED, 'lab', 'claude-lab.mjs')).href);

  const base = mkdtempSync(join(tmpdir(), 'aszcol-screenshots-'));
  const home = join(base, 'home');
  let view;
  let browser;
  try {
    // Two sessions in two projects: one that delegates to a subagent, one that edits a file.
    const script = join(SHARED, 'lab', 'scripts', 'work.json');
    const runs = [
      { cwd: join(base, 'shop-api'), prompt: 'DELEGATE the test run to a helper', tools: 'Bash,Agent' },
      { cwd: join(base, 'notes-site'), prompt: 'EDITFILE the notes for the release', tools: 'Write,Edit' },
    ];
    const sessions = [];
    for (const r of runs) {
      mkdirSync(r.cwd, { recursive: true });
      const done = await lab.run({ configDir: home, script, log: join(base, 'requests.jsonl'), ...r });
      if (done.exit_code !== 0 || !done.session_id) fail(`the lab run "${r.prompt}" failed (${done.exit_code}): ${done.stderr || done.stdout}`);
      sessions.push(done.session_id);
    }
    const config = join(base, 'aszcol.yaml');
    writeFileSync(
      config,
      `storage:\n  root: ${JSON.stringify(join(base, 'data'))}\nreceivers:\n  claude_code_local:\n    source_root: ${JSON.stringify(join(home, 'projects'))}\n    exclude: []\n`,
    );
    aszcol(['collect', '--once', '--config', config]);
    aszcol(['parse', '--config', config]);

    view = await serve(config);
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run'] });
    const page = await browser.newPage({ viewport: VIEWPORT, colorScheme: 'dark' });
    mkdirSync(out, { recursive: true });
    const shots = [];
    const shoot = async (name) => {
      const path = join(out, name);
      await page.screenshot({ path });
      shots.push({ path, bytes: statSync(path).size });
    };

    await page.goto(`${view.url}/`);
    await page.waitForSelector('body[data-ready=list]');
    await shoot('screenshot-list.png');

    await page.goto(`${view.url}/c/${encodeURIComponent(sessions[0])}`);
    await page.waitForSelector('body[data-ready=conversation]');
    // Open the first model call, so the inspector beside the transcript shows a step.
    const call = page.locator('.row[data-kind="llm.call"]').first();
    if (await call.count()) await call.click();
    await shoot('screenshot-conversation.png');

    process.stdout.write(JSON.stringify({ sessions, screenshots: shots }) + '\n');
  } finally {
    await browser?.close();
    view?.child.kill('SIGTERM');
    rmSync(base, { recursive: true, force: true });
  }
}

main().catch((err) => fail(err?.stack ?? String(err)));
