/**
 * `aszcol hook`: what the Claude Code plugin's hooks run. It reads the hook's event on standard
 * input, reduces it to an observation (adapters/claude-code/hook-event.ts), and hands it to the
 * running service on loopback; when the service is not there or does not answer in time, it
 * appends it to the spool under the storage root itself (storage/hook-spool.ts).
 *
 * It must never hold up or break the agent: everything runs inside a hard time budget, the exit
 * status is 0 whatever happens (a PreToolUse hook exiting 2 would block the tool), and a problem
 * is written to `_hooks/hook.log`, never to the agent. `bin/aszcol.js` loads this module alone,
 * without the rest of the CLI, so the hook pays only for what it uses.
 */
import { request } from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { homedir, tmpdir } from 'node:os';
import { observeHookInput, wantsScan, SCAN_LIMIT, type HookObservation } from '../adapters/claude-code/hook-event.js';
import { shallowScan } from '../adapters/claude-code/dir-scan.js';
import { mcpServerSource, userConfigPath, PROJECT_CONFIG } from '../adapters/claude-code/mcp-server-source.js';
import { appendSpoolLine, appendSpoolLineSync, drainFallback, fallbackRoot, logHookProblem, readHookEndpoint, MAX_SPOOL_LINE } from '../storage/hook-spool.js';

/** The hard budget of one hook run, from the moment this module starts its work. */
export const HOOK_BUDGET_MS = 200;
/** The most of standard input kept; the rest is counted and dropped (the observation says so). */
const MAX_INPUT = 64 * 1024 * 1024;

/** How long a durable append already under way is waited for past the budget: abandoning it would lose the observation. */
export const APPEND_GRACE_MS = 1000;

/** What the budget's timer needs to know: whether the observation is handed over, being appended, or still to write. */
export interface HandOver {
  /** A durable append is under way. */
  now: boolean;
  /** The line is with the service or on disk. */
  done: boolean;
  pending?: { root: string; session?: string; line: string };
}

export interface HookOptions {
  root?: string;
  appending?: HandOver;
  /** The longest wait for the service's answer (default 80 ms, and never into the budget's last 80 ms). */
  serviceWaitMs?: number;
  budgetMs?: number;
  env?: NodeJS.ProcessEnv;
  stdin?: NodeJS.ReadableStream;
  now?: () => number;
}

export interface HookOutcome {
  /** `service` (the intake took it), `spool` (appended under the root), `fallback` (the root could not be written), `lost` (nothing could be written; logged). */
  via: 'service' | 'spool' | 'fallback' | 'lost';
  observation: HookObservation;
  root: string;
  elapsedMs: number;
  problems: string[];
}

/** The root the hook writes under: `--root`, else `ASZCOL_ROOT`; with neither, a place of the plugin's own, logged as a problem. */
export function hookRoot(opt: string | undefined, env: NodeJS.ProcessEnv): { root: string; problem?: string } {
  if (opt) return { root: resolve(opt) };
  if (env.ASZCOL_ROOT) return { root: resolve(env.ASZCOL_ROOT) };
  const base = env.CLAUDE_PLUGIN_DATA || tmpdir();
  return { root: resolve(base, 'aszcol-unrouted'), problem: 'no storage root named (--root or ASZCOL_ROOT): observations are kept under ' + base };
}

function readInput(stdin: NodeJS.ReadableStream, deadline: Promise<void>): Promise<{ raw: Buffer; cut?: string }> {
  return new Promise((done) => {
    const chunks: Buffer[] = [];
    let kept = 0;
    let seen = 0;
    let finished = false;
    const finish = (cut?: string) => {
      if (finished) return;
      finished = true;
      done({ raw: Buffer.concat(chunks), cut });
    };
    stdin.on('data', (c: Buffer | string) => {
      const b = typeof c === 'string' ? Buffer.from(c) : c;
      seen += b.length;
      if (kept + b.length <= MAX_INPUT) {
        chunks.push(b);
        kept += b.length;
      }
    });
    stdin.on('end', () => finish(seen > kept ? `input of ${seen} bytes: only the first ${kept} were kept` : undefined));
    stdin.on('error', (err) => finish(`standard input failed: ${err.message}`));
    void deadline.then(() => finish('standard input was still open at the time budget: the observation holds what had arrived'));
  });
}

