/**
 * `aszcol usage [daily|weekly|monthly|session|project|blocks]`: tokens and cost from the collected
 * history — each provider call counted once, from its last fragment — after a collect and parse
 * pass (unless `--no-collect`), as a table or (`--json`) the document `GET /api/usage` serves.
 */
import type { Command } from 'commander';
import { answerFrom, reportOptions, type UsageAnswer, type UsageParams } from '../assemble/usage/answer.js';
import type { Figures } from '../assemble/usage/figures.js';
import { loadPriceTable, loadUsageCalls } from '../assemble/usage/load.js';
import type { AszConfig } from '../service/config.js';
import { landedSessions } from '../storage/landed-files.js';
import { configFor, EXIT, type Io } from './context.js';

const PARSE_ROUND_BYTES = 2 * 1024 * 1024;

interface UsageCliOptions extends Omit<UsageParams, 'report'> {
  config?: string;
  json?: boolean;
  collect?: boolean;
  pricing?: string;
}

/** Lands what is new and assembles it, so the report is current; what fails is said on stderr and the report goes on over what is there. */
async function collectAndParse(cfg: AszConfig, io: Io): Promise<void> {
  // Loaded only when a pass runs: a report over a landed root starts without them.
  const [{ parseAll }, { LocalCollector }, { defaultWorkers }, { localReceiverConfig }] = await Promise.all([
    import('../processors/assembler/parse-all.js'),
    import('../receivers/claude-code-local/pass.js'),
    import('../receivers/claude-code-local/session-pool.js'),
    import('../service/pipelines.js'),
  ]);
  const local = localReceiverConfig(cfg);
  const collector = new LocalCollector({
    root: cfg.storageRoot,
    sourceRoot: local.sourceRoot,
    filter: { include: local.include, exclude: local.exclude },
    maxDeltaBytes: local.maxDeltaBytes,
    workers: local.workers || defaultWorkers(),
    batchSync: local.batchSync,
  });
  try {
    const pass = await collector.passAsync();
    for (const e of pass.errors) io.err(`aszcol usage: collect: ${e.where}: ${e.message}`);
    for (const n of pass.notes ?? []) io.err(`aszcol usage: collect: note: ${n}`);
  } finally {
    await collector.close();
  }
  // As `aszcol parse` does: a session settled since the last parse is only stat'ed.
  // Chains written on the parse's threads are counted there too, so the report below reads their caches.
  await parseAll({ root: cfg.storageRoot, sessions: landedSessions(cfg.storageRoot), maxRoundBytes: PARSE_ROUND_BYTES, usageCache: true }, (p) => {
    if ('error' in p) io.err(`aszcol usage: parse: ${p.session}: ${p.error.message}`);
    else if (p.result.status === 'busy') io.err(`aszcol usage: parse: ${p.session}: another parser holds its chain; its last round is reported`);
  });
}

const num = (n: number) => n.toLocaleString('en-US');

function costCell(f: Figures): string {
  if (f.calls && f.cost_unknown_calls === f.calls) return 'unknown';
  const known = `$${f.cost_usd.toFixed(4)}`;
  return f.cost_unknown_calls ? `${known} + ?` : known;
}

function cells(label: string, f: Figures, models = true): string[] {
  return [
    label,
    models ? f.models.join(', ') : '',
    num(f.input_tokens),
    num(f.output_tokens),
    num(f.cache_creation_tokens),
    num(f.cache_read_tokens),
    num(f.total_tokens),
    costCell(f),
  ];
}

