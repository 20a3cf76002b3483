/**
 * The order things happened in. Inside one stream (or one workflow run) a record's landed
 * position orders it; a position means nothing across streams, since a child's file can land
 * before its parent's. So each lane is sorted by position and the lanes are merged by time: the
 * next item is the earliest of every lane's next item, a timed item before an untimed one.
 */

export interface Placed<T> {
  item: T;
  /** The stream or run the item's record was filed under. */
  lane: string;
  seq: number;
  row: number;
  block: number;
  time?: number;
  /** Decides only between items at one position. */
  id: string;
}

const byPosition = <T>(a: Placed<T>, b: Placed<T>) => a.seq - b.seq || a.row - b.row || a.block - b.block || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** Is `a` to be taken before `b` when both head their lanes? */
function earlier<T>(a: Placed<T>, b: Placed<T>): boolean {
  if (a.time !== undefined && b.time !== undefined) {
    if (a.time !== b.time) return a.time < b.time;
  } else if (a.time !== undefined || b.time !== undefined) {
    return a.time !== undefined;
  }
  if (a.lane !== b.lane) return a.lane < b.lane;
  return byPosition(a, b) < 0;
}

export function mergeByTime<T>(xs: Placed<T>[]): T[] {
  if (xs.length < 2) return xs.map((x) => x.item);
  const lanes = new Map<string, Placed<T>[]>();
  for (const x of xs) {
    const l = lanes.get(x.lane);
    if (l) l.push(x);
    else lanes.set(x.lane, [x]);
  }
  const queues = [...lanes.values()].map((l) => l.sort(byPosition));
  if (queues.length === 1) return queues[0]!.map((x) => x.item);
  const at = new Array<number>(queues.length).fill(0);
  const out: T[] = [];
  for (let n = 0; n < xs.length; n++) {
    let best = -1;
    for (let q = 0; q < queues.length; q++) {
      if (at[q]! >= queues[q]!.length) continue;
      if (best < 0 || earlier(queues[q]![at[q]!]!, queues[best]![at[best]!]!)) best = q;
    }
    out.push(queues[best]![at[best]!++]!.item);
  }
  return out;
}
