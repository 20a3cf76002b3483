/**
 * `changes_leave_the_fold`: workspace changes ride beside a tool's result and never enter the
 * fold. The scenario is built twice on scratch roots, as written and with every change taken out
 * (the same ids, the same records), and the two folds must agree node by node, parent by parent
 * and relation by relation. A scenario with no change has nothing to hold over.
 */
import type { Scenario, Step } from './model.js';

/** The steps with every tool's `changes` removed, children's included. */
export function withoutChanges(scn: Scenario): Scenario {
  const strip = (steps: Step[]): Step[] =>
    steps.map((st) => {
      if (!('call' in st)) return st;
      const c = { ...st.call };
      if (c.tool) c.tool = { ...c.tool, changes: undefined };
      if (c.agent) c.agent = { ...c.agent, steps: strip(c.agent.steps) };
      if (c.skill) c.skill = { ...c.skill, steps: strip(c.skill.steps) };
      if (c.workflow) c.workflow = { ...c.workflow, children: c.workflow.children.map((ch) => ({ ...ch, steps: strip(ch.steps) })) };
      return { ...st, call: c };
    });
  return { ...scn, steps: strip(scn.steps) };
}

/** Whether any tool in the scenario, at any depth, changes a file. */
export function hasChanges(steps: Step[]): boolean {
  return steps.some(
    (st) =>
      'call' in st &&
      (!!st.call.tool?.changes?.length ||
        hasChanges(st.call.agent?.steps ?? []) ||
        hasChanges(st.call.skill?.steps ?? []) ||
        (st.call.workflow?.children ?? []).some((ch) => hasChanges(ch.steps))),
  );
}
