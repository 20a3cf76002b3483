import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { BIN } from './cli.js';

export interface LogRecord {
  ts: string;
  level: string;
  msg: string;
  component?: string;
  [k: string]: unknown;
}

export interface RunningService {
  child: ChildProcess;
  /** Every JSON log line so far (stderr). */
  logs: LogRecord[];
  /** Lines on stderr that were not JSON (configuration errors are plain text). */
  plain: string[];
  stdout: () => string;
  /** Resolves with the first log record `pred` accepts, waiting at most `ms`. */
  waitFor: (pred: (r: LogRecord) => boolean, ms?: number) => Promise<LogRecord>;
  /** Resolves when the process ends: its exit code (128 + signal when killed) and when. */
  exited: Promise<{ code: number; at: number }>;
  /** The addresses from the `service started` line. */
  addresses: () => Promise<Record<string, string>>;
}

/** Starts `aszcol` (the service) as a real process; it is killed after `killAfterMs` (2 minutes) if still running. */
export function startService(args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv; killAfterMs?: number } = {}): RunningService {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: opts.cwd, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  const logs: LogRecord[] = [];
  const plain: string[] = [];
  let out = '';
  let partial = '';
  const waiters: { pred: (r: LogRecord) => boolean; res: (r: LogRecord) => void }[] = [];
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => {
    partial += d;
    const lines = partial.split('\n');
    partial = lines.pop()!;
    for (const line of lines) {
      let rec: LogRecord;
      try {
        rec = JSON.parse(line) as LogRecord;
      } catch {
        plain.push(line);
        continue;
      }
      logs.push(rec);
      for (const w of [...waiters])
        if (w.pred(rec)) {
          waiters.splice(waiters.indexOf(w), 1);
          w.res(rec);
        }
    }
  });
  const killer = setTimeout(() => child.kill('SIGKILL'), opts.killAfterMs ?? 120_000);
  const exited = new Promise<{ code: number; at: number }>((res) => {
    child.on('close', (code, signal) => {
      clearTimeout(killer);
      res({ code: code ?? (signal ? 128 + ({ SIGKILL: 9, SIGTERM: 15, SIGINT: 2 } as Record<string, number>)[signal]! : 1), at: Date.now() });
    });
  });
  const waitFor = (pred: (r: LogRecord) => boolean, ms = 30_000) => {
    const seen = logs.find(pred);
    if (seen) return Promise.resolve(seen);
    return new Promise<LogRecord>((res, rej) => {
      const t = setTimeout(
        () => rej(new Error(`no matching log line within ${ms} ms; logs:\n${logs.map((l) => JSON.stringify(l)).join('\n')}\n${plain.join('\n')}`)),
        ms,
      );
      waiters.push({
        pred,
        res: (r) => {
          clearTimeout(t);
          res(r);
        },
      });
      void exited.then(() =>
        setTimeout(
          () => (
            clearTimeout(t),
            rej(new Error(`the service exited before a matching log line; logs:\n${logs.map((l) => JSON.stringify(l)).join('\n')}\n${plain.join('\n')}`))
          ),
          50,
        ),
      );
    });
  };
  return {
    child,
    logs,
    plain,
    stdout: () => out,
    waitFor,
    exited,
    addresses: async () => (await waitFor((r) => r.msg === 'service started')).addresses as Record<string, string>,
  };
}

/** Every `.lock` file under a storage root (a drained service leaves none). */
export function locksUnder(root: string): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      if (e.isDirectory()) walk(join(dir, e.name));
      else if (e.name === '.lock' || e.name.endsWith('.lock')) found.push(join(dir, e.name));
    }
  };
  walk(root);
  return found;
}

/** GET with a bounded number of attempts until `ok(status)`; returns the last response's status and body. */
export async function pollHttp(url: string, ok: (status: number) => boolean, attempts = 100, everyMs = 100): Promise<{ status: number; body: string }> {
  let last = { status: 0, body: '' };
  for (let i = 0; i < attempts; i++) {
    try {
      const r = await fetch(url);
      last = { status: r.status, body: await r.text() };
      if (ok(r.status)) return last;
    } catch (err) {
      last = { status: 0, body: (err as Error).message };
    }
    await new Promise((r) => setTimeout(r, everyMs));
  }
  return last;
}
