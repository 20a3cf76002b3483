/**
 * `npm run bench:collect`: collection throughput and memory on a generated corpus, as JSON.
 * Figures are ratios and rates from one run on this machine, never asserted in a unit test.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateCorpus } from './corpus.js';
import { defaultWorkers } from '../../src/receivers/claude-code-local/session-pool.js';

const worker = fileURLToPath(new URL('./collect-worker.js', import.meta.url));
const MB = 1e6;

interface WorkerOut {
  passes: { ms: number; sources: number; files: number; records: number; bytes: number; errors: number; pending: number }[];
  maxRssBytes: number;
}

const WORKERS = Number(process.env.BENCH_WORKERS ?? defaultWorkers());

function runWorker(root: string, src: string, passes: number): WorkerOut {
  const out = execFileSync(process.execPath, [worker, root, src, String(passes), String(WORKERS)], { encoding: 'utf8', maxBuffer: 1 << 24 });
  return JSON.parse(out) as WorkerOut;
}

async function main(): Promise<void> {
  const scale = Number(process.env.BENCH_SCALE ?? 1);
  const base = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'aszcol-bench-'));
  const result: Record<string, unknown> = { benchmark: 'collect', node: process.version, scale, workers: WORKERS };
  try {
    // 1. First pass over a corpus of at least 300 MB: many sessions, child streams, lines up to 5 MB.
    const src = join(base, 'big', 'projects');
    const t0 = Date.now();
    const corpus = await generateCorpus(src, {
      sessions: Math.round(40 * scale),
      mainBytes: 5_000_000,
      children: 3,
      childBytes: 800_000,
      bigLines: [5_000_000, 4_600_000, 3_000_000, 2_000_000, 1_500_000],
    });
    const first = runWorker(join(base, 'big', 'data'), src, 2);
    const [p1, p2] = first.passes;
    result.first_pass = {
      corpus_mb: +(corpus.bytes / MB).toFixed(1),
      sources: corpus.sources,
      generate_s: +((Date.now() - t0) / 1000).toFixed(1),
      landed_mb: +(p1!.bytes / MB).toFixed(1),
      seconds: +(p1!.ms / 1000).toFixed(2),
      mb_per_s: +(p1!.bytes / MB / (p1!.ms / 1000)).toFixed(1),
      files: p1!.files,
      records: p1!.records,
      errors: p1!.errors,
      pending: p1!.pending,
      peak_rss_mb: +(first.maxRssBytes / MB).toFixed(1),
      target: '>= 60 MB/s, peak RSS < 300 MB',
    };
    result.second_pass_nothing_new = { ms: +p2!.ms.toFixed(1), sources: p2!.sources, records: p2!.records };
    rmSync(join(base, 'big'), { recursive: true, force: true });

    // 2. Peak RSS as the largest file grows from 10 MB to 100 MB: flat means memory does not follow file size.
    const rss: Record<string, number> = {};
    for (const size of [10_000_000, 100_000_000]) {
      const dir = join(base, `one-${size}`);
      await generateCorpus(join(dir, 'projects'), { sessions: 1, mainBytes: size, children: 0, childBytes: 0, bigLines: [5_000_000], seed: 7 });
      const w = runWorker(join(dir, 'data'), join(dir, 'projects'), 1);
      rss[`${size / MB}MB`] = +(w.maxRssBytes / MB).toFixed(1);
      rss[`${size / MB}MB_mb_per_s`] = +(w.passes[0]!.bytes / MB / (w.passes[0]!.ms / 1000)).toFixed(1);
      rmSync(dir, { recursive: true, force: true });
    }
    result.rss_vs_file_size = { ...rss, ratio_100_to_10: +(rss['100MB']! / rss['10MB']!).toFixed(2), target: 'ratio near 1, both < 300 MB' };

    // 3. A pass with nothing new over many small sources: target under 1 s per 1,000 sources.
    const many = join(base, 'many');
    const m = await generateCorpus(join(many, 'projects'), { sessions: Math.round(250 * scale), mainBytes: 4000, children: 1, childBytes: 2000, seed: 9 });
    const w = runWorker(join(many, 'data'), join(many, 'projects'), 3);
    const idle = w.passes[2]!;
    result.idle_pass = {
      sources: m.sources,
      ms: +idle.ms.toFixed(1),
      ms_per_1000_sources: +(idle.ms / (m.sources / 1000)).toFixed(1),
      landed: idle.records,
      target: '< 1000 ms per 1,000 sources',
    };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
  const fp = result.first_pass as { mb_per_s: number; peak_rss_mb: number };
  const rv = result.rss_vs_file_size as { '10MB': number; '100MB': number };
  const ip = result.idle_pass as { ms_per_1000_sources: number };
  result.targets_met = {
    throughput: fp.mb_per_s >= 60,
    peak_rss: fp.peak_rss_mb < 300 && rv['100MB'] < 300,
    rss_flat: rv['100MB'] / rv['10MB'] < 1.5,
    idle_pass: ip.ms_per_1000_sources < 1000,
  };
  const text = JSON.stringify(result, null, 2);
  mkdirSync('bench-out', { recursive: true });
  writeFileSync(join('bench-out', 'collect.json'), text + '\n');
  process.stdout.write(text + '\n');
}

main().catch((e) => {
  process.stderr.write(String(e?.stack ?? e) + '\n');
  process.exit(1);
});
