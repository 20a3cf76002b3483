import { entityId, IDLE_GAP_MS } from '../formats/session-flow/types.js';
import type { IndexEntry } from '../storage/index.js';
import { addNode, addRelation, refOf, type AssemblyContext, type TalkInfo } from './context.js';
import type { ToolUse } from './stage4-tools.js';

function lowerBound(xs: { time: number }[], t: number): number {
  let lo = 0,
    hi = xs.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (xs[mid]!.time < t) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

interface Window {
  id: string;
  talks: TalkInfo[];
  from: number;
  to: number;
  first: IndexEntry;
}

function range(t: TalkInfo): { from: number; to: number; first: IndexEntry } | undefined {
  let from = Infinity,
    to = -Infinity;
  for (const r of t.runs)
    for (const e of r.records)
      if (e.time !== undefined) {
        from = Math.min(from, e.time);
        to = Math.max(to, e.time);
      }
  return from === Infinity ? undefined : { from, to, first: t.runs[0]!.records[0]! };
}

/**
 * Stage 8. Proposes activity windows on the main stream; it commits nothing. Talks in order of
 * their first record time; a gap longer than the idle gap opens a window; a negative gap is no
 * gap (record times step backward). A window is named by where it opens, so late evidence cannot
 * renumber it. Four gates say whether a window could be committed.
 */
export function proposeSegments(ctx: AssemblyContext, uses: Map<string, ToolUse>): void {
  const main = ctx.talks
    .filter((t) => t.stream === 'main')
    .map((t) => ({ t, r: range(t) }))
    .filter((x) => x.r) as { t: TalkInfo; r: NonNullable<ReturnType<typeof range>> }[];
  main.sort((a, b) => a.r.from - b.r.from || a.r.first.seq - b.r.first.seq || a.r.first.row - b.r.first.row);
  const windows: Window[] = [];
  for (const { t, r } of main) {
    const w = windows[windows.length - 1];
    if (w && r.from - w.to <= IDLE_GAP_MS) {
      w.talks.push(t);
      w.to = Math.max(w.to, r.to);
    } else {
      windows.push({ id: entityId('segment', `at_${r.first.seq}_${r.first.row}`), talks: [t], from: r.from, to: r.to, first: r.first });
    }
  }
  if (!windows.length) return;
  let mainLast = -Infinity;
  for (const e of ctx.streams.get('main')?.records ?? []) if (e.time !== undefined) mainLast = Math.max(mainLast, e.time);
  const openChildren = [...ctx.out.unresolved.values()].some((u) => u.state === 'open' && (u.kind === 'child_stream' || u.kind === 'notified_child'));
  // A child's talk belongs to the window of the talk that asked for it: the one holding its first record.
  for (const t of ctx.talks) {
    if (t.stream === 'main') continue;
    const r = range(t);
    if (!r) continue;
    let w = windows.find((x) => r.from >= x.from && r.from <= x.to);
    w ??= [...windows].reverse().find((x) => x.from <= r.from) ?? windows[0]!;
    w.talks.push(t);
    addRelation(ctx, 'in_segment', t.id, w.id, 'strong_inference', 'inside the window of the talk that delegated it', [refOf(r.first)]);
  }
  // Tool uses by request time, so each window looks only at the requests inside it.
  const timed = [...uses.values()]
    .filter((u) => u.entry.time !== undefined)
    .map((use) => ({ time: use.entry.time!, use }))
    .sort((a, b) => a.time - b.time);
  windows.forEach((w, i) => {
    const last = i === windows.length - 1;
    const unmet: string[] = [];
    if (last) unmet.push('activity_boundary');
    let crossing = false;
    for (let k = lowerBound(timed, w.from); k < timed.length && timed[k]!.time <= w.to && !crossing; k++) {
      const u = timed[k]!.use;
      const rt = u.results.length === 1 ? u.results[0]!.entry.time : undefined;
      crossing = rt === undefined || rt < w.from || rt > w.to;
    }
    if (crossing || openChildren) unmet.push('no_crossing_open_operation');
    if (last || !(mainLast - w.to > IDLE_GAP_MS)) unmet.push('lateness_watermark');
    if (!ctx.conversation) unmet.push('conversation_identity');
    addNode(ctx, w.id, {
      kind: 'segment',
      parent: entityId('session', ctx.session),
      ref: refOf(w.first),
      attrs: { state: last ? 'open' : 'candidate', talks: w.talks.length, gates_unmet: unmet, committable: unmet.length === 0 },
    });
    for (const t of w.talks)
      if (t.stream === 'main') addRelation(ctx, 'in_segment', t.id, w.id, 'exact_unique', 'activity window', [refOf(t.runs[0]!.records[0]!)]);
  });
}
