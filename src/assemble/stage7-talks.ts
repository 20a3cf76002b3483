import { entityId } from '../formats/session-flow/types.js';
import type { IndexEntry } from '../storage/index.js';
import { addNode, has, locId, refOf, type AssemblyContext, type RunInfo, type TalkInfo } from './context.js';
import { isEpochStep } from './stage6-epochs.js';

/** The walk exists only so corrupt data cannot loop; real chains need more than 7 hops. */
export const MAX_PARENT_HOPS = 64;

/**
 * A record's prompt cycle: its own, else the first one reached by walking containment parents
 * backward through records of every kind (attachments included), at most 64 hops.
 */
function cycleOf(ctx: AssemblyContext, e: IndexEntry, memo: Map<IndexEntry, string | null>): string | undefined {
  const path: IndexEntry[] = [];
  let cur: IndexEntry | undefined = e;
  let found: string | null = null;
  for (let hops = 0; cur && hops <= MAX_PARENT_HOPS; hops++) {
    const known = memo.get(cur);
    if (known !== undefined) {
      found = known;
      break;
    }
    path.push(cur);
    if (cur.run) {
      found = cur.run;
      break;
    }
    cur = cur.parent ? ctx.byId.get(cur.parent) : undefined;
    if (cur && cur.stream !== e.stream) cur = undefined; // a run belongs to its stream
  }
  for (const p of path) memo.set(p, found);
  return found ?? undefined;
}

const statedTrigger = (records: IndexEntry[], cycle: string): RunInfo['trigger'] => {
  let t: RunInfo['trigger'];
  for (const r of records) {
    if (r.run !== cycle || !r.trigger) continue;
    if (r.trigger === 'external') return 'external';
    t = t === 'notification' || r.trigger === 'notification' ? 'notification' : 'unknown';
  }
  return t;
};

/**
 * Stage 7, first half. Runs are keyed by (stream, cycle): a cycle id is not unique across streams.
 * On main a cycle whose records state an external trigger, or none at all, starts a talk; a cycle
 * stating only notifications or unknown kinds continues the talk in progress. A child stream is
 * one talk, whatever its cycles say.
 */
export function computeTalks(ctx: AssemblyContext): void {
  const memo = new Map<IndexEntry, string | null>();
  for (const s of ctx.streams.values()) {
    const byCycle = new Map<string, IndexEntry[]>();
    for (const e of s.records) {
      const c = cycleOf(ctx, e, memo);
      if (c === undefined) continue;
      (byCycle.get(c) ?? byCycle.set(c, []).get(c)!).push(e);
    }
    let talk: TalkInfo | undefined;
    for (const [cycle, records] of byCycle) {
      // Map keeps first-seen order, which is landed order
      const trigger = statedTrigger(records, cycle);
      if (s.role === 'child') {
        talk ??= { id: entityId('talk', s.name), stream: s.name, runs: [], trigger: 'unknown' };
      } else if (!talk || trigger === undefined || trigger === 'external') {
        talk = { id: entityId('talk', s.name, cycle), stream: s.name, runs: [], trigger: 'external' };
      }
      if (!talk.runs.length) ctx.talks.push(talk);
      const run: RunInfo = { id: entityId('run', talk.id.replace(/\//g, '_'), cycle), talk: talk.id, stream: s.name, cycle, records, trigger };
      talk.runs.push(run);
      for (const r of records) ctx.runOf.set(r, run);
    }
  }
}

/** The node a record's step hangs under: its run, else its epoch. */
export function parentOf(ctx: AssemblyContext, e: IndexEntry): string {
  return ctx.runOf.get(e)?.id ?? ctx.epochOf.get(e) ?? entityId('stream', e.stream);
}

/**
 * Stage 7, second half: talk and run nodes, and the steps that are whole records — a person's
 * input, injected context, a notification, an API error, a local command, a turn's duration.
 */
export function emitTalks(ctx: AssemblyContext): void {
  for (const t of ctx.talks) {
    const first = t.runs[0]!.records[0]!;
    addNode(ctx, t.id, {
      kind: 'talk',
      parent: ctx.epochOf.get(first),
      stream: t.stream,
      ref: refOf(first),
      attrs: { loops: t.runs.length, runs: t.runs.length, trigger: t.trigger },
    });
    for (const r of t.runs) {
      addNode(ctx, r.id, { kind: 'run', parent: t.id, stream: t.stream, ref: refOf(r.records[0]!), attrs: { trigger: r.trigger ?? 'external' } });
    }
  }
  for (const s of ctx.streams.values()) {
    for (const e of s.records) {
      if (isEpochStep(e)) continue;
      const step = (prefix: string, kind: Parameters<typeof addNode>[2]['kind'], attrs?: Record<string, unknown>) =>
        addNode(ctx, locId(prefix, e), { kind, parent: parentOf(ctx, e), stream: s.name, ref: refOf(e), ...(attrs ? { attrs } : {}) });
      // Injected context first: a queued notification attachment is context, not the notification turn.
      if (has(e, 'injected')) step('inject', 'context.injection');
      else if (e.trigger === 'notification') step('notify', 'runtime.notification');
      // A child's prompt was written by its parent, not by a person: it is the run's opening record, not an input.
      else if (has(e, 'external_input')) {
        if (s.role === 'main') step('input', 'message.external');
      } else if (has(e, 'api_error')) step('error', 'error.api', { retry_state: 'unavailable' });
      else if (has(e, 'local_command')) step('command', 'control.command');
      else if (has(e, 'turn_duration')) step('turn', 'turn.duration');
      else if (has(e, 'notice')) step('notice', 'control.notice');
    }
  }
}
