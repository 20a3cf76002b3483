import type { ParseResult } from '../processors/assembler/parse.js';
import { parseAll, parseOne, type SessionParse } from '../processors/assembler/parse-all.js';
import { landedSessions } from '../storage/landed-files.js';
import { parseBytes } from '../util/units.js';
import { configFor, EXIT, type Io } from './context.js';

const DEFAULT_MAX_ROUND_BYTES = 2 * 1024 * 1024;

function row(r: ParseResult): string[] {
  const last = r.rounds[r.rounds.length - 1];
  const s = r.summary;
  return [
    r.session,
    last ? String(last.round) : '-',
    String(r.throughSeq),
    String(last?.nodes ?? 0),
    String(last?.relations ?? 0),
    String(last?.unresolved ?? 0),
    String(s?.talks ?? 0),
    String(s?.runs ?? 0),
    String(s?.steps ?? 0),
    s ? `${s.tools.joined}/${s.tools.total}` : '-',
    s ? `${s.children.joined}/${s.children.total}` : '-',
  ];
}

export async function runParse(session: string | undefined, opts: { config?: string; json?: boolean; maxRoundBytes?: string }, io: Io): Promise<number> {
  const cfg = configFor(opts.config, io);
  if (!cfg) return EXIT.config;
  let maxRoundBytes = DEFAULT_MAX_ROUND_BYTES;
  const configured = (cfg.raw.processors as Record<string, { max_round_bytes?: unknown } | null> | undefined)?.assembler?.max_round_bytes;
  try {
    if (opts.maxRoundBytes !== undefined) maxRoundBytes = parseBytes(opts.maxRoundBytes);
    else if (configured !== undefined) maxRoundBytes = parseBytes(configured);
  } catch (err) {
    io.err(`aszcol parse: max_round_bytes: ${(err as Error).message}`);
    return EXIT.config;
  }
  const sessions = session ? [session] : landedSessions(cfg.storageRoot);
  const rows: string[][] = [];
  const results: ParseResult[] = [];
  let failed = 0;
  const report = (p: SessionParse) => {
    if ('error' in p) {
      failed++;
      io.err(`error: ${p.session}: ${p.error.message}`);
      return;
    }
    const r = p.result;
    if (r.status === 'empty') return;
    results.push(r);
    if (r.status === 'busy') {
      io.err(`error: ${p.session}: another parser holds this conversation's chain`);
      failed++;
      return;
    }
    rows.push(row(r));
  };
  // One named session the long way; the whole root through the settled stamps, which only a whole-root parse keeps.
  if (session) {
    try {
      report({ session, result: await parseOne(cfg.storageRoot, session, maxRoundBytes) });
    } catch (err) {
      report({ session, error: err as Error });
    }
  } else await parseAll({ root: cfg.storageRoot, sessions, maxRoundBytes, usageCache: true }, report); // a later `usage` reads, not folds
  // Nothing landed: say where we looked, so a wrong --config (or none) is obvious.
  if (sessions.length === 0)
    io.err(`aszcol parse: no landed session under ${cfg.storageRoot} (the storage root of ${cfg.source}); run aszcol collect --once first`);
  if (opts.json) io.out(JSON.stringify(results));
  else {
    const head = ['SESSION', 'ROUND', 'SEQ', 'NODES', 'RELS', 'UNRES', 'TALKS', 'RUNS', 'STEPS', 'TOOLS', 'CHILDREN'];
    const all = [head, ...rows];
    const widths = head.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
    for (const r of all)
      io.out(
        r
          .map((c, i) => c.padEnd(widths[i]!))
          .join('  ')
          .trimEnd(),
      );
  }
  return failed ? EXIT.problem : EXIT.ok;
}
