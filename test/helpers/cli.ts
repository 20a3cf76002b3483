import { spawn, type SpawnOptions } from 'node:child_process';
import { constants } from 'node:os';
import { mkdirSync, writeFileSync } from 'node:fs';
import { tempDir } from './tmp.js';
import { join, resolve } from 'node:path';

export const REPO = resolve(process.cwd());
export const BIN = join(REPO, 'bin', 'aszcol.js');
export const SHARED = resolve(REPO, '..', 'shared');

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs the real CLI as a separate process, the way a user or a cron job would. */
export function runCli(args: string[], opts: SpawnOptions & { env?: NodeJS.ProcessEnv } = {}): Promise<CliResult> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, [BIN, ...args], { ...opts, env: { ...process.env, ...opts.env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '',
      stderr = '';
    child.stdout!.on('data', (d) => (stdout += d));
    child.stderr!.on('data', (d) => (stderr += d));
    const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
    child.on('error', rej);
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      // A process killed by a signal reports 128 + its number, as a shell would.
      res({ code: code ?? (signal ? 128 + (constants.signals[signal] ?? 0) : 1), stdout, stderr });
    });
  });
}

/**
 * What most scenarios start from: one `collect --once` and one `parse` under `config`, each
 * exiting 0 and parse saying nothing on stderr; otherwise the failure names the command and its output.
 */
export async function collectAndParse(config: string): Promise<void> {
  for (const args of [['collect', '--once'], ['parse']]) {
    const r = await runCli([...args, '--config', config]);
    const clean = r.code === 0 && (args[0] !== 'parse' || r.stderr === '');
    if (!clean) throw new Error(`aszcol ${args.join(' ')} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
  }
}

/** Writes a pipeline YAML naming a storage root and a source root; returns its path. */
export function writeConfig(dir: string, root: string, sourceRoot: string, extra = ''): string {
  const path = join(dir, 'aszcol.yaml');
  writeFileSync(
    path,
    `storage:\n  root: ${JSON.stringify(root)}\nreceivers:\n  claude_code_local:\n    source_root: ${JSON.stringify(sourceRoot)}\n    exclude: []\n${extra}`,
  );
  return path;
}

/** A fresh temporary directory with a storage root (`data`), an empty source root (`projects`) and a configuration naming both. */
export function cliRoot(prefix: string): { base: string; root: string; src: string; config: string } {
  const base = tempDir(prefix);
  const root = join(base, 'data');
  const src = join(base, 'projects');
  mkdirSync(src, { recursive: true });
  return { base, root, src, config: writeConfig(base, root, src) };
}
