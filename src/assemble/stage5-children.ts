import { entityId } from '../formats/session-flow/types.js';
import type { IndexEntry } from '../storage/index.js';
import { addNode, addRelation, addUnresolved, has, locId, refOf, type AssemblyContext } from './context.js';
import { streamLanded } from './stage2-streams.js';
import { parentOf } from './stage7-talks.js';
import type { ToolUse } from './stage4-tools.js';

const firstResultOf = (e: IndexEntry) => e.parts.find((p) => p.k === 'result' && p.of)?.of;

/**
 * Stage 5. Which call started which child stream. Four mechanisms: a launch result naming the
 * child (agent tool, skill fork: `exact_unique`), a workflow run's journal naming each child of
 * the batch a launch result named (`strong_inference`: the journal names no call), a sidecar's
 * nesting (joined, but no `starts`: there is no call), and completion notifications (`reports`).
 * A child nobody names stays under the session with an open `spawn_of_child`; evidence that names
 * a child or a call not landed yet leaves an open entry that resolves when it lands.
 */
export function joinChildren(ctx: AssemblyContext, uses: Map<string, ToolUse>): void {
  const joined = new Set<string>();
  const startedBy = new Map<string, string>(); // child → tool id
  const start = (tool: string, child: string, quality: 'exact_unique' | 'strong_inference', via: string, ev: IndexEntry) => {
    if (!streamLanded(ctx.streams.get(child))) {
      addUnresolved(ctx, 'child_stream', child, 'a child was announced, and its stream has not landed');
      return;
    }
    joined.add(child);
    if (!uses.has(tool)) return;
    startedBy.set(child, tool);
    addRelation(ctx, 'starts', entityId('tool', tool), entityId('stream', child), quality, via, [refOf(ev)]);
    const node = ctx.out.nodes.get(entityId('tool', tool));
    if (node) node.kind = 'agent.call';
  };

  const launches = new Map<string, { tool: string; entry: IndexEntry }>(); // batch → launch call
  for (const s of ctx.streams.values()) {
    for (const e of s.records) {
      const of = firstResultOf(e);
      if (has(e, 'launch_ack')) addNode(ctx, locId('ack', e), { kind: 'agent.launch_ack', parent: parentOf(ctx, e), stream: s.name, ref: refOf(e) });
      if (!of) continue;
      if (e.child) start(of, e.child, 'exact_unique', 'parent tool result', e);
      if (e.batch && !launches.has(e.batch)) launches.set(e.batch, { tool: of, entry: e });
    }
  }

  for (const [batch, records] of ctx.runs) {
    const started = records.filter((r) => r.fileKind === 'journal' && r.child && has(r, 'child_started'));
    if (!started.length) continue;
    const launch = launches.get(batch);
    if (!launch) addUnresolved(ctx, 'spawn_call', batch, 'a batch of children names a launch call that never landed');
    for (const r of started) {
      if (launch) start(launch.tool, r.child!, 'strong_inference', 'run journal', r);
      else if (!streamLanded(ctx.streams.get(r.child!))) addUnresolved(ctx, 'child_stream', r.child!, 'a child was announced, and its stream has not landed');
      else joined.add(r.child!);
    }
  }

  for (const s of ctx.streams.values()) if (s.meta.some((m) => m.started_by)) joined.add(s.name);

  for (const s of ctx.streams.values()) {
    for (const e of s.records) {
      if (e.trigger !== 'notification' || has(e, 'injected')) continue;
      const note = locId('notify', e);
      if (e.child) {
        if (!streamLanded(ctx.streams.get(e.child))) {
          addUnresolved(ctx, 'notified_child', e.child, 'a notification names a child whose stream has not landed');
          continue;
        }
        addRelation(ctx, 'reports', note, entityId('stream', e.child), 'exact_unique', 'task id on the notification', [refOf(e)]);
        if (e.tool && !startedBy.has(e.child) && uses.has(e.tool)) start(e.tool, e.child, 'exact_unique', 'notification naming the call and the child', e);
      } else if (e.tool) {
        const child = [...startedBy].find(([, tool]) => tool === e.tool)?.[0];
        if (child) addRelation(ctx, 'reports', note, entityId('stream', child), 'strong_inference', 'the call named on the notification', [refOf(e)]);
      }
    }
  }

  for (const s of ctx.streams.values()) {
    if (s.role !== 'child' || !s.records.length) continue;
    if (!joined.has(s.name)) addUnresolved(ctx, 'spawn_of_child', s.name, 'no landed record names the call that started this child');
    // The child owns its output: its last response that a model (not the client) produced.
    let last: IndexEntry | undefined;
    for (const e of s.records) if (e.call && !has(e, 'synthetic')) last = e;
    if (!last) continue;
    const returned = [...ctx.runs.values()].flat().filter((r) => r.fileKind === 'journal' && r.child === s.name && has(r, 'child_result'));
    const id = entityId('output', s.name);
    const refs = [refOf(last), ...returned.map((r) => refOf(r))];
    addNode(ctx, id, {
      kind: 'agent.output',
      parent: parentOf(ctx, last),
      stream: s.name,
      ref: refOf(last),
      refs,
      attrs: { returned_value: returned.length ? 'observed_replayable' : 'unavailable' },
    });
    addRelation(ctx, 'ends_with', entityId('stream', s.name), id, 'exact_unique', 'the last response in the child stream, and what it returned', refs);
  }
}
