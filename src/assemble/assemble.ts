/**
 * Assembly: landed records (through the index) → the conversation's entities. Nine stages, in an
 * order each depends on. Pure: the same index entries always give the same entities.
 */
import { entityId, STRUCTURE_KINDS, type Assembly } from '../formats/session-flow/types.js';
import type { IndexEntry } from '../storage/index.js';
import { addNode, type AssemblyContext } from './context.js';
import { removeDuplicates } from './stage1-dedupe.js';
import { partitionStreams } from './stage2-streams.js';
import { emitCalls } from './stage3-calls.js';
import { emitTools, type ToolUse } from './stage4-tools.js';
import { joinChildren } from './stage5-children.js';
import { computeEpochs, emitEpochs } from './stage6-epochs.js';
import { computeTalks, emitTalks } from './stage7-talks.js';
import { proposeSegments } from './stage8-segments.js';
import { joinTelemetry } from './stage9-telemetry.js';
import { joinProviderBodies } from './provider-bodies.js';

export interface AssembleInput {
  session: string;
  /** The conversation id; the session id unless supplied. Assembly refuses to run without one. */
  conversation?: string;
  /** Index entries through the watermark, in landed order. */
  entries: IndexEntry[];
}

/** Stages 1 and 2 and what stages 6 and 7 compute before anything is emitted: the context every later stage reads. */
export function openContext(session: string, conversation: string, entries: IndexEntry[]): AssemblyContext {
  const { live, byId, duplicates } = removeDuplicates(entries);
  const { streams, runs, telemetry } = partitionStreams(live);
  const ctx: AssemblyContext = {
    session,
    conversation,
    entries,
    live,
    byId,
    duplicates,
    streams,
    runs,
    telemetry,
    runOf: new Map(),
    talks: [],
    epochOf: new Map(),
    out: { nodes: new Map(), relations: new Map(), unresolved: new Map() },
  };
  computeEpochs(ctx);
  computeTalks(ctx);
  return ctx;
}

/** Stages 3 to 8 after the session's own nodes: epochs, talks, calls, tools, children, segments; the tool uses for the joins. */
export function emitStructure(ctx: AssemblyContext): Map<string, ToolUse> {
  emitEpochs(ctx);
  emitTalks(ctx);
  emitCalls(ctx);
  const uses = emitTools(ctx);
  joinChildren(ctx, uses);
  proposeSegments(ctx, uses);
  return uses;
}

export function assemble(input: AssembleInput): Assembly & { duplicates: number } {
  const conversation = input.conversation ?? input.session;
  if (!conversation) throw new Error('assembly needs a conversation id');
  const ctx = openContext(input.session, conversation, input.entries);
  const { live, streams, duplicates } = ctx;

  // The session and its streams.
  let title: string | undefined;
  let from = Infinity,
    through = -Infinity;
  for (const e of live) {
    if (e.time !== undefined) {
      from = Math.min(from, e.time);
      through = Math.max(through, e.time);
    }
    // The kind first: every record has one, and telemetry records have no label, which is slower to find absent.
    if (e.fileKind === 'transcript' && e.label && e.stream === 'main') title = e.label; // the runtime rewrites its title: the last one wins
  }
  const sessionAttrs: Record<string, unknown> = {};
  if (from !== Infinity) {
    sessionAttrs.from_time = new Date(from).toISOString();
    sessionAttrs.through_time = new Date(through).toISOString();
  }
  if (title) sessionAttrs.title = title;
  addNode(ctx, entityId('session', input.session), { kind: 'session', ...(Object.keys(sessionAttrs).length ? { attrs: sessionAttrs } : {}) });
  for (const s of streams.values()) {
    if (!s.records.length) continue;
    const attrs: Record<string, unknown> = { role: s.role };
    const label = [...s.meta].reverse().find((m) => m.label)?.label;
    if (label) attrs.label = label;
    const nestedIn = s.meta.find((m) => m.started_by)?.started_by;
    if (nestedIn) attrs.started_by = nestedIn;
    if (s.batch) attrs.batch = s.batch;
    addNode(ctx, entityId('stream', s.name), { kind: 'stream', parent: entityId('session', input.session), stream: s.name, attrs });
  }

  const uses = emitStructure(ctx);
  joinTelemetry(ctx, uses);
  joinProviderBodies(ctx);
  return { ...ctx.out, title, sessionFrom: from === Infinity ? undefined : from, sessionThrough: through === -Infinity ? undefined : through, duplicates };
}

/** The list counts a round header carries, from an assembled or folded set of nodes. */
export function headerCounts(nodes: Iterable<{ kind?: string; attrs?: Record<string, unknown> }>, openUnresolved: number) {
  let talks = 0,
    steps = 0,
    streams = 0,
    segments = 0,
    llm_calls = 0,
    subagents = 0,
    bash_runs = 0;
  for (const n of nodes) {
    switch (n.kind) {
      case 'talk':
        talks++;
        break;
      case 'stream':
        streams++;
        if (n.attrs?.role === 'child') subagents++;
        break;
      case 'segment':
        segments++;
        break;
      case 'llm.call':
        llm_calls++;
        break;
      default:
        break; // every other kind counts only as a step, below
    }
    if ((n.kind === 'tool' || n.kind === 'agent.call') && n.attrs?.name === 'Bash') bash_runs++;
    if (n.kind && !STRUCTURE_KINDS.has(n.kind)) steps++;
  }
  return { talks, steps, streams, segments, unresolved: openUnresolved, changes: 0, lines_added: 0, lines_removed: 0, llm_calls, subagents, bash_runs };
}
