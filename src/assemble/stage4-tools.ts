import { entityId, type NodeBody, type Ref } from '../formats/session-flow/types.js';
import type { IndexEntry, IndexedPart } from '../storage/index.js';
import { addNode, addUnresolved, refOf, type AssemblyContext } from './context.js';
import { parentOf } from './stage7-talks.js';
import { mcpAttributes } from './mcp-calls.js';

export interface ToolUse {
  id: string;
  name?: string;
  entry: IndexEntry;
  block: number;
  results: { entry: IndexEntry; block: number; part: IndexedPart }[];
  /** Its node, as stage 4 made it: stage 9 writes figures into it without looking it up by id. */
  node?: NodeBody;
}

/**
 * Stage 4. A request and its result join on the exact tool-use id, across every stream of the
 * session, never on a prefix. One result is `exact_unique`; several are `exact_ambiguous` and
 * nothing chooses; none leaves the result `unavailable`. Both leave an open `tool_result`. A
 * result whose request never landed is an open `tool_use`. Timing is never inferred.
 */
export function emitTools(ctx: AssemblyContext): Map<string, ToolUse> {
  const uses = new Map<string, ToolUse>();
  const results = new Map<string, ToolUse['results']>();
  for (const s of ctx.streams.values()) {
    for (const e of s.records) {
      e.parts.forEach((p) => {
        const block = p.block;
        if (p.k === 'call' && p.id && !uses.has(p.id)) uses.set(p.id, { id: p.id, name: p.name, entry: e, block, results: [] });
        else if (p.k === 'result' && p.of) (results.get(p.of) ?? results.set(p.of, []).get(p.of)!).push({ entry: e, block, part: p });
      });
    }
  }
  for (const [of, rs] of results) {
    const use = uses.get(of);
    if (use) use.results = rs;
    else addUnresolved(ctx, 'tool_use', of, 'a result landed, and the request it answers never did');
  }
  for (const u of uses.values()) {
    const attrs: Record<string, unknown> = { timing: 'unavailable' };
    if (u.name) attrs.name = u.name;
    const refs: Ref[] = [refOf(u.entry, u.block)];
    if (u.results.length === 0) {
      attrs.result = 'unavailable';
      addUnresolved(ctx, 'tool_result', u.id, 'no result landed for this tool use');
    } else {
      attrs.result = 'available';
      attrs.result_join = u.results.length === 1 ? 'exact_unique' : 'exact_ambiguous';
      for (const r of u.results) refs.push(refOf(r.entry, r.block));
      if (u.results.length > 1) addUnresolved(ctx, 'tool_result', u.id, `${u.results.length} results carry this tool use id`);
      else if (u.results[0]!.part.failed !== undefined) attrs.failed = u.results[0]!.part.failed;
    }
    Object.assign(attrs, mcpAttributes(u.name, u.entry, u.results));
    const callNode = u.entry.call ? entityId('call', u.entry.call) : parentOf(ctx, u.entry);
    u.node = { kind: 'tool', parent: callNode, stream: u.entry.stream, ref: refOf(u.entry, u.block), refs, attrs };
    addNode(ctx, entityId('tool', u.id), u.node);
  }
  return uses;
}
