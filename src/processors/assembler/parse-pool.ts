/**
 * Sessions parsed side by side on worker threads, for a parse with many sessions to assemble (a
 * first parse of a long history). Sessions are independent: each has its own chain lock, so two
 * threads never write one chain. A thread takes sessions a group at a time and makes the group's
 * rounds durable together (parse-group.ts), assembling its next group while they sync. A thread
 * that dies fails the groups it held, and the rest go on with the threads left (or on the caller's
 * thread when none is).
 */
import { Worker } from 'node:worker_threads';
import type { ParseResult } from './parse.js';

export interface PoolRequest {
  root: string;
  sessions: string[];
  maxRoundBytes: number;
  /** Work out each written chain's usage cache on the thread (see parse-group.ts). */
  usageCache?: boolean;
}
export type PoolReply = ({ session: string; result: ParseResult } | { session: string; error: string })[];

/** Sessions a thread parses before their rounds are synced together: enough to share the syncs, few enough to keep both threads fed to the end. */
const GROUP = 12;

export async function parseOnThreads(
  sessions: string[],
  o: { root: string; maxRoundBytes: number; threads: number; usageCache?: boolean },
  onThisThread: (session: string) => Promise<ParseResult>,
  done: (session: string, r: ParseResult | Error) => void,
): Promise<void> {
  const queue = [...sessions];
  const drive = (w: Worker) =>
    new Promise<void>((resolve) => {
      // Two groups in flight: the thread assembles the next while the last one's syncs run on the thread pool.
      const inFlight = new Map<string, string[]>();
      let failed = false;
      const next = () => {
        const group = queue.splice(0, GROUP);
        if (group.length) {
          inFlight.set(group[0]!, group);
          w.postMessage({ root: o.root, sessions: group, maxRoundBytes: o.maxRoundBytes, usageCache: o.usageCache } satisfies PoolRequest);
        }
        if (inFlight.size === 0) {
          void w.terminate();
          resolve();
        }
      };
      w.on('message', (replies: PoolReply) => {
        if (failed) return;
        inFlight.delete(replies[0]?.session ?? '');
        for (const r of replies) done(r.session, 'error' in r ? new Error(r.error) : r.result);
        next();
      });
      w.once('error', (err) => {
        failed = true;
        for (const group of inFlight.values()) for (const s of group) done(s, new Error(`the parse thread failed: ${err.message}`));
        inFlight.clear();
        resolve();
      });
      next();
      next();
    });
  const workers = Array.from({ length: Math.min(o.threads, sessions.length) }, () => new Worker(new URL('./parse-pool-worker.js', import.meta.url)));
  await Promise.all(workers.map(drive));
  // Whatever a dead thread left behind.
  for (let s = queue.shift(); s !== undefined; s = queue.shift()) {
    try {
      done(s, await onThisThread(s));
    } catch (err) {
      done(s, err as Error);
    }
  }
}
