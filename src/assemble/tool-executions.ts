/**
 * Joins what the plugin's hooks observed (`aszcol-hook/1`, the hook spool) to the conversation's
 * tool steps, by tool-use id and nothing else: hook input carries no message or request id, and
 * time proves nothing. Pure: lines in, figures and unresolved evidence out.
 *
 * A step gets the runtime's own measure around the call (the `duration_ms` the hook after the
 * call carried), the span between the hook before and the hook after, how the call ended, the MCP
 * server and tool, and for a shell command the entries of its working directory that changed
 * between the two hooks (best effort: one level deep, bounded). An observation that names no step
 * is kept as an unresolved entry with its reason, never dropped; several different answers for one
 * call are `exact_ambiguous` and none of them is chosen.
 */
import { HOOK_SCHEMA, isHookObservation as isObservation, type ExecutionOutcome, type HookObservation } from '../adapters/claude-code/hook-event.js';
import { scanDifference } from '../adapters/claude-code/dir-scan.js';
import { distinctObservations, pairToolHooks, scanWindow, theOnePair } from './hook-pairs.js';

export const OBSERVED_BY = 'aszcol-plugin';

export interface ToolExecution {
  tool_use_id: string;
  observed_by: typeof OBSERVED_BY;
  join: 'exact_unique' | 'exact_ambiguous';
  /** The runtime's measure around the call, as the hook after it was told. */
  duration_ms?: number;
  duration_from?: 'hook_duration_ms';
  /** From the hook before the call to the hook after it, by the hooks' own clocks; includes both hooks' start-up. */
  hook_span_ms?: number;
  outcome?: ExecutionOutcome;
  mcp_server?: string;
  mcp_tool?: string;
  /** Where Claude Code's configuration of the MCP server is (`local`, `project`, `user`), when the hook found it. */
  mcp_source?: string;
  error?: string;
  /** The hook after the call ran after the session's end hook. */
  after_session_end?: true;
  /** Best effort: entries directly in the working directory created, removed or rewritten between the two hooks. */
  shell_changed?: string[];
  shell_scan_complete?: boolean;
  observations: number;
}

export interface UnresolvedObservation {
  kind: 'execution';
  /** The observation's id, or `line <n>` for a line that is none. */
  ref: string;
  reason: string;
  state: 'open';
}

export interface ExecutionJoin {
  executions: Map<string, ToolExecution>;
  unresolved: UnresolvedObservation[];
  session_started?: string;
  session_ended?: string;
  /** Observations read, after repeats (the same event posted and spooled) were dropped. */
  observations: number;
}

/** A spool line as storage hands it over: a parsed value, or the reason it is not one. */
export interface ObservationLine {
  line: number;
  value?: unknown;
  problem?: string;
}

const ms = (iso: string | undefined) => (iso ? Date.parse(iso) : NaN);

export function joinExecutions(toolUseIds: ReadonlySet<string>, lines: readonly ObservationLine[]): ExecutionJoin {
  const unresolved: UnresolvedObservation[] = [];
  const out: ExecutionJoin = { executions: new Map(), unresolved, observations: 0 };
  const onSteps: HookObservation[] = [];
  const observationOf = (l: ObservationLine) => (l.problem === undefined && isObservation(l.value) ? l.value : undefined);
  for (const l of distinctObservations(lines, observationOf)) {
    const o = observationOf(l);
    if (!o) {
      unresolved.push({ kind: 'execution', ref: `line ${l.line}`, reason: l.problem ?? `not an ${HOOK_SCHEMA} observation`, state: 'open' });
      continue;
    }
    out.observations++;
    if (o.event === 'session_start') out.session_started ??= o.time;
    else if (o.event === 'session_end') out.session_ended = o.time;
    else if (o.event === 'other')
      unresolved.push({ kind: 'execution', ref: o.id, reason: o.problem ?? 'not a tool call or a session boundary', state: 'open' });
    else if (!o.tool) unresolved.push({ kind: 'execution', ref: o.id, reason: o.problem ?? 'a tool event that names no tool use', state: 'open' });
    else if (!toolUseIds.has(o.tool))
      unresolved.push({
        kind: 'execution',
        ref: o.id,
        reason: `no tool step of the conversation has the tool use id ${o.tool} (not assembled yet, or another conversation's)`,
        state: 'open',
      });
    else onSteps.push(o);
  }
  const ended = ms(out.session_ended);
  for (const [tool, pair] of pairToolHooks(onSteps, (x) => x)) {
    const one = theOnePair(pair);
    const x: ToolExecution = {
      tool_use_id: tool,
      observed_by: OBSERVED_BY,
      join: one ? 'exact_unique' : 'exact_ambiguous',
      observations: pair.pre.length + pair.post.length,
    };
    const named = pair.post[0] ?? pair.pre[0]!;
    if (named.mcp) {
      if (named.mcp.server) x.mcp_server = named.mcp.server;
      x.mcp_tool = named.mcp.tool;
      if (named.mcp.source) x.mcp_source = named.mcp.source;
    }
    if (one) {
      const { before, after } = one;
      if (after?.duration_ms !== undefined) {
        x.duration_ms = after.duration_ms;
        x.duration_from = 'hook_duration_ms';
      }
      if (before && after) {
        const span = ms(after.time) - ms(before.time);
        if (Number.isFinite(span) && span >= 0) x.hook_span_ms = span;
      }
      if (after?.outcome) x.outcome = after.outcome;
      if (after?.error) x.error = after.error;
      if (after && Number.isFinite(ended) && ms(after.time) > ended) x.after_session_end = true;
      const window = scanWindow(before, after);
      if (window) {
        x.shell_changed = scanDifference(window.before, window.after);
        x.shell_scan_complete = window.before.complete && window.after.complete;
      }
    } else {
      unresolved.push({
        kind: 'execution',
        ref: tool,
        reason: `${pair.pre.length} observations before and ${pair.post.length} after one call: none is chosen`,
        state: 'open',
      });
    }
    out.executions.set(tool, x);
  }
  return out;
}
