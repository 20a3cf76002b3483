/**
 * `npm run bench:push`: the otlp exporter's throughput over gRPC, as JSON. A root of landed files
 * (default 320 MB, files cut at 2 MiB like the collector's) is pushed to a receiver in another
 * process, and compared in the same run with a bare @grpc/grpc-js client sending the same files'
 * bytes in requests of the same 8 MiB budget. Target: the ratio of MB/s at least 0.8, and peak
 * memory flat from a root a third that size to the full one.
 */
import { execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FILE_BYTES, generate } from './push-corpus.js';

const here = (f: string) => fileURLToPath(new URL(f, import.meta.url));
const MB = 1e6;
const BATCH = 8 * 1024 * 1024;
function child(
  mode: 'bare' | 'aszcol' | 'aszcol-hide',
  root: string,
  endpoint: string,
): { mode: string; bytes: number; requests: number; seconds: number; cpuSeconds: number; maxRssMb: number; mbPerS: number } {
  rmSync(join(root, 'push.state'), { force: true });
  const out = execFileSync(process.execPath, [here('./push-child.js'), mode, root, endpoint, String(BATCH)], { encoding: 'utf8', maxBuffer: 1 << 24 });
  const r = JSON.parse(out.trim().split('\n').pop()!) as {
    mode: string;
    bytes: number;
    requests: number;
    seconds: number;
    cpuSeconds: number;
    maxRssMb: number;
  };
  return {
    ...r,
    mbPerS: +(r.bytes / MB / r.seconds).toFixed(1),
    seconds: +r.seconds.toFixed(3),
    cpuSeconds: +r.cpuSeconds.toFixed(3),
    maxRssMb: +r.maxRssMb.toFixed(1),
  };
}

const base = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'aszcol-bench-push-'));
const receiver = spawn(process.execPath, [here('./push-receiver.js')], { stdio: ['ignore', 'pipe', 'inherit'] });
try {
  const endpoint = await new Promise<string>((res, rej) => {
    receiver.stdout!.once('data', (d: Buffer) => res(d.toString().trim()));
    receiver.once('exit', (c) => rej(new Error(`the receiver exited ${c}`)));
  });
  const largeTarget = Number(process.env.BENCH_PUSH_MB ?? 320) * MB;
  const small = join(base, 'small'),
    large = join(base, 'large');
  const smallBytes = generate(small, largeTarget / 3, 1);
  const largeBytes = generate(large, largeTarget, 2);
  // Both senders read from the page cache: read everything once first.
  for (const root of [small, large]) execFileSync('sh', ['-c', `find "${root}" -type f -exec cat {} + > /dev/null`]);
  const runs = [
    child('bare', large, endpoint),
    child('aszcol', large, endpoint),
    child('aszcol-hide', large, endpoint),
    child('bare', large, endpoint),
    child('aszcol', large, endpoint),
    child('aszcol-hide', large, endpoint),
  ];
  const smallRun = child('aszcol', small, endpoint);
  const best = (m: string) => runs.filter((x) => x.mode === m).reduce((a, b) => (a.mbPerS >= b.mbPerS ? a : b));
  const bare = best('bare'),
    ours = best('aszcol');
  const ratio = +(ours.mbPerS / bare.mbPerS).toFixed(3);
  // What withholding costs: every line with text or data is read (none here is withheld), CPU seconds side by side.
  const hiding = best('aszcol-hide');
  const withholdCpu = +(hiding.cpuSeconds / ours.cpuSeconds).toFixed(3);
  const result = {
    benchmark: 'push',
    root: { small_mb: +(smallBytes / MB).toFixed(1), large_mb: +(largeBytes / MB).toFixed(1), file_bytes: FILE_BYTES, batch_bytes: BATCH },
    bare_grpc: bare,
    aszcol: ours,
    runs,
    aszcol_withholding_everything: hiding,
    withhold_cpu_ratio: withholdCpu,
    aszcol_small_root: smallRun,
    ratio,
    rss_growth: +(ours.maxRssMb / smallRun.maxRssMb).toFixed(3),
    target: 'ratio >= 0.8; peak RSS flat from the small root to the large one (growth < 1.5)',
    targets_met: { ratio: ratio >= 0.8, rss_flat: ours.maxRssMb / smallRun.maxRssMb < 1.5 },
  };
  const text = JSON.stringify(result, null, 2);
  mkdirSync('bench-out', { recursive: true });
  writeFileSync(join('bench-out', 'push.json'), text + '\n');
  process.stdout.write(text + '\n');
} finally {
  receiver.kill('SIGTERM');
  rmSync(base, { recursive: true, force: true });
}
