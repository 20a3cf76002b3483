/**
 * `npm run bench:service`: `bench:history`'s service part alone. The same corpus (real lab
 * sessions replicated with fresh ids, `BENCH_SCALE` scales it), collected and parsed by the CLI,
 * then the running service timed from an appended line to the page, with each line's breakdown.
 */
import { spawnSync } from 'node:child_process';
import { appendFileSync, mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { seedSessions } from './history-seeds.js';
import { generateHistory } from './history-corpus.js';
import { historyConfig, serviceLatency } from './history-service.js';

const BIN = join(resolve(process.cwd()), 'bin', 'aszcol.js');

const scale = Number(process.env.BENCH_SCALE ?? 1);
const base = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'aszcol-service-'));
const projects = join(base, 'home', 'projects');
const root = join(base, 'data');
const cfg = historyConfig(join(base, 'aszcol.yaml'), root, projects);
const result: Record<string, unknown> = { benchmark: 'service', node: process.version, scale, load_before: loadavg().map((l) => +l.toFixed(2)) };
try {
  const seeds = await seedSessions((m) => process.stderr.write(`bench:service: ${m}\n`));
  const corpus = generateHistory(projects, seeds, { minSessions: Math.round(750 * scale), minBytes: 255e6 * scale });
  result.corpus = { sessions: corpus.sessions, sources: corpus.sources, mb: +(corpus.bytes / 1e6).toFixed(1) };
  for (const args of [['collect', '--once'], ['parse']]) {
    const r = spawnSync(process.execPath, [BIN, ...args, '--config', cfg], { encoding: 'utf8', maxBuffer: 1 << 28 });
    if (r.status !== 0) throw new Error(`aszcol ${args.join(' ')} exited ${r.status}: ${(r.stderr ?? '').slice(-2000)}`);
  }
  result.service = await serviceLatency({ config: cfg, projects, root, bin: BIN, appendLine: appendFileSync });
  result.load_after = loadavg().map((l) => +l.toFixed(2));
} finally {
  if (!process.env.BENCH_KEEP) rmSync(base, { recursive: true, force: true });
  else result.kept = base;
}
process.stdout.write(JSON.stringify(result, null, 2) + '\n');
