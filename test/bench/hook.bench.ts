/**
 * `npm run bench:hook`: how long `aszcol hook` holds a tool call, as JSON. The command is run as
 * the plugin runs it (a new `node bin/aszcol.js hook` process per event, the event on stdin), with
 * no service (it appends the spool itself) and with the local receiver's intake listening. For
 * each: the process's wall time (Node's own start-up included, which the hook cannot shorten) and
 * the time inside the hook (`--report`), against the 200 ms budget; and a bare `node -e 0` for
 * the start-up alone. BENCH_HOOK_RUNS (default 30) runs each.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { HookIntake } from '../../src/receivers/claude-code-local/hook-intake.js';
import { HOOK_BUDGET_MS } from '../../src/cli/hook.js';

const RUNS = Number(process.env.BENCH_HOOK_RUNS ?? 30);
const BIN = resolve('bin', 'aszcol.js');
const event = (i: number) =>
  JSON.stringify({
    session_id: '5f0c2a1e-0000-4000-8000-00000000be0c',
    hook_event_name: 'PostToolUse',
    tool_name: 'mcp__lab__echo',
    tool_input: { text: 'ping' },
    tool_response: [{ type: 'text', text: 'x'.repeat(2000) }],
    tool_use_id: `toolu_bench_${i}`,
    duration_ms: 23,
  });

function run(args: string[], input: string, env: NodeJS.ProcessEnv): Promise<{ wallMs: number; out: string }> {
  return new Promise((done, fail) => {
    const t0 = performance.now();
    const p = spawn(process.execPath, args, { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'ignore'] });
    let out = '';
    p.stdout.on('data', (d: Buffer) => (out += d.toString()));
    p.on('error', fail);
    p.on('exit', () => done({ wallMs: performance.now() - t0, out }));
    p.stdin.end(input);
  });
}

const stats = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const q = (f: number) => +s[Math.min(s.length - 1, Math.floor(f * s.length))]!.toFixed(1);
  return { p50: q(0.5), p95: q(0.95), max: +s[s.length - 1]!.toFixed(1) };
};

async function mode(root: string): Promise<object> {
  const wall: number[] = [];
  const inside: number[] = [];
  const via: Record<string, number> = {};
  for (let i = 0; i < RUNS; i++) {
    const r = await run([BIN, 'hook', '--report'], event(i), { ASZCOL_ROOT: root });
    wall.push(r.wallMs);
    const rep = JSON.parse(r.out.trim() || '{}') as { via?: string; elapsed_ms?: number };
    if (rep.elapsed_ms !== undefined) inside.push(rep.elapsed_ms);
    via[rep.via ?? 'none'] = (via[rep.via ?? 'none'] ?? 0) + 1;
  }
  return { via, wall_ms: stats(wall), in_hook_ms: stats(inside), in_hook_over_budget: inside.filter((x) => x > HOOK_BUDGET_MS).length };
}

const base = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'aszcol-bench-hook-'));
try {
  const startup: number[] = [];
  for (let i = 0; i < RUNS; i++) startup.push((await run(['-e', '0'], '', {})).wallMs);
  const spool = await mode(join(base, 'spool'));
  const intake = new HookIntake(join(base, 'service'), '127.0.0.1', 0, () => undefined);
  await intake.start();
  let service: object;
  try {
    service = await mode(join(base, 'service'));
  } finally {
    await intake.stop();
  }
  process.stdout.write(
    JSON.stringify({ bench: 'hook', runs: RUNS, budget_ms: HOOK_BUDGET_MS, node_startup_ms: stats(startup), no_service: spool, service }, null, 2) + '\n',
  );
} finally {
  rmSync(base, { recursive: true, force: true });
}
