/**
 * A storage root for the exporter's tests, built the way a user's is: scenarios written as Claude
 * Code's files, collected and parsed by the CLI. Sessions land at different times (so the session
 * landed first is not the one whose id sorts first), one in three checkpoints (three rounds, and
 * transcripts landed in several files).
 */
import { cpSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tempDir } from '../helpers/tmp.js';
import { join, relative } from 'node:path';
import { createHash } from 'node:crypto';
import { runCli, SHARED } from '../helpers/cli.js';

export const CONFORMANCE = join(SHARED, 'conformance', 'scenarios');
export const AT = '2026-06-01T09:00:00Z';

async function cli(args: string[]): Promise<string> {
  const r = await runCli(args);
  if (r.code !== 0) throw new Error(`aszcol ${args.join(' ')} exited ${r.code}: ${r.stderr || r.stdout}`);
  return r.stdout;
}

/** Builds the root under `dir`; returns it (the scenario build's aszcol.yaml is beside it). */
export async function buildRoot(
  dir: string,
  scenarios: string[] = ['test/scenarios/child-tools.yaml', join(CONFORMANCE, 'workflow.yaml'), join(CONFORMANCE, 'delegation.yaml')],
): Promise<string> {
  const config = join(dir, 'aszcol.yaml');
  for (const s of scenarios) {
    await cli(['scenario', 'build', s, '--out', dir, '--at', AT]);
    await cli(['collect', '--once', '--config', config]);
    await cli(['parse', '--config', config]);
  }
  const three = join(CONFORMANCE, 'three-rounds.yaml');
  for (const through of ['first', 'second', undefined]) {
    await cli(['scenario', 'build', three, '--out', dir, '--at', AT, ...(through ? ['--through', through] : [])]);
    await cli(['collect', '--once', '--config', config]);
    await cli(['parse', '--config', config]);
  }
  return dir;
}

/** Every landed file and round of a root, root-relative, with its bytes' SHA-256. */
export function rootFiles(root: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string) => {
    for (const n of readdirSync(d)) {
      const p = join(d, n);
      if (statSync(p).isDirectory()) {
        if (n === '_source' || n === '_metrics' || n === 'index' || n === 'metrics') continue;
        walk(p);
      } else if (/\.(sd|sf)$/.test(n) && statSync(p).size > 0) {
        out.set(relative(root, p), createHash('sha256').update(readFileSync(p)).digest('hex'));
      }
    }
  };
  walk(root);
  return out;
}

export function pipelineYaml(root: string, exporter: Record<string, unknown>, opts: { metrics?: 'derived' | 'received' | false; extra?: string } = {}): string {
  const exp = Object.entries(exporter)
    .map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`)
    .join('\n');
  const metrics =
    opts.metrics === 'derived'
      ? '    metrics:\n      receivers: [claude_code_local]\n      processors: [token_metrics]\n      exporters: [otlp/sink]\n'
      : opts.metrics === 'received'
        ? '    metrics:\n      receivers: [claude_code_otlp]\n      exporters: [otlp/sink]\n'
        : '';
  return (
    `storage:\n  root: ${JSON.stringify(root)}\nreceivers:\n  claude_code_local:\n    source_root: ${JSON.stringify(join(root, '_source', 'projects'))}\n    exclude: []\n` +
    (opts.metrics === 'received' ? '  claude_code_otlp:\n    protocols:\n      grpc: { endpoint: "127.0.0.1:0" }\n' : '') +
    `processors:\n  assembler:\n  token_metrics:\n    lookback: none\nexporters:\n  otlp/sink:\n${exp}\n${opts.extra ?? ''}` +
    `service:\n  pipelines:\n    sessions:\n      receivers: [claude_code_local]\n      processors: [assembler]\n      exporters: [otlp/sink]\n${metrics}` +
    '  telemetry:\n    metrics:\n      address: ""\n'
  );
}

/** A fresh copy of a built root with nothing recorded as sent, so each test starts from zero. */
export function copyRoot(built: string, prefix: string): string {
  const d = join(tempDir(prefix), 'root');
  cpSync(built, d, { recursive: true });
  rmSync(join(d, 'push.state'), { force: true });
  return d;
}
