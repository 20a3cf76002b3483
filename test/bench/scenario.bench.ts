/**
 * `npm run bench:scenario`: the corpus generator's speed (`scenario build --repeat`), as JSON:
 * MB/s of transcript written and peak RSS at two corpus sizes (flat means memory does not follow
 * the corpus). Target: at least 50 MB/s.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const bin = resolve(fileURLToPath(new URL('../../../bin/aszcol.js', import.meta.url)));
const scenario = resolve(fileURLToPath(new URL('../../../test/bench/corpus-scenario.yaml', import.meta.url)));

function run(repeat: number): { mb: number; seconds: number; mbPerS: number; rssMb: number } {
  const out = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'aszcol-bench-scn-'));
  try {
    const t0 = process.hrtime.bigint();
    const text = execFileSync(
      process.execPath,
      [
        '-e',
        `process.on('exit',()=>process.stdout.write('RSS='+process.resourceUsage().maxRSS+'\\n'));process.argv.splice(1,0,'x');import(${JSON.stringify('file://' + bin)})`,
        '--',
        'scenario',
        'build',
        scenario,
        '--out',
        out,
        '--at',
        '2026-06-01T09:00:00Z',
        '--repeat',
        String(repeat),
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 1 << 28 },
    );
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    let bytes = 0;
    for (const m of text.matchAll(/: (\d+) bytes/g)) bytes += Number(m[1]);
    const rss = Number(/RSS=(\d+)/.exec(text)?.[1] ?? 0) / 1024;
    return { mb: +(bytes / 1e6).toFixed(1), seconds: +seconds.toFixed(2), mbPerS: +(bytes / 1e6 / seconds).toFixed(1), rssMb: +rss.toFixed(1) };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

const small = run(Number(process.env.BENCH_REPEAT_SMALL ?? 20));
const large = run(Number(process.env.BENCH_REPEAT_LARGE ?? 100));
const result = {
  benchmark: 'scenario-build',
  scenario: 'test/bench/corpus-scenario.yaml',
  small,
  large,
  target: '>= 50 MB/s, RSS flat from the small to the large corpus',
  targets_met: { throughput: large.mbPerS >= 50, rss_flat: large.rssMb / small.rssMb < 1.5 },
};
const textOut = JSON.stringify(result, null, 2);
mkdirSync('bench-out', { recursive: true });
writeFileSync(join('bench-out', 'scenario.json'), textOut + '\n');
process.stdout.write(textOut + '\n');
