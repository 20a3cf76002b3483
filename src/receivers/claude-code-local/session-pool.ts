import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { DiscoveredSession } from '../../adapters/claude-code/discovery.js';
import type { LocalCollectOptions, PassReport } from './session-collect.js';

type Job = { sessions: DiscoveredSession[]; opts: LocalCollectOptions };

/** Sessions handed to a worker at once: enough for its sync batches to fill, few enough that the workers finish together. */
const GROUP = 12;

/** The default worker count: one per core, at most four (collection is mostly parse and hash). */
export function defaultWorkers(): number {
  return Math.max(1, Math.min(4, availableParallelism()));
}

/** Estimated work in a session, so the largest start first and the workers finish together. */
function weight(s: DiscoveredSession): number {
  return s.sources.length;
}

/**
 * A small pool of worker threads, each collecting a group of whole sessions at a time (their syncs
 * batched together). A session never splits across threads: its lock and its sequence counter
 * belong to one collector.
 */
export class SessionPool {
  private readonly workers: Worker[] = [];

  constructor(readonly size: number) {}

  private spawn(): Worker {
    const w = new Worker(new URL('./session-worker.js', import.meta.url));
    w.unref();
    return w;
  }

  async run(sessions: DiscoveredSession[], opts: LocalCollectOptions): Promise<PassReport[]> {
    const queue = [...sessions].sort((a, b) => weight(b) - weight(a));
    const results: PassReport[] = [];
    while (this.workers.length < Math.min(this.size, queue.length)) this.workers.push(this.spawn());
    const drive = (w: Worker) =>
      new Promise<void>((resolve, reject) => {
        const next = () => {
          const sessions = queue.splice(0, GROUP);
          if (sessions.length === 0) {
            w.off('message', onMessage);
            w.off('error', reject);
            resolve();
            return;
          }
          w.postMessage({ sessions, opts } satisfies Job);
        };
        const onMessage = (r: PassReport) => {
          results.push(r);
          next();
        };
        w.on('message', onMessage);
        w.once('error', reject);
        next();
      });
    await Promise.all(this.workers.slice(0, Math.max(1, Math.min(this.size, sessions.length))).map(drive));
    return results;
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.splice(0).map((w) => w.terminate()));
  }
}
