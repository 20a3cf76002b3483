/**
 * What the aszcol plugin's hooks leave for a scenario's calls, derived from the generated session:
 * for each call the plugin saw (an MCP call with an `execution` block, a non-editing tool with
 * `changes`) the hook input Claude Code hands its PreToolUse and PostToolUse (or
 * PostToolUseFailure) hooks, reduced by the same code `aszcol hook` runs (`observeHookInput`), with
 * the MCP server's name and scope as the runtime hands them over, and what the hook adds itself:
 * for a shell command its shallow look at the working directory. Pure: the lines go to the hook spool in `run.ts`.
 */
import { observeHookInput, type DirScan, type HookObservation } from '../adapters/claude-code/hook-event.js';
import type { Generated } from './generate.js';
import type { PluginCall } from './model.js';

/**
 * The plugin's one-level look at the working directory before and after the call: a changed file
 * directly inside it shows, one deeper down shows only as its unchanged top directory, as the real
 * scan sees it. Each entry's time is the hook's.
 */
function scans(call: PluginCall, cwd: string, at: number, after: boolean): DirScan {
  const entries: Record<string, string> = {};
  for (const c of call.tool.changes ?? []) {
    const [top, ...rest] = c.path.split('/');
    if (rest.length) entries[top!] = 'dir';
    else if (!after && c.before !== '') entries[top!] = `${Buffer.byteLength(c.before)}:${call.usedAt}`;
    else if (after) entries[top!] = `${Buffer.byteLength(c.after)}:${at}`;
  }
  return { dir: cwd, entries, complete: true };
}

function observe(input: Record<string, unknown>, at: number): HookObservation {
  return observeHookInput(Buffer.from(JSON.stringify(input)), new Date(at).toISOString());
}

/** The observations of one call, in the order the hooks ran. */
function callObservations(g: Generated, call: PluginCall): HookObservation[] {
  const cwd = g.cwd;
  const t = call.tool;
  const x = t.execution;
  const base: Record<string, unknown> = {
    session_id: g.session,
    transcript_path: `/home/dev/.claude/projects/${g.project}/${g.session}.jsonl`,
    cwd,
    permission_mode: 'default',
    ...(call.stream === 'main' ? {} : { agent_id: call.stream, agent_type: 'general-purpose' }),
    tool_name: t.name,
    tool_use_id: call.toolUseId,
    // Claude Code names the server and the scope it loaded it from in every MCP hook's input.
    ...(x?.source ? { mcp_server: { name: x.server, source: x.source } } : {}),
  };
  const out = [observe({ ...base, hook_event_name: 'PreToolUse', tool_input: t.input ?? {} }, call.usedAt)];
  if (call.resultAt !== undefined) {
    const outcome = x?.outcome ?? (t.result?.failed ? 'failed' : 'returned');
    const duration = x?.duration ?? call.resultAt - call.usedAt;
    // The hook after the call sees what the server was sent, which an earlier hook may have rewritten.
    const post = { ...base, tool_input: x?.arguments ?? t.input ?? {}, duration_ms: duration };
    const text = t.result?.text ?? '';
    const response = x ? [{ type: 'text', text }] : { stdout: text, stderr: '', interrupted: false, isImage: false };
    const after =
      outcome === 'returned'
        ? observe({ ...post, hook_event_name: 'PostToolUse', tool_response: response }, call.resultAt)
        : observe({ ...post, hook_event_name: 'PostToolUseFailure', error: text, is_interrupt: outcome === 'interrupted' }, call.resultAt);
    out.push(after);
    if (x?.twice) out.push(after);
  }
  for (const o of out) {
    if (t.name === 'Bash' && o.event !== 'tool_failed') o.shell = { ...o.shell, scan: scans(call, cwd, Date.parse(o.time), o.event === 'tool_post') };
  }
  return out;
}

/** Every spool line the plugin's hooks write for the generated session, in the order they ran. */
export function pluginObservations(g: Generated): HookObservation[] {
  return g.plugin.flatMap((c) => callObservations(g, c)).sort((a, b) => Date.parse(a.time) - Date.parse(b.time));
}
