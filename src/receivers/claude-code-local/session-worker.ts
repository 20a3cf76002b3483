/**
 * A worker thread of the session pool: collects the groups of sessions it is handed. It answers
 * `built` once a group is collected and the batch before it is durable (so the pool can hand it
 * the next group while this one syncs), then the group's report once its batches are durable.
 */
import { parentPort, type MessagePort } from 'node:worker_threads';
import type { DiscoveredSession } from '../../adapters/claude-code/discovery.js';
import { emptyReport, type LocalCollectOptions, type PassReport } from './session-collect.js';
import { collectSessionsPipelined, SyncChain } from './collect-pipeline.js';
import type { WorkerAnswer } from './session-pool.js';
import type { CommitStep } from '../../storage/sync-batch.js';

/** The crash test's hook: a real crash of the whole process at the Nth batch of a worker, between landing and the cursor commit. */
function crashHook(): (() => void) | undefined {
  const at = Number(process.env.ASZCOL_TEST_CRASH_AFTER_LAND || 0);
  if (!(at >= 1)) return undefined;
  let batches = 0;
  return () => {
    if (++batches >= at) process.kill(process.pid, 'SIGKILL');
  };
}

/** The report with the chain's one note on how it synced, if it has one to say. */
function withNote(report: PassReport, chain: SyncChain): PassReport {
  const note = chain.takeNote();
  if (note) (report.notes ??= []).push(note);
  return report;
}

/**
 * The crash test's hook inside a whole commit: `ASZCOL_TEST_CRASH_AT_STEP=<step>:<n>` kills the
 * process the Nth time a batch of this worker passes that step (`CommitStep`).
 */
function stepHook(): ((at: CommitStep) => void) | undefined {
  const [want, nth] = (process.env.ASZCOL_TEST_CRASH_AT_STEP ?? '').split(':');
  if (!want || !(Number(nth) >= 1)) return undefined;
  let seen = 0;
  return (at) => {
    if (at === want && ++seen >= Number(nth)) process.kill(process.pid, 'SIGKILL');
  };
}

function serve(port: MessagePort): void {
  const chain = new SyncChain(stepHook());
  const afterLand = crashHook();
  port.on('message', ({ sessions, opts }: { sessions: DiscoveredSession[]; opts: LocalCollectOptions }) => {
    const report = emptyReport();
    const fail = (err: unknown) => report.errors.push({ where: opts.root, message: (err as Error).message });
    const answer = (a: WorkerAnswer) => port.postMessage(a);
    void collectSessionsPipelined(sessions, { ...opts, afterLand }, report, chain).then(
      ({ durable }) => {
        answer({ built: true });
        void durable.then(() => answer({ report: withNote(report, chain) }));
      },
      (err: unknown) => {
        fail(err);
        answer({ built: true });
        void chain.idle().then(() => answer({ report: withNote(report, chain) }));
      },
    );
  });
}

serve(parentPort!);
