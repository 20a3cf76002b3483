/**
 * Where the time went, on the timeline: a provider call's API wait, a tool's execution and a wait
 * for the person's permission drawn as three kinds of mark, each a span on its stream's lane. The
 * figures are assembly's telemetry join (span start and end, or the event's duration ending at the
 * call's record); a step without them draws no span, never a guessed one.
 */
import type { ViewNode } from '../../../formats/view/types.js';

export type WaitKind = 'api' | 'tool' | 'user';

export interface Wait {
  kind: WaitKind;
  id: string;
  stream: string;
  from: number;
  to: number;
}

/** Colour and the row inside a lane each kind is drawn on (0 top, 2 bottom). */
export const WAIT_STYLE: Record<WaitKind, { color: string; row: number; label: string }> = {
  api: { color: '#ac8cff', row: 0, label: 'API wait' },
  tool: { color: '#f4a641', row: 1, label: 'tool execution' },
  user: { color: '#ef6eae', row: 2, label: 'waiting for the user' },
};

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : undefined);
const time = (v: unknown) => (typeof v === 'string' && !Number.isNaN(Date.parse(v)) ? Date.parse(v) : undefined);

export function waitsOf(nodes: Iterable<ViewNode>): Wait[] {
  const out: Wait[] = [];
  const add = (kind: WaitKind, n: ViewNode, from: number | undefined, to: number | undefined) => {
    if (from !== undefined && to !== undefined && to >= from) out.push({ kind, id: n.id, stream: n.stream ?? 'main', from, to });
  };
  for (const n of nodes) {
    const a = n.attrs ?? {};
    if (n.kind === 'llm.call') {
      const start = time(a.started_at),
        end = time(a.ended_at);
      if (start !== undefined && end !== undefined) add('api', n, start, end);
      else if (num(a.duration_ms) !== undefined && n.at) add('api', n, n.at - num(a.duration_ms)!, n.at);
    } else if (n.kind === 'tool' || n.kind === 'agent.call') {
      const start = time(a.started_at),
        ran = num(a.execution_ms);
      if (start !== undefined && ran !== undefined) add('tool', n, start, start + ran);
      // The permission wait ends when the tool starts.
      const blocked = num(a.blocked_on_user_ms);
      if (start !== undefined && blocked) add('user', n, start - blocked, start);
    }
  }
  return out;
}
