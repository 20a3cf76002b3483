/**
 * Run by test/unit/join-kept-shapes.test.ts in a process of its own with `--trace-deopt`: a
 * session with 2,000 calls and their events, saved and loaded as the index, assembled three
 * times with a full collection between (as a long-lived parse worker would), each run announced on
 * stdout so the test can tell which deoptimizations came after the first.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assemble } from '../../src/assemble/assemble.js';
import { loadIndex, saveIndex } from '../../src/storage/index.js';
import { TranscriptBuilder } from './cc.js';
import { ccEventRecord, logEntries, transcriptEntries } from './cc-telemetry.js';

const S = '5e550000-0000-4000-8000-00000000d0e0';
const t = new TranscriptBuilder(S);
const events: ReturnType<typeof ccEventRecord>[] = [];
for (let c = 0; c < 2000; c++) {
  if (c % 50 === 0) t.prompt(`task ${c}`, `p${c}`);
  t.fragment(`msg_${c}`, { type: 'tool_use', id: `tu_${c}`, name: 'Bash', input: { command: 'true' } }, { stop: 'tool_use' });
  t.result(`tu_${c}`, 'ok', `p${c - (c % 50)}`);
  events.push(ccEventRecord(S, 'api_request', 1_796_000_000_000 + c, { request_id: `req_${c}`, duration_ms: 800, cost_usd: 0.001 }));
  events.push(ccEventRecord(S, 'tool_result', 1_796_000_000_000 + c, { tool_use_id: `tu_${c}`, request_id: `req_${c}`, success: 'true', duration_ms: '12' }));
}
const root = mkdtempSync(join(tmpdir(), 'aszcol-deopt-'));
try {
  const entries = [...transcriptEntries(1, t), ...logEntries(2, events)];
  saveIndex(root, { session: S, indexedSeq: 2, files: [], entries });
  const loaded = loadIndex(root, S)!.entries;
  const gc = (globalThis as { gc?: () => void }).gc!;
  for (let run = 0; run < 3; run++) {
    gc();
    process.stdout.write(`RUN ${run}\n`);
    assemble({ session: S, entries: loaded });
  }
} finally {
  rmSync(root, { recursive: true, force: true });
}
