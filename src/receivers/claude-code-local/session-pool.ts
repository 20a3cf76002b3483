import { Worker } from 'node:worker_threads';
import { availableParallelism } from 'node:os';
import type { DiscoveredSession } from '../../adapters/claude-code/discovery.js';
import type { LocalCollectOptions, PassReport } from './session-collect.js';

type Job = { sessions: DiscoveredSession[]; opts: LocalCollectOptions };

/** What a worker answers: a group collected (hand it the next), then that group's report once it is durable. */
export type WorkerAnswer = { built: true } | { report: PassReport };

/** Sessions handed to a worker at once: enough for its sync batches to fill, few enough that the workers finish together. */
const GROUP = 12;

/**
 * Each worker's young generation, in MB. V8 lets it grow to 48 MB per thread by default; collection's garbage is
 * short-lived (a line's objects), so a smaller one took no longer and kept two workers' peak RSS 25-50 MB lower.
 */
const YOUNG_GENERATION_MB = 16;

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
 * batched together, a group's batch syncing while the next group is collected). A session never splits across threads: its lock and its sequence counter
 * belong to one collector.
 */
export class SessionPool {
  private readonly workers: Worker[] = [];

  constructor(readonly size: number) {}

  private spawn(): Worker {
    const w = new Worker(new URL('./session-worker.js', import.meta.url), { resourceLimits: { maxYoungGenerationSizeMb: YOUNG_GENERATION_MB } });
    w.unref();
    return w;
  }

  async run(sessions: DiscoveredSession[], opts: LocalCollectOptions): Promise<PassReport[]> {
    const queue = [...sessions].sort((a, b) => weight(b) - weight(a));
    const results: PassReport[] = [];
    while (this.workers.length < Math.min(this.size, queue.length)) this.workers.push(this.spawn());
    // A worker is handed its next group once the last one is built, and owes a report for each group it was handed.
    const drive = (w: Worker) =>
      new Promise<void>((resolve, reject) => {
        let owed = 0;
        let drained = false;
        const settleIfDone = () => {
          if (!drained || owed > 0) return;
          w.off('message', onMessage);
          w.off('error', reject);
          resolve();
        };
        const next = () => {
          const sessions = queue.splice(0, GROUP);
          if (sessions.length === 0) {
            drained = true;
            return settleIfDone();
          }
          owed++;
          w.postMessage({ sessions, opts } satisfies Job);
        };
        const onMessage = (a: WorkerAnswer) => {
          if ('built' in a) return next();
          results.push(a.report);
          owed--;
          settleIfDone();
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
