/**
 * `npm run bench:usage`: `aszcol usage session --json` against `ccusage session --json --offline`
 * (18.0.11) on the same Claude Code directory, as JSON (also bench-out/usage.json). Two of ours:
 * from a landed root (`--no-collect`, target ≤ 0.2× ccusage) and from scratch (collect, parse and
 * report on an empty root, target ≤ 1× ccusage). Each timing is the median of BENCH_RUNS runs of
 * the real command in its own process. The corpus is generated (BENCH_USAGE_SESSIONS sessions of
 * about BENCH_USAGE_MAIN_BYTES each, two subagents apiece) unless BENCH_USAGE_CORPUS names a
 * directory holding `projects/` (the history benchmark's corpus, say).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { UsageAnswer } from '../../src/assemble/usage/answer.js';
import { BIN, writeConfig } from '../helpers/cli.js';
import { generateCorpus } from './corpus.js';

const CCUSAGE = join(process.cwd(), 'node_modules', '.bin', 'ccusage');
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const SESSIONS = Number(process.env.BENCH_USAGE_SESSIONS ?? 40);
const MAIN_BYTES = Number(process.env.BENCH_USAGE_MAIN_BYTES ?? 1_500_000);
const MB = 1e6;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

function timed(cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): { ms: number; out: string } {
  const t0 = process.hrtime.bigint();
  const out = execFileSync(cmd, args, { env: { ...process.env, ...env }, encoding: 'utf8', maxBuffer: 1 << 30 });
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, out };
}

async function main(): Promise<void> {
  const base = mkdtempSync(join(tmpdir(), 'aszcol-bench-usage-'));
  try {
    let home = process.env.BENCH_USAGE_CORPUS;
    let corpusBytes: number | undefined;
    if (!home) {
      home = join(base, 'home');
      corpusBytes = (await generateCorpus(join(home, 'projects'), { sessions: SESSIONS, mainBytes: MAIN_BYTES, children: 2, childBytes: MAIN_BYTES / 5 }))
        .bytes;
    }
    const usageArgs = (config: string, extra: string[] = []) => [BIN, 'usage', 'session', '--json', '--timezone', 'UTC', '--config', config, ...extra];

    // ccusage first, so the page cache is warm for it as it will be for us.
    const cc: number[] = [];
    let ccOut = '';
    for (let i = 0; i < RUNS; i++) {
      const t = timed(CCUSAGE, ['session', '--json', '--offline'], { CLAUDE_CONFIG_DIR: home, TZ: 'UTC' });
      cc.push(t.ms);
      ccOut = t.out;
    }

    const scratch: number[] = [];
    let root = '';
    for (let i = 0; i < RUNS; i++) {
      const dir = join(base, `scratch-${i}`);
      mkdirSync(dir);
      root = join(dir, 'data');
      const config = writeConfig(dir, root, join(home, 'projects'));
      scratch.push(timed(process.execPath, usageArgs(config)).ms);
      if (i < RUNS - 1) rmSync(dir, { recursive: true, force: true });
    }

    const landedConfig = writeConfig(base, root, join(home, 'projects'));
    const landed: number[] = [];
    let ours = '';
    for (let i = 0; i < RUNS; i++) {
      const t = timed(process.execPath, usageArgs(landedConfig, ['--no-collect']));
      landed.push(t.ms);
      ours = t.out;
    }

    const a = JSON.parse(ours) as UsageAnswer;
    const c = JSON.parse(ccOut) as { totals: { totalTokens: number; outputTokens: number } };
    const ccMs = median(cc);
    const result = {
      corpus: {
        dir: process.env.BENCH_USAGE_CORPUS ?? 'generated',
        mb: corpusBytes === undefined ? undefined : +(corpusBytes / MB).toFixed(1),
        sessions: a.rows.length,
      },
      runs: RUNS,
      ccusage_ms: Math.round(ccMs),
      aszcol_landed_ms: Math.round(median(landed)),
      aszcol_scratch_ms: Math.round(median(scratch)),
      landed_ratio: +(median(landed) / ccMs).toFixed(3),
      scratch_ratio: +(median(scratch) / ccMs).toFixed(3),
      targets: { landed_ratio: '≤ 0.2', scratch_ratio: '≤ 1' },
      totals: { aszcol_total_tokens: a.totals.total_tokens, ccusage_total_tokens: c.totals.totalTokens, aszcol_calls: a.totals.calls },
    };
    mkdirSync('bench-out', { recursive: true });
    writeFileSync(join('bench-out', 'usage.json'), JSON.stringify(result, null, 2));
    process.stdout.write(JSON.stringify(result) + '\n');
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

await main();
