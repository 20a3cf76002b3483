/**
 * `npm run bench:view` (second part): the page's first list read on a root of many sessions
 * (BENCH_LIST_SESSIONS, 500 by default), as JSON (also bench-out/view-list.json). Without the
 * row-facts cache a fresh server builds every conversation once to fill the list (`cold_no_cache`,
 * what a start cost before the cache); with the cache written by an earlier start it reads one
 * small entry per conversation (`cold_cached`). `first_start_with_cache` is the first start ever
 * (it builds and writes the entries); `warm` is a later read in the same process.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TranscriptBuilder, mainPath } from '../helpers/cc.js';
import { LocalCollector } from '../../src/receivers/claude-code-local/pass.js';
import { parseSession } from '../../src/processors/assembler/parse.js';
import { ViewCatalog } from '../../src/extensions/view/catalog.js';
import { RowFactsStore } from '../../src/extensions/view/row-facts-store.js';
import { sessionId } from './corpus.js';

const SESSIONS = Number(process.env.BENCH_LIST_SESSIONS ?? 500);
const TALKS = Number(process.env.BENCH_LIST_TALKS ?? 6);
const CALLS = 4;

function time<T>(fn: () => T): { ms: number; value: T } {
  const t0 = process.hrtime.bigint();
  const value = fn();
  return { ms: Number(process.hrtime.bigint() - t0) / 1e6, value };
}
const round = (n: number) => +n.toFixed(1);

/** One ordinary session: a few prompts, each a few calls with a Bash run and its output. */
function writeSession(src: string, i: number): void {
  const s = sessionId(i);
  const m = new TranscriptBuilder(s);
  for (let t = 0; t < TALKS; t++) {
    const p = `p${t}`;
    m.prompt(`session ${i} task ${t}: make the build pass and explain what changed`, p);
    for (let c = 0; c < CALLS; c++) {
      const id = `tu_${i}_${t}_${c}`;
      m.fragment(`msg_${i}_${t}_${c}`, { type: 'tool_use', id, name: 'Bash', input: { command: `make test-${c}` } }, { stop: 'tool_use' });
      m.result(id, `ok ${c} `.repeat(40), p, { toolUseResult: { stdout: `ok ${c}`, stderr: '' } });
    }
    m.fragment(`msg_${i}_${t}_end`, { type: 'text', text: `task ${t} is done` });
  }
  m.write(mainPath(src, `-home-dev-project-${i % 7}`, s));
}

function main(): void {
  const base = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'aszcol-bench-view-list-'));
  const src = join(base, 'projects');
  const root = join(base, 'data');
  const cache = join(base, 'cache');
  mkdirSync(src, { recursive: true });
  try {
    for (let i = 0; i < SESSIONS; i++) writeSession(src, i);
    const prep = time(() => {
      new LocalCollector({ root, sourceRoot: src, filter: { include: [], exclude: [] }, maxDeltaBytes: 2 * 1024 * 1024 }).pass();
      for (let i = 0; i < SESSIONS; i++) parseSession({ root, session: sessionId(i), maxRoundBytes: 2 * 1024 * 1024 });
    });

    const noCache = time(() => new ViewCatalog(root).rows());
    const firstStart = time(() => new ViewCatalog(root, Date.now, new RowFactsStore(cache)).rows());
    const restarted = new ViewCatalog(root, Date.now, new RowFactsStore(cache));
    const cached = time(() => restarted.rows());
    const warm = time(() => restarted.rows());
    const same = JSON.stringify(cached.value) === JSON.stringify(noCache.value);

    const result = {
      benchmark: 'view-list',
      node: process.version,
      sessions: SESSIONS,
      rows: noCache.value.length,
      corpus_prepare_ms: round(prep.ms),
      first_list_read_ms: {
        cold_no_cache: round(noCache.ms),
        first_start_with_cache: round(firstStart.ms),
        cold_cached: round(cached.ms),
        warm: round(warm.ms),
      },
      speedup_cold: round(noCache.ms / cached.ms),
      rows_identical: same,
    };
    const out = join(process.cwd(), 'bench-out');
    mkdirSync(out, { recursive: true });
    writeFileSync(join(out, 'view-list.json'), JSON.stringify(result, null, 2) + '\n');
    process.stdout.write(JSON.stringify(result) + '\n');
    if (!same || result.rows !== SESSIONS) process.exitCode = 1;
  } finally {
    rmSync(base, { recursive: true, force: true });
  }
}

main();
