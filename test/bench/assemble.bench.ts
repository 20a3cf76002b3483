/**
 * `npm run bench:assemble`: assembly on a generated session of at least 60,000 records and 300
 * talks with child streams, as JSON: full assembly, round write, fold and index load times, and
 * memory against the index's size. Times are medians of a few runs in this one process.
 */
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TranscriptBuilder, childPath, mainPath } from '../helpers/cc.js';
import { LocalCollector } from '../../src/receivers/claude-code-local/pass.js';
import { loadIndex } from '../../src/storage/index.js';
import { assemble } from '../../src/assemble/assemble.js';
import { parseSession } from '../../src/processors/assembler/parse.js';
import { loadChain } from '../../src/storage/chain.js';

const S = '5e550000-0000-4000-8000-0000000000aa';
const TALKS = Number(process.env.BENCH_TALKS ?? 320);
const CALLS_PER_TALK = Number(process.env.BENCH_CALLS ?? 60);

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

function time<T>(fn: () => T): { ms: number; value: T } {
  const t0 = process.hrtime.bigint();
  const value = fn();
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, value };
}

function generate(src: string): number {
  const m = new TranscriptBuilder(S);
  let records = 0;
  let child = 0;
  for (let t = 0; t < TALKS; t++) {
    const p = `p${t}`;
    m.prompt(`task number ${t}`, p);
    m.push({ type: 'attachment', attachment: { type: 'date', date: '2026-11-30' } });
    for (let c = 0; c < CALLS_PER_TALK; c++) {
      const msg = `msg_${t}_${c}`;
      m.fragment(msg, { type: 'thinking', thinking: '', signature: 'sig' }, { stop: 'tool_use' });
      m.fragment(msg, { type: 'tool_use', id: `tu_${t}_${c}`, name: 'Bash', input: { command: `echo ${c}` } }, { stop: 'tool_use' });
      m.result(`tu_${t}_${c}`, `${c}`, p, { toolUseResult: { stdout: `${c}` } });
    }
    if (t % 8 === 0) {
      const agent = `a${(0xabc000 + child++).toString(16).padStart(16, '0')}`;
      m.fragment(`msg_${t}_agent`, { type: 'tool_use', id: `tu_${t}_agent`, name: 'Agent', input: { prompt: 'help' } }, { stop: 'tool_use' });
      m.result(`tu_${t}_agent`, 'launched', p, { toolUseResult: { status: 'async_launched', agentId: agent } });
      const c = new TranscriptBuilder(S, { agentId: agent });
      c.user('help', { promptId: p }, { parent: null });
      for (let k = 0; k < 30; k++) {
        c.fragment(`msg_${agent}_${k}`, { type: 'tool_use', id: `tu_${agent}_${k}`, name: 'Read', input: { file: 'x' } }, { stop: 'tool_use' });
        c.result(`tu_${agent}_${k}`, 'contents', p);
      }
      c.fragment(`msg_${agent}_end`, { type: 'text', text: 'done' });
      c.write(childPath(src, '-p', S, agent));
      records += c.lines.length;
      m.prompt(`<task-notification><task-id>${agent}</task-id><tool-use-id>tu_${t}_agent</tool-use-id></task-notification>`, `${p}-n`, 'task-notification');
    }
    m.fragment(`msg_${t}_end`, { type: 'text', text: `talk ${t} done` });
    m.advance(20 * 60_000); // some talks fall into separate activity windows
  }
  m.write(mainPath(src, '-p', S));
  return records + m.lines.length;
}

async function main(): Promise<void> {
  const base = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'aszcol-bench-asm-'));
  const src = join(base, 'projects');
  const root = join(base, 'data');
  mkdirSync(src, { recursive: true });
  try {
    const records = generate(src);
    const collector = new LocalCollector({ root, sourceRoot: src, filter: { include: [], exclude: [] }, maxDeltaBytes: 2 * 1024 * 1024 });
    collector.pass();
    const indexBytes = statSync(join(root, S, 'index', 'entries.bin')).size;
    const loads = [0, 1, 2, 3, 4].map(() => time(() => loadIndex(root, S)!).ms);
    const index = loadIndex(root, S)!;
    global.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const assemblies = [0, 1, 2].map(() => time(() => assemble({ session: S, entries: index.entries })));
    const assembly = assemblies[0]!.value;
    const heapAfter = process.memoryUsage().heapUsed;
    const parsed = time(() => parseSession({ root, session: S, maxRoundBytes: 2 ** 40 }));
    const folds = [0, 1, 2].map(() => time(() => loadChain(root, S)));
    const fold = folds[0]!.value.fold;
    const landedBytes = index.files.reduce((a, f) => a + statSync(join(root, f.rel)).size, 0);
    const talks = [...assembly.nodes.values()].filter((n) => n.kind === 'talk').length;
    const result = {
      benchmark: 'assemble',
      node: process.version,
      session: {
        records,
        index_entries: index.entries.length,
        talks,
        streams: [...assembly.nodes.values()].filter((n) => n.kind === 'stream').length,
        nodes: assembly.nodes.size,
        relations: assembly.relations.size,
        landed_mb: +(landedBytes / 1e6).toFixed(1),
        index_mb: +(indexBytes / 1e6).toFixed(1),
      },
      index_load_ms: +median(loads).toFixed(1),
      full_assembly_ms: +median(assemblies.map((a) => a.ms)).toFixed(1),
      parse_with_round_write_ms: +parsed.ms.toFixed(1),
      round_bytes_mb: +(parsed.value.rounds.reduce((a, r) => a + r.bytes, 0) / 1e6).toFixed(1),
      fold_ms: +median(folds.map((f) => f.ms)).toFixed(1),
      fold_nodes: [...fold.entities.values()].filter((e) => e.t === 'node').length,
      assembly_heap_mb: +((heapAfter - heapBefore) / 1e6).toFixed(1),
      targets: {
        fold_ms_per_50k_nodes: '<= 300',
        full_assembly_ms: '<= 3000',
        index_load_ms: '<= 50',
        memory: 'proportional to the index, not the landed bytes',
      },
      targets_met: {} as Record<string, boolean>,
    };
    result.targets_met = {
      fold: (result.fold_ms / result.fold_nodes) * 50_000 <= 300,
      full_assembly: result.full_assembly_ms <= 3000,
      index_load: result.index_load_ms <= 50,
      records: records >= 60_000 && talks >= 300,
    };
    const text = JSON.stringify(result, null, 2);
    mkdirSync('bench-out', { recursive: true });
    writeFileSync(join('bench-out', 'assemble.json'), text + '\n');
    process.stdout.write(text + '\n');
  } finally {
    if (!process.env.BENCH_KEEP) rmSync(base, { recursive: true, force: true });
    else process.stderr.write(`kept ${base}\n`);
  }
}

main().catch((e) => {
  process.stderr.write(String(e?.stack ?? e) + '\n');
  process.exit(1);
});
