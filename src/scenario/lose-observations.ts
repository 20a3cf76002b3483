/**
 * A checkpoint's `lose` of kind `changes` or `execution`. In asz 0.6 these are the plugin's own
 * landed files (`changes-…sd`, `execution-…sd`, one per stream and collect pass); in aszcol the
 * plugin's observations are lines of the session's hook spool, never landed files, so losing one
 * "file" means a person deleting the lines one build pass appended for that stream: its shell
 * calls' observations (`changes`) or its MCP calls' (`execution`). The transcript, the rounds and
 * every landed file stay as they were; what the view's `/tools` answer joins has fewer executions.
 * The spool is bound by no round, so `verify` and the document's state do not see the loss.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spoolDir, spoolName } from '../storage/hook-spool.js';

export const OBSERVATION_KINDS = ['changes', 'execution'] as const;
export type ObservationKind = (typeof OBSERVATION_KINDS)[number];

export const isObservationKind = (k: string): k is ObservationKind => (OBSERVATION_KINDS as readonly string[]).includes(k);

interface Observed {
  id?: string;
  event?: string;
  stream?: string;
  mcp?: unknown;
}

/** An MCP call's observation is an execution record's; any other tool call's is a change record's. Session start and end are neither. */
function kindOf(o: Observed): ObservationKind | undefined {
  if (!o.event?.startsWith('tool_')) return undefined;
  return o.mcp ? 'execution' : 'changes';
}

/**
 * Removes from the session's spool the observations of `kind` on `stream` (any stream when
 * undefined) that the `nth` build pass to append any of them appended. `passes` is each pass's
 * appended observation ids, in build order. Returns how many lines went, or the reason none could.
 */
export function loseObservations(
  root: string,
  session: string,
  passes: readonly (readonly string[])[],
  want: { kind: ObservationKind; stream?: string; nth: number },
): { removed: number } | { missing: string } {
  const path = join(spoolDir(root), `${spoolName(session)}.jsonl`);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { missing: 'the session has no plugin observations' };
    throw err;
  }
  const lines = text.split('\n');
  const parsed = lines.map((l): Observed | undefined => {
    try {
      return l ? (JSON.parse(l) as Observed) : undefined;
    } catch {
      return undefined;
    }
  });
  const matches = (o: Observed | undefined): boolean => !!o && kindOf(o) === want.kind && (want.stream === undefined || o.stream === want.stream);
  const byId = new Map(parsed.filter(matches).map((o) => [o!.id, o!]));
  const holding = passes.map((ids) => ids.filter((id) => byId.has(id))).filter((ids) => ids.length > 0);
  const target = holding[want.nth - 1];
  if (!target) return { missing: `${holding.length} build pass(es) appended ${want.kind} observations${want.stream ? ` on ${want.stream}` : ''}` };
  const gone = new Set(target);
  const kept = lines.filter((l, i) => !(matches(parsed[i]) && gone.has(parsed[i]!.id!)));
  // Replaced whole, as a person's editor would: never a half-written spool.
  writeFileSync(`${path}.lose`, kept.join('\n'));
  renameSync(`${path}.lose`, path);
  return { removed: lines.length - kept.length };
}
