/**
 * How the plugin's hook observations pair up around one tool call, in one place for every reader
 * (the `/tools` execution join and the shell changes in `/changes`), so the two can never disagree
 * on which hooks belong to a call. Pure.
 */
import type { DirScan, HookObservation } from '../adapters/claude-code/hook-event.js';

/** The hooks before and after one call, in the order they were read. */
export interface HookPair<T> {
  pre: T[];
  post: T[];
}

/**
 * The items whose observation was not seen before: the same event posted to the receiver and
 * also spooled lands once per copy, and is one observation. An item that is no observation
 * passes through in its place, so a reader keeps its evidence in line order.
 */
export function* distinctObservations<T>(items: Iterable<T>, observationOf: (item: T) => HookObservation | undefined): Generator<T> {
  const seen = new Set<string>();
  for (const item of items) {
    const id = observationOf(item)?.id;
    if (id !== undefined) {
      if (seen.has(id)) continue;
      seen.add(id);
    }
    yield item;
  }
}

/**
 * The tool hooks naming a tool use grouped by the call they name, in first-seen order: `tool_pre`
 * before it; `tool_post` or `tool_failed` (the runtime's hook after a failed call) after it.
 */
export function pairToolHooks<T>(items: Iterable<T>, observationOf: (item: T) => HookObservation): Map<string, HookPair<T>> {
  const byTool = new Map<string, HookPair<T>>();
  for (const item of items) {
    const o = observationOf(item);
    if (!o.tool || (o.event !== 'tool_pre' && o.event !== 'tool_post' && o.event !== 'tool_failed')) continue;
    let pair = byTool.get(o.tool);
    if (!pair) byTool.set(o.tool, (pair = { pre: [], post: [] }));
    (o.event === 'tool_pre' ? pair.pre : pair.post).push(item);
  }
  return byTool;
}

/** The one hook before and the one after, or undefined when either side has several: none of them is chosen. */
export function theOnePair<T>(pair: HookPair<T>): { before?: T; after?: T } | undefined {
  if (pair.pre.length > 1 || pair.post.length > 1) return undefined;
  return { before: pair.pre[0], after: pair.post[0] };
}

/** The two scans of a shell call's working directory, when both hooks took one of the same directory. */
export function scanWindow(before: HookObservation | undefined, after: HookObservation | undefined): { before: DirScan; after: DirScan } | undefined {
  const a = before?.shell?.scan;
  const b = after?.shell?.scan;
  return a && b && a.dir === b.dir ? { before: a, after: b } : undefined;
}
