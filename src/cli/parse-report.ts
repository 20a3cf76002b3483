/**
 * What `aszcol parse` prints for its results, as one JSON document or a table: shared by the long way
 * (parse.ts) and the quick answer from settled stamps (parse-quick.ts), so both print the same bytes.
 */
import type { ParseResult } from '../processors/assembler/parse.js';
import type { Io } from './context.js';

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

/** Nothing landed: say where we looked, so a wrong --config (or none) is obvious. */
export const noLandedSession = (storageRoot: string, source: string) =>
  `aszcol parse: no landed session under ${storageRoot} (the storage root of ${source}); run aszcol collect --once first`;

/** `results` as JSON, or the table of those that are neither busy nor empty (`busy` results are reported as errors instead). */
export function printParse(results: ParseResult[], json: boolean | undefined, io: Io): void {
  if (json) {
    io.out(JSON.stringify(results));
    return;
  }
  const head = ['SESSION', 'ROUND', 'SEQ', 'NODES', 'RELS', 'UNRES', 'TALKS', 'RUNS', 'STEPS', 'TOOLS', 'CHILDREN'];
  const all = [head, ...results.filter((r) => r.status !== 'busy').map(row)];
  const widths = head.map((_, i) => Math.max(...all.map((r) => r[i]!.length)));
  for (const r of all)
    io.out(
      r
        .map((c, i) => c.padEnd(widths[i]!))
        .join('  ')
        .trimEnd(),
    );
}
