import { entityId, type NodeBody } from '../formats/session-flow/types.js';
import type { IndexEntry } from '../storage/index.js';
import { addNode, has, locId, refOf, type AssemblyContext } from './context.js';
import { parentOf } from './stage7-talks.js';

/**
 * Stage 3. A provider call is every record sharing a call id, in landed (line) order — never
 * rebuilt by walking parents, never keyed by request id; its fragments interleave with their own
 * results. Usage is read from the last fragment in line order, and only when some fragment
 * carries a stop reason (`finished`): an unfinished call's usage is a streaming stub.
 */
export function emitCalls(ctx: AssemblyContext): Map<string, IndexEntry[]> {
  const calls = new Map<string, IndexEntry[]>();
  for (const s of ctx.streams.values()) {
    for (const e of s.records) if (e.call) (calls.get(e.call) ?? calls.set(e.call, []).get(e.call)!).push(e);
  }
  for (const [callId, frags] of calls) {
    const first = frags[0]!;
    const last = frags[frags.length - 1]!;
    const finished = frags.some((f) => has(f, 'finished'));
    const attrs: Record<string, unknown> = { fragments: frags.length, usage_from: 'last_fragment_in_line_order' };
    if (finished) {
      attrs.usage = 'observed_replayable';
      attrs.usage_at = refOf(last);
    } else {
      attrs.usage = 'unavailable';
      attrs.stop_reason = 'unavailable';
    }
    const id = entityId('call', callId);
    const node: NodeBody = { kind: 'llm.call', parent: parentOf(ctx, first), stream: first.stream, ref: refOf(first), refs: frags.map((f) => refOf(f)), attrs };
    addNode(ctx, id, node);
    (ctx.callNodes ??= []).push({ first, node });
    for (const f of frags) {
      f.parts.forEach((p) => {
        const block = p.block;
        if (p.k === 'text')
          addNode(ctx, locId('msg', f, block), {
            kind: has(f, 'synthetic') ? 'message.synthetic' : 'message.assistant',
            parent: id,
            stream: f.stream,
            ref: refOf(f, block),
          });
        else if (p.k === 'reasoning') addNode(ctx, locId('think', f, block), { kind: 'thinking', parent: id, stream: f.stream, ref: refOf(f, block) });
      });
    }
  }
  return calls;
}
