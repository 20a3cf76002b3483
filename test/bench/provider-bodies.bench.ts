/**
 * `npm run bench:bodies`: what the cut provider-body writer saves, as JSON. A generated 30-call
 * session's raw API bodies (test/helpers/body-session.ts) are collected twice side by side, whole
 * (one `lit` a body, aszcol before the cut writer) and cut (asz 0.6's `copy` and `piece`): bytes of
 * the landed provider_body files beside the transcript's, the CPU seconds each collect took, and
 * whether every body rebuilds from the landed files to its source's exact bytes.
 */
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProviderBodyCollector } from '../../src/receivers/claude-code-local/provider-bodies.js';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import { manifestOf } from '../../src/formats/session-data/provider-body.js';
import { landedBodyFiles, SessionProviderBodies } from '../../src/storage/provider-body-files.js';
import { bodySession, writeBodies } from '../helpers/body-session.js';

const CALLS = Number(process.env.BENCH_CALLS ?? 30);

function collect(cut: boolean, s: ReturnType<typeof bodySession>) {
  const base = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'aszcol-bench-bodies-'));
  try {
    const dir = join(base, 'dump');
    const root = join(base, 'root');
    writeBodies(dir, s);
    const cpu0 = process.cpuUsage();
    const report = new ProviderBodyCollector({ root, dir, maxDeltaBytes: 2 * 1024 * 1024, settleMs: 0, cut }).pass();
    const cpu = process.cpuUsage(cpu0);
    const files = landedBodyFiles(root, s.session);
    let landedBytes = 0;
    for (const f of files) landedBytes += statSync(f.path).size;
    // Every body rebuilt from the landed files, as a reader on demand reads them.
    const reader = new SessionProviderBodies(files);
    let exact = 0;
    let bodies = 0;
    for (const f of files)
      for (const [i, r] of readSessionData(f.path).records.entries()) {
        bodies++;
        if (reader.bodyAt(f.seq, i + 1).equals(readFileSync(join(dir, manifestOf(r)!.src!)))) exact++;
      }
    return {
      landed_bytes: landedBytes,
      files: files.length,
      bodies,
      rebuilt_exactly: exact,
      written_whole: report.writtenWhole.length,
      cpu_s: (cpu.user + cpu.system) / 1e6,
    };
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

const s = bodySession(CALLS);
let sourceBytes = 0;
let requestBytes = 0;
for (const [name, text] of s.bodies) {
  if (!name.endsWith('.json')) continue;
  sourceBytes += Buffer.byteLength(text);
  if (name.endsWith('.request.json')) requestBytes += Buffer.byteLength(text);
}
const load = loadavg()[0]!;
const whole = collect(false, s);
const cut = collect(true, s);
console.log(
  JSON.stringify(
    {
      bench: 'provider-bodies',
      calls: CALLS,
      transcript_bytes: s.transcriptBytes,
      body_source_bytes: sourceBytes,
      request_source_bytes: requestBytes,
      whole,
      cut,
      landed_ratio: Number((cut.landed_bytes / whole.landed_bytes).toFixed(4)),
      cpu_ratio: Number((cut.cpu_s / Math.max(whole.cpu_s, 1e-6)).toFixed(2)),
      load_average_1m: load,
    },
    null,
    2,
  ),
);
