/** A worker thread of the session pool: collects the groups of sessions it is handed, one group at a time. */
import { parentPort } from 'node:worker_threads';
import type { DiscoveredSession } from '../../adapters/claude-code/discovery.js';
import { collectSessions, emptyReport, type LocalCollectOptions } from './session-collect.js';

parentPort!.on('message', ({ sessions, opts }: { sessions: DiscoveredSession[]; opts: LocalCollectOptions }) => {
  const report = emptyReport();
  // The crash test's hook: a real crash of the whole process, between landing and the cursor commit.
  const afterLand = process.env.ASZCOL_TEST_CRASH_AFTER_LAND ? () => process.kill(process.pid, 'SIGKILL') : undefined;
  void collectSessions(sessions, { ...opts, afterLand }, report).then(
    () => parentPort!.postMessage(report),
    (err: unknown) => {
      report.errors.push({ where: opts.root, message: (err as Error).message });
      parentPort!.postMessage(report);
    },
  );
});
