/**
 * The plugin's observations on `GET /api/c/{id}/tools`: each tool row whose call a hook observed
 * gets `execution` (the duration the runtime measured around the call, with its source, the span
 * between the hooks, the outcome), and the answer lists what the hooks observed that no step of
 * the conversation could take, with the reason. Read from the hook spool of each of the
 * conversation's sessions on every request, so an observation shows as soon as it is spooled.
 */
import { joinExecutions, type ToolExecution, type UnresolvedObservation } from '../../assemble/tool-executions.js';
import { readSpool } from '../../storage/hook-spool.js';
import type { ToolsAnswer } from './figures-api.js';

export interface ExecutionsAnswer extends ToolsAnswer {
  tools: (ToolsAnswer['tools'][number] & { execution?: ToolExecution & { source: 'plugin' } })[];
  /** What the plugin observed in the conversation's sessions: how many, and what could not be placed. */
  plugin: { observations: number; session_started?: string; session_ended?: string; unresolved: UnresolvedObservation[] };
}

export function withExecutions(answer: ToolsAnswer, root: string, sessions: readonly string[]): ExecutionsAnswer {
  const ids = new Set(answer.tools.map((t) => t.tool_use_id));
  const lines = sessions.flatMap((s) => readSpool(root, s));
  const j = joinExecutions(ids, lines);
  return {
    ...answer,
    tools: answer.tools.map((t) => {
      const x = j.executions.get(t.tool_use_id);
      return x ? { ...t, execution: { ...x, source: 'plugin' as const } } : t;
    }),
    plugin: {
      observations: j.observations,
      ...(j.session_started ? { session_started: j.session_started } : {}),
      ...(j.session_ended ? { session_ended: j.session_ended } : {}),
      unresolved: j.unresolved,
    },
  };
}
