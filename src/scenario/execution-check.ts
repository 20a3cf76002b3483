/**
 * The plugin's execution observations as a check reads them: joined to the fold's tool steps the
 * way the view's `/tools` answer joins them (`assemble/tool-executions.ts`), counted for a
 * checkpoint's `view: {executions, executions_joined, outcomes}`; and the scenario without them,
 * for `executions_leave_the_fold` (an observation is evidence beside a step, never a step).
 */
import { joinExecutions } from '../assemble/tool-executions.js';
import type { EntityFrame } from '../formats/session-flow/types.js';
import { readObservations } from '../storage/hook-landing.js';
import type { Scenario, Step } from './model.js';

type Node = Extract<EntityFrame, { t: 'node' }>;

export interface ExecutionCounts {
  /** Calls the plugin observed: each joined step, and each observation of a tool call no step could take. */
  executions: number;
  executions_joined: number;
  /** Joined calls by how they ended. */
  outcomes: Record<string, number>;
  /** Joined MCP calls by where the runtime said their server's configuration came from (aszcol's own key; `none` when it did not say). */
  mcp_sources: Record<string, number>;
}

export function pluginExecutions(root: string, session: string, nodes: readonly Node[]): ExecutionCounts {
  const ids = new Set(nodes.filter((n) => n.id.startsWith('tool/')).map((n) => n.id.slice('tool/'.length)));
  const j = joinExecutions(ids, readObservations(root, session).lines);
  const outcomes: Record<string, number> = {};
  const mcp_sources: Record<string, number> = {};
  for (const x of j.executions.values()) {
    if (x.outcome) outcomes[x.outcome] = (outcomes[x.outcome] ?? 0) + 1;
    if (x.mcp_tool !== undefined) mcp_sources[x.mcp_source ?? 'none'] = (mcp_sources[x.mcp_source ?? 'none'] ?? 0) + 1;
  }
  const joined = [...j.executions.values()].filter((x) => x.join === 'exact_unique').length;
  return { executions: j.executions.size + j.unresolved.filter((u) => !u.ref.startsWith('line ')).length, executions_joined: joined, outcomes, mcp_sources };
}

const mapTools = (steps: Step[], f: (t: NonNullable<Extract<Step, { call: unknown }>['call']['tool']>) => void): Step[] =>
  steps.map((st) => {
    if (!('call' in st)) return st;
    const c = { ...st.call };
    if (c.tool) {
      c.tool = { ...c.tool };
      f(c.tool);
    }
    if (c.agent) c.agent = { ...c.agent, steps: mapTools(c.agent.steps, f) };
    if (c.skill) c.skill = { ...c.skill, steps: mapTools(c.skill.steps, f) };
    if (c.workflow) c.workflow = { ...c.workflow, children: c.workflow.children.map((ch) => ({ ...ch, steps: mapTools(ch.steps, f) })) };
    return { ...st, call: c };
  });

/** The scenario with every `execution` block removed, children's included: the same calls, no plugin observation of them. */
export function withoutExecutions(scn: Scenario): Scenario {
  return { ...scn, steps: mapTools(scn.steps, (t) => (t.execution = undefined)) };
}

/** Whether any tool in the scenario, at any depth, has an `execution` block. */
export function hasExecutions(scn: Scenario): boolean {
  let found = false;
  mapTools(scn.steps, (t) => (found ||= t.execution !== undefined));
  return found;
}