/** Posts the line to the service's intake; resolves true only on a 2xx, which the intake sends after its durable append. */
function postToService(url: string, line: string, timeoutMs: number): Promise<{ ok: boolean; why?: string }> {
  return new Promise((done) => {
    let settled = false;
    const settle = (v: { ok: boolean; why?: string }) => {
      if (!settled) {
        settled = true;
        done(v);
      }
    };
    try {
      const req = request(
        url,
        { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(line) }, timeout: timeoutMs },
        (res) => {
          res.resume();
          const ok = (res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 300;
          settle(ok ? { ok } : { ok, why: `the service answered ${res.statusCode}` });
        },
      );
      req.on('timeout', () => {
        req.destroy();
        settle({ ok: false, why: `the service did not answer within ${timeoutMs} ms` });
      });
      req.on('error', (err) => settle({ ok: false, why: `the service is not reachable: ${err.message}` }));
      req.end(line);
    } catch (err) {
      settle({ ok: false, why: `cannot post to ${url}: ${(err as Error).message}` });
    }
  });
}

/** Shrinks an observation until its line fits the spool's line limit (the head goes first, then the error, then the scan). */
function fitLine(obs: HookObservation): string {
  let line = JSON.stringify(obs);
  if (line.length <= MAX_SPOOL_LINE) return line;
  const smaller: HookObservation = { ...obs, head: undefined, error: obs.error?.slice(0, 200) };
  if (smaller.shell?.scan) smaller.shell = { ...smaller.shell, scan: { ...smaller.shell.scan, entries: {}, complete: false } };
  line = JSON.stringify(smaller);
  return line;
}

/** Larger configuration files are not read inside the hook's budget; the source is then left out. */
const MAX_CONFIG_BYTES = 4 * 1024 * 1024;

