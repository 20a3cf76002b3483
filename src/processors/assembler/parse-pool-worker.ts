/** A thread of the CLI's parse pool (parse-pool.ts): parses each session it is handed, one at a time, and answers with the result or the error. */
import { parentPort } from 'node:worker_threads';
import { parseOne } from './parse-all.js';
import type { PoolReply, PoolRequest } from './parse-pool.js';

parentPort!.on('message', (m: PoolRequest) => {
  parseOne(m.root, m.session, m.maxRoundBytes).then(
    (result) => parentPort!.postMessage({ session: m.session, result } satisfies PoolReply),
    (err: Error) => parentPort!.postMessage({ session: m.session, error: err.message } satisfies PoolReply),
  );
});
