/**
 * `metrics_match_the_plan` (asz 0.6 names it in `internal/scenario/expect` and evaluates it inside
 * its push check, `internal/scenario/run/push.go`): the metrics the session's push carries say what
 * the scenario says. Token usage is every call's usage once, whatever its fragments repeat, under
 * the stream that made it (`main` or `subagent`); a lost call left no record and a lost stream no
 * file, so neither counts. Each MCP call that returned or failed is one call of its server, tool,
 * outcome and stream, and adds the time from its request record to its result record, which is the
 * result's `after` (the scenario's interval when it gives none). A result given as its own `result`
 * step counts the same way, its time taken from the scenario's clock as the generator keeps it (the
 * steps between the call and the result move it). Read from the scenario itself, never from the
 * landed files, so a derivation that miscounts cannot agree with itself.
 */
import { generate } from './generate.js';
import type { CallSpec, Scenario, Step, Usage } from './model.js';

export interface MetricsPlan {
  /** `query_source/type` → tokens. */
  tokens: Record<string, number>;
  /** `agent.mcp.calls|agent.mcp.duration/server/tool/outcome/query_source` → calls or milliseconds. */
  mcp: Record<string, number>;
}

/** What the generator writes when a call gives no usage (generate.ts, usageOf). */
const DEFAULT_USAGE: Required<Usage> = { in: 2, out: 10, cache_read: 900, cache_write: 100 };
const TYPES: [keyof Usage, string][] = [
  ['in', 'input'],
  ['out', 'output'],
  ['cache_read', 'cacheRead'],
  ['cache_write', 'cacheCreation'],
];

const add = (m: Record<string, number>, k: string, n: number) => {
  if (n > 0) m[k] = (m[k] ?? 0) + n;
};

/** `mcp__<server>__<tool>`: exactly one server and one tool, as the derivation splits it. */
function mcpTarget(name: string): { server: string; tool: string } | undefined {
  if (!name.startsWith('mcp__')) return undefined;
  const parts = name.slice(5).split('__');
  return parts.length === 2 && parts[0] && parts[1] ? { server: parts[0], tool: parts[1] } : undefined;
}

export function metricsPlan(scn: Scenario): MetricsPlan {
  const plan: MetricsPlan = { tokens: {}, mcp: {} };
  const call = (c: CallSpec, source: string) => {
    for (const [k, type] of TYPES) add(plan.tokens, `${source}/${type}`, c.usage?.[k] ?? DEFAULT_USAGE[k]);
    const t = c.tool;
    const target = t && mcpTarget(t.name);
    if (!t?.result || t.result.lost || !target) return;
    const series = `${target.server}/${target.tool}/${t.result.failed ? 'failed' : 'returned'}/${source}`;
    add(plan.mcp, `agent.mcp.calls/${series}`, 1);
    add(plan.mcp, `agent.mcp.duration/${series}`, t.result.after ?? scn.interval);
  };
  // Only the clock's differences are read, so any base time gives the same plan.
  const times = generate(scn, { at: 0 }).toolTimes;
  const walk = (steps: Step[], source: string) => {
    for (const st of steps) {
      if ('result' in st) {
        const used = times.used.get(st.result.of);
        const at = times.separateResults.get(st.result.of);
        const target = used && mcpTarget(used.name);
        if (st.lost || !target || at === undefined) continue;
        const series = `${target.server}/${target.tool}/${st.result.failed ? 'failed' : 'returned'}/${source}`;
        add(plan.mcp, `agent.mcp.calls/${series}`, 1);
        add(plan.mcp, `agent.mcp.duration/${series}`, at - used.at);
        continue;
      }
      if (!('call' in st)) continue;
      if (!st.lost) call(st.call, source);
      // A child's file is its own: a lost launch leaves it, a lost child takes it.
      const c = st.call;
      if (c.agent && !c.agent.lost) walk(c.agent.steps, 'subagent');
      if (c.skill && !c.skill.lost) walk(c.skill.steps, 'subagent');
      for (const ch of c.workflow?.children ?? []) if (!ch.lost) walk(ch.steps, 'subagent');
    }
  };
  walk(scn.steps, 'main');
  return plan;
}

/** Where the pushed metrics differ from the plan, both ways: a planned series missing or off, and one the plan does not have. */
export function metricsDiffer(plan: MetricsPlan, got: MetricsPlan): { key: string; planned: number; pushed: number }[] {
  const out: { key: string; planned: number; pushed: number }[] = [];
  for (const family of ['tokens', 'mcp'] as const) {
    const keys = new Set([...Object.keys(plan[family]), ...Object.keys(got[family])]);
    for (const k of [...keys].sort()) {
      const [p, g] = [plan[family][k] ?? 0, got[family][k] ?? 0];
      if (p !== g) out.push({ key: `${family === 'tokens' ? 'claude_code.token.usage/' : ''}${k}`, planned: p, pushed: g });
    }
  }
  return out;
}
