/**
 * Runs collection passes in a process of its own, so the benchmark reads that process's peak
 * RSS (`maxRSS`) for exactly the work it measures.
 */
import { LocalCollector } from '../../src/receivers/claude-code-local/pass.js';

const [root, src, passesText, workersText] = process.argv.slice(2);
const collector = new LocalCollector({
  root: root!,
  sourceRoot: src!,
  filter: { include: [], exclude: [] },
  maxDeltaBytes: 2 * 1024 * 1024,
  workers: Number(workersText ?? 1),
});
const passes = [];
for (let i = 0; i < Number(passesText ?? 1); i++) {
  const t0 = process.hrtime.bigint();
  const r = await collector.passAsync();
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  passes.push({ ms, sources: r.sources, files: r.landedFiles, records: r.landedRecords, bytes: r.landedBytes, errors: r.errors.length, pending: r.pending });
}
await collector.close();
process.stdout.write(JSON.stringify({ passes, maxRssBytes: process.resourceUsage().maxRSS * 1024 }) + '\n');
