/** A worker thread of the session pool: collects the sessions it is handed, one at a time. */
import { parentPort } from 'node:worker_threads';
import type { DiscoveredSession } from '../../adapters/claude-code/discovery.js';
import { collectSession, emptyReport, type LocalCollectOptions } from './session-collect.js';

parentPort!.on('message', ({ session, opts }: { session: DiscoveredSession; opts: LocalCollectOptions }) => {
  const report = emptyReport();
  // The crash test's hook: a real crash of the whole process, between landing and the cursor commit.
  const afterLand = process.env.ASZCOL_TEST_CRASH_AFTER_LAND ? () => process.kill(process.pid, 'SIGKILL') : undefined;
  collectSession(session, { ...opts, afterLand }, report);
  parentPort!.postMessage(report);
});
