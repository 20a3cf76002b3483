/** A thread of the CLI's parse pool (parse-pool.ts): parses each group of sessions it is handed (parse-group.ts) and answers with each one's result or error. */
import { parentPort } from 'node:worker_threads';
import { parseGroup } from './parse-group.js';
import type { PoolReply, PoolRequest } from './parse-pool.js';

parentPort!.on('message', (m: PoolRequest) => {
  parseGroup(m.root, m.sessions, m.maxRoundBytes, { usageCache: m.usageCache }).then(
    (parsed) => parentPort!.postMessage(parsed.map((p) => ('error' in p ? { session: p.session, error: p.error.message } : p)) satisfies PoolReply),
    (err: Error) => parentPort!.postMessage(m.sessions.map((session) => ({ session, error: err.message })) satisfies PoolReply),
  );
});
