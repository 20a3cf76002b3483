/**
 * The plugin's observations on `GET /api/c/{id}/tools`: each tool row whose call a hook observed
 * gets `execution` (the duration the runtime measured around the call, with its source, the span
 * between the hooks, the outcome), and the answer lists what the hooks observed that no step of
 * the conversation could take, with the reason. Read from the landed `changes` and `execution`
 * records of each of the conversation's sessions, and from the hook spool only for the lines not
 * landed yet (the answer says how many), so an observation shows as soon as it is spooled.
 */
import { joinExecutions, type ToolExecution, type UnresolvedObservation } from '../../assemble/tool-executions.js';
import { readObservations } from '../../storage/hook-landing.js';
import type { ToolsAnswer } from './figures-api.js';

export interface ExecutionsAnswer extends ToolsAnswer {
  tools: (ToolsAnswer['tools'][number] & { execution?: ToolExecution & { source: 'plugin' } })[];
  /** What the plugin observed in the conversation's sessions: how many, and what could not be placed. */
  plugin: {
    observations: number;
    /** Lines read from landed files, and from the spool because no file holds them yet. */
    read_from: { landed: number; spool_not_landed: number };
    session_started?: string;
    session_ended?: string;
    unresolved: UnresolvedObservation[];
  };
}

export function withExecutions(answer: ToolsAnswer, root: string, sessions: readonly string[]): ExecutionsAnswer {
  const ids = new Set(answer.tools.map((t) => t.tool_use_id));
  const read = sessions.map((s) => readObservations(root, s));
  const j = joinExecutions(
    ids,
    read.flatMap((r) => r.lines),
  );
  return {
    ...answer,
    tools: answer.tools.map((t) => {
      const x = j.executions.get(t.tool_use_id);
      return x ? { ...t, execution: { ...x, source: 'plugin' as const } } : t;
    }),
    plugin: {
      observations: j.observations,
      read_from: { landed: read.reduce((n, r) => n + r.landed, 0), spool_not_landed: read.reduce((n, r) => n + r.notLanded, 0) },
      ...(j.session_started ? { session_started: j.session_started } : {}),
      ...(j.session_ended ? { session_ended: j.session_ended } : {}),
      unresolved: j.unresolved,
    },
  };
}
