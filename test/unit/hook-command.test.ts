/**
 * `aszcol hook` under everything that can go wrong around it: the service down, gone, hanging or
 * up; the session locked by a collector; the storage root unwritable; input that never ends. In
 * each case the observation ends up on disk exactly once (or is logged as lost, with why), the run
 * ends without waiting on anything it cannot control, and its exit status is 0.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { runHook } from '../../src/cli/hook.js';
import { HookIntake } from '../../src/receivers/claude-code-local/hook-intake.js';
import { endpointPath, fallbackRoot, hookLogPath, readSpool, spoolDir } from '../../src/storage/hook-spool.js';
import { FileLock } from '../../src/storage/lock.js';
import { sessionLockPath } from '../../src/storage/layout.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { REPO } from '../helpers/cli.js';

afterAll(cleanupTemp);

const SESSION = '5f0c2a1e-0000-4000-8000-000000000001';
const event = (tool: string, extra: object = {}) =>
  JSON.stringify({
    session_id: SESSION,
    hook_event_name: 'PostToolUse',
    tool_name: 'mcp__lab__echo',
    tool_input: { text: 'ping' },
    tool_use_id: tool,
    duration_ms: 23,
    ...extra,
  });

function stdinOf(text: string | Buffer): PassThrough {
  const s = new PassThrough();
  s.end(text);
  return s;
}

const spooled = (root: string, session = SESSION) => readSpool(root, session).map((l) => l.value as { tool?: string; problem?: string });

describe('where an observation goes', () => {
  test('no service (no endpoint file): appended to the spool under the root', async () => {
    const root = tempDir('aszcol-hook-');
    const r = await runHook({ root, stdin: stdinOf(event('toolu_a')) });
    expect(r.via).toBe('spool');
    expect(spooled(root).map((o) => o.tool)).toEqual(['toolu_a']);
  });

  test('the service is gone (its endpoint file left behind, nothing listening): the spool, and the log says why', async () => {
    const root = tempDir('aszcol-hook-');
    const closed = createServer();
    await new Promise<void>((ok) => closed.listen(0, '127.0.0.1', () => ok()));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((ok) => closed.close(() => ok()));
    mkdirSync(join(root, '_hooks'), { recursive: true });
    writeFileSync(endpointPath(root), JSON.stringify({ url: `http://127.0.0.1:${port}/v1/hook`, pid: 1 }));
    const r = await runHook({ root, stdin: stdinOf(event('toolu_b')) });
    expect(r.via).toBe('spool');
    expect(spooled(root).map((o) => o.tool)).toEqual(['toolu_b']);
    expect(readFileSync(hookLogPath(root), 'utf8')).toMatch(/not reachable/);
  });

  test('the service accepts the connection and never answers: the hook stops waiting and spools it itself', async () => {
    const root = tempDir('aszcol-hook-');
    const hanging: Server = createServer(() => undefined);
    await new Promise<void>((ok) => hanging.listen(0, '127.0.0.1', () => ok()));
    mkdirSync(join(root, '_hooks'), { recursive: true });
    writeFileSync(endpointPath(root), JSON.stringify({ url: `http://127.0.0.1:${(hanging.address() as AddressInfo).port}/v1/hook`, pid: 1 }));
    try {
      const r = await runHook({ root, stdin: stdinOf(event('toolu_c')) });
      expect(r.via).toBe('spool');
      expect(r.problems.join()).toMatch(/did not answer within/);
      expect(spooled(root).map((o) => o.tool)).toEqual(['toolu_c']);
    } finally {
      hanging.closeAllConnections();
      await new Promise<void>((ok) => hanging.close(() => ok()));
    }
  });

  test('the service is up: its intake appends it (once) and the hook writes nothing itself', async () => {
    const root = tempDir('aszcol-hook-');
    const intake = new HookIntake(root, '127.0.0.1', 0, () => undefined);
    await intake.start();
    try {
      // A loaded machine can keep the intake from answering in the plugin's 80 ms: this is about the path, so it is given time.
      const r = await runHook({ root, stdin: stdinOf(event('toolu_d')), budgetMs: 5000, serviceWaitMs: 3000 });
      expect(r.via).toBe('service');
      expect(spooled(root).map((o) => o.tool)).toEqual(['toolu_d']);
    } finally {
      await intake.stop();
    }
    // Stopping removes the endpoint file, so the next hook does not try a service that is gone.
    expect(existsSync(endpointPath(root))).toBe(false);
  });

  test('the intake refuses what is not an observation, and a body over the line limit', async () => {
    const root = tempDir('aszcol-hook-');
    const intake = new HookIntake(root, '127.0.0.1', 0, () => undefined);
    const url = await intake.start();
    try {
      expect((await fetch(url, { method: 'POST', body: '{"x":1}' })).status).toBe(400);
      expect((await fetch(url, { method: 'POST', body: 'nope' })).status).toBe(400);
      expect((await fetch(url, { method: 'POST', body: 'x'.repeat(17 * 1024) })).status).toBe(413);
      expect((await fetch(url.replace('/v1/hook', '/other'), { method: 'POST', body: '{}' })).status).toBe(404);
    } finally {
      await intake.stop();
    }
    expect(existsSync(spoolDir(root))).toBe(false);
  });

  test("a collector holds the session's lock: the hook takes no lock, so it is not held up and the observation is spooled", async () => {
    const root = tempDir('aszcol-hook-');
    const lock = new FileLock(sessionLockPath(root, SESSION));
    expect(lock.tryAcquire()).toBe(true);
    try {
      const r = await runHook({ root, stdin: stdinOf(event('toolu_e')) });
      expect(r.via).toBe('spool');
    } finally {
      lock.release();
    }
    expect(spooled(root).map((o) => o.tool)).toEqual(['toolu_e']);
  });

  test('the root cannot be written: the observation waits in the fallback area, and the next hook that can write moves it in', async () => {
    const base = tempDir('aszcol-hook-');
    const root = join(base, 'root');
    // A file where the root's `_hooks` directory must go: no directory can be made there, even as root.
    mkdirSync(root);
    writeFileSync(join(root, '_hooks'), 'in the way');
    const first = await runHook({ root, stdin: stdinOf(event('toolu_f')) });
    expect(first.via).toBe('fallback');
    expect(readSpool(fallbackRoot(root), SESSION).map((l) => (l.value as { tool: string }).tool)).toEqual(['toolu_f']);
    // The root is writable again.
    writeFileSync(join(root, '_hooks'), '');
    const { rmSync } = await import('node:fs');
    rmSync(join(root, '_hooks'));
    // A generous budget: this is about where the line goes; a hook short of time leaves the move to the next one.
    const second = await runHook({ root, stdin: stdinOf(event('toolu_g')), budgetMs: 5000 });
    expect(second.via).toBe('spool');
    expect(
      spooled(root)
        .map((o) => o.tool)
        .sort(),
    ).toEqual(['toolu_f', 'toolu_g']);
    expect(existsSync(fallbackRoot(root))).toBe(false);
  });
});

describe('input that is not a well-formed event', () => {
  test('malformed, truncated, empty: each is spooled as evidence with its reason', async () => {
    const root = tempDir('aszcol-hook-');
    await runHook({ root, stdin: stdinOf(event('toolu_h').slice(0, 60)) });
    await runHook({ root, stdin: stdinOf('') });
    // The truncated one kept its session (found by text); the empty one has none and goes to _unplaced.
    expect(spooled(root)[0]!.problem).toMatch(/not JSON/);
    const unplaced = readSpool(root, '_unplaced').map((l) => l.value as { problem: string });
    expect(unplaced.map((o) => o.problem)).toEqual(['the hook received no input']);
  });

  test('an unusable session id (a path) is not made a file name: it goes to _unplaced', async () => {
    const root = tempDir('aszcol-hook-');
    await runHook({ root, stdin: stdinOf(JSON.stringify({ session_id: '../../etc', hook_event_name: 'SessionStart' })) });
    expect(readSpool(root, '_unplaced')).toHaveLength(1);
  });

  test('a huge input (over the parse limit) is spooled as a small line that still names its call', async () => {
    const root = tempDir('aszcol-hook-');
    const big = event('toolu_i', { tool_response: 'y'.repeat(5 * 1024 * 1024) });
    const r = await runHook({ root, stdin: stdinOf(big), budgetMs: 5000 });
    expect(r.via).toBe('spool');
    const [o] = spooled(root);
    expect(o).toMatchObject({ tool: 'toolu_i', input: { state: 'too_large', bytes: big.length } });
    expect(readFileSync(join(spoolDir(root), `${SESSION}.jsonl`)).length).toBeLessThan(16 * 1024);
  });

  test('input that never ends: the hook stops reading at half its budget and spools what it had, saying so', async () => {
    const root = tempDir('aszcol-hook-');
    const open = new PassThrough();
    open.write(event('toolu_j'));
    const r = await runHook({ root, stdin: open, budgetMs: 100 });
    expect(r.via).toBe('spool');
    expect(spooled(root)[0]).toMatchObject({ tool: 'toolu_j', problem: expect.stringContaining('still open') });
  });
});

describe('the command as the plugin runs it', () => {
  test('bin/aszcol.js hook exits 0 and spools the event; with input that breaks everything it still exits 0', async () => {
    const root = tempDir('aszcol-hook-');
    const run = (input: string) =>
      new Promise<number | null>((done) => {
        const p = spawn(process.execPath, [join(REPO, 'bin', 'aszcol.js'), 'hook'], {
          env: { ...process.env, ASZCOL_ROOT: root },
          stdio: ['pipe', 'ignore', 'ignore'],
        });
        p.on('exit', (code) => done(code));
        p.stdin.end(input);
      });
    expect(await run(event('toolu_k'))).toBe(0);
    expect(await run('\u0000{{{')).toBe(0);
    expect(spooled(root).map((o) => o.tool)).toEqual(['toolu_k']);
    expect(readSpool(root, '_unplaced')).toHaveLength(1);
  });
});
