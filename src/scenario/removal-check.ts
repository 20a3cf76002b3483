/**
 * The `removed_after_sent` property: a finished `claude-code` root, copied whole, must keep its
 * session before a push and lose all of it after a clean one (removal-worker.ts does the pushing,
 * on its own thread, since the checker is synchronous).
 */
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { RemovalCheckAnswer } from './removal-worker.js';

/** The shape of properties.ts's Violation, written out here so the two modules do not import each other. */
interface Violation {
  where: string;
  expected: unknown;
  got: unknown;
}

const TIMEOUT_MS = 120_000;

export function removedAfterSent(root: string, session: string): Violation[] {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(new URL('./removal-worker.js', import.meta.url), { workerData: { root, session, flag, port: port2 }, transferList: [port2] });
  try {
    const waited = Atomics.wait(flag, 0, 0, TIMEOUT_MS);
    const msg = receiveMessageOnPort(port1)?.message as RemovalCheckAnswer | undefined;
    if (waited === 'timed-out' || !msg) return [{ where: 'removed_after_sent', expected: 'a push and a removal within 120 s', got: 'no answer' }];
    if (msg.error) return [{ where: 'removed_after_sent', expected: 'a push and a removal', got: msg.error }];
    return msg.problems.map((p) => ({ where: 'removed_after_sent', expected: 'kept before a push, wholly removed after a clean one', got: p }));
  } finally {
    port1.close();
    void worker.terminate();
  }
}
