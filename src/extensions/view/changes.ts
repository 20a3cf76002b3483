/**
 * `GET /api/c/{id}/changes`: what the conversation changed in the workspace, each change on the
 * step that made it and the talk that step is in, with totals per talk and for the conversation:
 * the runtime's own patches (`changes/1` parts beside the results) and what the plugin's hooks saw
 * a shell command change (its landed `changes` observations, paired around each call).
 * A change whose step the fold does not hold is listed with the reason, never left out.
 */
import { isHookObservation } from '../../adapters/claude-code/hook-event.js';
import { shellWindowChanges, type LandedObservation } from '../../assemble/shell-window-changes.js';
import {
  changesOfRecord,
  changeTotals,
  distinctChanges,
  totalsByTalk,
  unifiedDiff,
  type ChangeTotals,
  type WorkspaceChange,
} from '../../assemble/workspace-changes.js';
import { entityId, type EntityFrame } from '../../formats/session-flow/types.js';
import type { ViewInput } from '../../formats/view/build.js';

export interface ChangeEntry extends WorkspaceChange {
  /** The step that made the change (`tool/<tool use>`), when the fold holds it. */
  step?: string;
  talk?: string;
  /** Why no step is named. */
  unplaced?: string;
  /** The hunks as one unified diff. */
  diff: string;
}

export interface ChangesAnswer {
  conversation: string;
  totals: ChangeTotals;
  talks: { talk: string; totals: ChangeTotals }[];
  changes: ChangeEntry[];
}

type NodeFrame = Extract<EntityFrame, { t: 'node' }>;

/** The talk holding a node, by walking containment up; undefined when none does. */
function talkHolding(nodes: Map<string, NodeFrame>, id: string): string | undefined {
  const seen = new Set<string>();
  for (let cur = nodes.get(id); cur && !seen.has(cur.id); cur = cur.parent ? nodes.get(cur.parent) : undefined) {
    seen.add(cur.id);
    if (cur.kind === 'talk') return cur.id;
  }
  return undefined;
}

export function buildChanges(input: ViewInput): ChangesAnswer {
  const nodes = new Map<string, NodeFrame>();
  for (const e of input.fold.entities.values()) if (e.t === 'node') nodes.set(e.id, e);
  const found: WorkspaceChange[] = [];
  const observed: LandedObservation[] = [];
  for (const f of input.files) {
    if (f.format !== 'sd' || f.seq === undefined) continue;
    for (let row = 1; ; row++) {
      const r = input.records.record(f.seq, row);
      if (!r) break;
      found.push(...changesOfRecord(r, { seq: f.seq, row }, f.stream ?? undefined));
      if (f.kind !== 'changes') continue;
      r.parts.forEach((p, block) => {
        if (p.k === 'data' && isHookObservation(p.data))
          observed.push({ observation: p.data, ref: { seq: f.seq!, row, block }, ...(f.stream ? { stream: f.stream } : {}) });
      });
    }
  }
  const changes = distinctChanges([...found, ...shellWindowChanges(observed)]);
  // A tool that started a child agent becomes an `agent.call` and keeps its id.
  const stepOf = (toolUse: string) => (nodes.has(entityId('tool', toolUse)) ? entityId('tool', toolUse) : undefined);
  const talkOf = (toolUse: string) => {
    const step = stepOf(toolUse);
    return step ? talkHolding(nodes, step) : undefined;
  };
  const entries: ChangeEntry[] = changes.map((c) => {
    const step = stepOf(c.tool_use);
    const talk = talkOf(c.tool_use);
    const e: ChangeEntry = { ...c, diff: unifiedDiff(c) };
    if (step) e.step = step;
    else e.unplaced = `no step of the conversation is the tool use ${c.tool_use}: its request has not been assembled`;
    if (talk) e.talk = talk;
    else if (step) e.unplaced = `the step ${step} is in no talk`;
    return e;
  });
  const byTalk = totalsByTalk(changes, talkOf);
  return {
    conversation: input.conversation,
    totals: changeTotals(changes),
    talks: [...byTalk].map(([talk, totals]) => ({ talk, totals })),
    changes: entries,
  };
}