/** A JSON file parsed, or undefined when it is absent, too large or not JSON: the lookup then finds nothing there. */
function readConfig(path: string): unknown {
  try {
    if (statSync(path).size > MAX_CONFIG_BYTES) return undefined;
    return JSON.parse(readFileSync(path, 'utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Names where the MCP server of the call is configured, as Claude Code reads its scopes, when the runtime did not say itself (older than 2.1.328). */
function withMcpSource(obs: HookObservation, env: NodeJS.ProcessEnv): void {
  if (!obs.mcp?.server || obs.mcp.source) return;
  const source = mcpServerSource(obs.mcp.server, obs.cwd, {
    userConfig: readConfig(userConfigPath(env, homedir())),
    projectConfig: (dir) => readConfig(join(dir, PROJECT_CONFIG)),
  });
  if (source) obs.mcp = { ...obs.mcp, source };
}

/** One hook run. Never rejects. */
export async function runHook(opts: HookOptions = {}): Promise<HookOutcome> {
  const now = opts.now ?? (() => performance.now());
  const started = now();
  const budget = opts.budgetMs ?? HOOK_BUDGET_MS;
  const left = () => budget - (now() - started);
  const env = opts.env ?? process.env;
  const { root, problem: rootProblem } = hookRoot(opts.root, env);
  const problems: string[] = rootProblem ? [rootProblem] : [];
  // Input gets at most half the budget; the rest is for handing it over.
  let timer: NodeJS.Timeout | undefined;
  const inputDeadline = new Promise<void>((r) => {
    timer = setTimeout(r, Math.max(1, budget / 2));
    timer.unref?.();
  });
  const { raw, cut } = await readInput(opts.stdin ?? process.stdin, inputDeadline);
  if (timer) clearTimeout(timer);
  const obs = observeHookInput(raw, new Date().toISOString());
  if (cut) obs.problem = obs.problem ? `${obs.problem}; ${cut}` : cut;
  if (wantsScan(obs)) obs.shell = { ...obs.shell, scan: shallowScan(obs.cwd!, SCAN_LIMIT) };
  withMcpSource(obs, env);
  const line = fitLine(obs);
  let via: HookOutcome['via'] = 'lost';
  const appending = opts.appending ?? { now: false, done: false };
  appending.pending = { root, session: obs.session, line };
  const endpoint = readHookEndpoint(root);
  if (endpoint && left() > 90) {
    // The service gets at most 80 ms, and never the last 80 ms of the budget: those are for appending it ourselves.
    const r = await postToService(endpoint.url, line, Math.round(Math.min(opts.serviceWaitMs ?? 80, left() - 80)));
    if (r.ok) via = 'service';
    else problems.push(r.why!);
  }
  appending.now = via === 'lost';
  if (via === 'lost') {
    try {
      await appendSpoolLine(root, obs.session, line);
      via = 'spool';
    } catch (err) {
      problems.push(`cannot append under ${root}: ${(err as Error).message}`);
      try {
        await appendSpoolLine(fallbackRoot(root), obs.session, line);
        via = 'fallback';
      } catch (err2) {
        problems.push(`cannot append under ${fallbackRoot(root)} either: ${(err2 as Error).message}`);
      }
    }
  }
  appending.now = false;
  appending.done = via !== 'lost';
  if ((via === 'spool' || via === 'service') && left() > 20 && existsSync(fallbackRoot(root))) {
    try {
      const moved = await drainFallback(root);
      if (moved) problems.push(`moved ${moved} earlier observations from ${fallbackRoot(root)} into the root`);
    } catch (err) {
      problems.push(`cannot move earlier observations from ${fallbackRoot(root)}: ${(err as Error).message}`);
    }
  }
  if (obs.problem) problems.push(`${obs.native_event ?? 'event'} ${obs.tool ?? ''}: ${obs.problem}`);
  const elapsedMs = now() - started;
  if (problems.length) {
    const at = new Date().toISOString();
    const msg = `hook ${obs.id} via ${via} in ${elapsedMs.toFixed(1)} ms: ${problems.join('; ')}`;
    await logHookProblem(via === 'fallback' ? fallbackRoot(root) : root, at, msg);
  }
  return { via, observation: obs, root, elapsedMs, problems };
}

/**
 * The command's entry: `aszcol hook [--root DIR]`. The budget is enforced by a timer that ends the
 * process, so a service that does not answer or an input that never closes cannot hold the agent.
 * At the budget, a line not yet handed over is appended synchronously before the process ends, and
 * a durable append already under way is waited for, at most `APPEND_GRACE_MS`. Exit status 0.
 */
export async function hookMain(argv: string[]): Promise<number> {
  const i = argv.indexOf('--root');
  const root = i >= 0 ? argv[i + 1] : undefined;
  // For `npm run bench:hook` only: a hook's stdout can be read by the runtime as a decision, so the plugin never passes it.
  const report = argv.includes('--report');
  const appending: HandOver = { now: false, done: false };
  const hard = setTimeout(() => {
    if (appending.now) {
      setTimeout(() => process.exit(0), APPEND_GRACE_MS).unref();
      return;
    }
    // Out of time with the line not yet handed over (the service still answering, a starved machine): one synchronous append, then out.
    const p = appending.pending;
    if (p && !appending.done) {
      try {
        appendSpoolLineSync(p.root, p.session, p.line);
      } catch {
        try {
          appendSpoolLineSync(fallbackRoot(p.root), p.session, p.line);
        } catch {
          // Neither place can be written: nothing more can be done inside the budget.
        }
      }
    }
    process.exit(0);
  }, HOOK_BUDGET_MS);
  hard.unref();
  try {
    const r = await runHook({ root, appending });
    if (report) process.stdout.write(JSON.stringify({ via: r.via, elapsed_ms: +r.elapsedMs.toFixed(2), problems: r.problems }) + '\n');
  } catch {
    // runHook does not reject; this is the last guard of exit status 0.
  }
  return 0;
}
