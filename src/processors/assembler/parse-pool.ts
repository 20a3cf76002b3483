/**
 * Sessions parsed side by side on worker threads, for a parse with many sessions to assemble (a
 * first parse of a long history). Sessions are independent: each has its own chain lock, so two
 * threads never write one chain. A round's syncs wait on the disk, so a second thread also keeps
 * a core busy while the first waits. A thread that dies fails the session it held, and the rest
 * go on with the threads left (or on the caller's thread when none is).
 */
import { Worker } from 'node:worker_threads';
import type { ParseResult } from './parse.js';

export interface PoolRequest {
  root: string;
  session: string;
  maxRoundBytes: number;
}
export type PoolReply = { session: string; result: ParseResult } | { session: string; error: string };

export async function parseOnThreads(
  sessions: string[],
  o: { root: string; maxRoundBytes: number; threads: number },
  onThisThread: (session: string) => Promise<ParseResult>,
  done: (session: string, r: ParseResult | Error) => void,
): Promise<void> {
  const queue = [...sessions];
  const drive = (w: Worker) =>
    new Promise<void>((resolve) => {
      let current: string | undefined;
      const next = () => {
        current = queue.shift();
        if (current === undefined) {
          void w.terminate();
          resolve();
          return;
        }
        w.postMessage({ root: o.root, session: current, maxRoundBytes: o.maxRoundBytes } satisfies PoolRequest);
      };
      w.on('message', (r: PoolReply) => {
        done(r.session, 'error' in r ? new Error(r.error) : r.result);
        next();
      });
      w.once('error', (err) => {
        if (current !== undefined) done(current, new Error(`the parse thread failed: ${err.message}`));
        current = undefined;
        resolve();
      });
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