function table(rows: string[][], io: Io): void {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows)
    io.out(
      r
        .map((c, i) => (i >= 2 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
        .join('  ')
        .trimEnd(),
    );
}

function printAnswer(a: UsageAnswer, io: Io): void {
  const rows: string[][] = [['KEY', 'MODELS', 'INPUT', 'OUTPUT', 'CACHE CREATE', 'CACHE READ', 'TOTAL TOKENS', 'COST (USD)']];
  for (const r of a.rows) {
    const label = r.block ? `${r.key}${r.block.active ? ' (active)' : ''}` : r.project && a.report === 'session' ? `${r.key} ${r.project}` : r.key;
    rows.push(cells(label, r));
    for (const ag of r.agents ?? []) rows.push(cells(`  └ subagent ${ag.agent ?? ag.stream}`, ag));
    if (r.subagents && !r.agents) rows.push(cells('  └ of which subagents', r.subagents, false));
    for (const b of r.breakdown ?? []) rows.push(cells(`  └ ${b.model}`, b, false));
  }
  rows.push(cells('TOTAL', a.totals));
  table(rows, io);
  const t = a.totals;
  io.out(
    `cost: $${t.cost_runtime_usd.toFixed(4)} as Claude Code reported it (api_request cost_usd), $${t.cost_computed_usd.toFixed(4)} computed from the price table (${a.pricing.source}, as of ${a.pricing.as_of})`,
  );
  if (t.cost_unknown_calls)
    io.out(
      `cost unknown for ${t.cost_unknown_calls} call(s): no price for ${t.unknown_models.join(', ')} (give one with --pricing FILE); "unknown" and "+ ?" mark the rows`,
    );
  for (const [reason, n] of Object.entries(a.uncounted)) io.out(`not counted: ${n} call(s): ${reason}`);
  if (a.copied_calls) io.out(`copies: ${a.copied_calls} call(s) found again in a later session (a fork or a copied resume), counted once where they first ran`);
  for (const p of a.problems) io.err(`aszcol usage: ${p}`);
}

export async function runUsage(report: string | undefined, opts: UsageCliOptions, io: Io): Promise<number> {
  const cfg = configFor(opts.config, io);
  if (!cfg) return EXIT.config;
  let options, prices;
  try {
    options = reportOptions({ ...opts, report }, Date.now());
    prices = loadPriceTable(opts.pricing);
  } catch (err) {
    io.err(`aszcol usage: ${(err as Error).message}`);
    return EXIT.config;
  }
  if (opts.collect !== false) await collectAndParse(cfg, io);
  const loaded = loadUsageCalls(cfg.storageRoot, { writeCache: true });
  if (!loaded.conversations)
    io.err(
      `aszcol usage: no assembled conversation under ${cfg.storageRoot} (the storage root of ${cfg.source})${opts.collect === false ? '; run without --no-collect' : ''}`,
    );
  const answer = answerFrom(loaded, prices, options);
  if (opts.json) io.out(JSON.stringify(answer));
  else printAnswer(answer, io);
  return loaded.problems.length ? EXIT.problem : EXIT.ok;
}

export function registerUsageCommand(program: Command, io: Io, setCode: (code: number) => void): void {
  program
    .command('usage [report]')
    .description('tokens and cost per day, week, month, session, project or 5-hour block (daily by default), each provider call counted once')
    .option('--config <file>', 'pipeline YAML (default: the embedded default)')
    .option('--since <day>', 'from this day on (YYYY-MM-DD or YYYYMMDD, in the report time zone)')
    .option('--until <day>', 'through this day')
    .option('--project <name>', 'only sessions of this project (its name or a part of it)')
    .option('--model <name>', 'only calls of this model (a part of its name)')
    .option('--id <session>', 'with the session report: only this session')
    .option('--breakdown', 'one line per model under each row')
    .option('--json', 'the JSON document GET /api/usage serves')
    .option('--timezone <tz>', 'the zone days are counted in (default: this machine)')
    .option('--start-of-week <day>', 'sunday (default) or monday, for the weekly report')
    .option('--pricing <file>', 'a JSON price table laid over the built-in one')
    .option('--no-collect', 'report what is landed and assembled; do not run a collect and parse pass first')
    .action(async (report: string | undefined, o: UsageCliOptions) => {
      setCode(await runUsage(report, o, io));
    });
}
