/**
 * The scenario checker's `push: {kinds: [...]}`: push a built root to a receiver of its own over
 * both transports and check that the records carry every listed kind. The checker is synchronous,
 * so the push runs on a worker thread and this waits for its answer.
 */
import { MessageChannel, receiveMessageOnPort, Worker } from 'node:worker_threads';
import type { TransportResult } from './push-worker.js';

export interface PushKindsFailure {
  where: string;
  expected: unknown;
  got: unknown;
}

const TIMEOUT_MS = 120_000;

/**
 * Runs the push worker over `root` and waits for its answer, or says why there is none: `logs` pushes
 * the landed files and rounds; `metrics` derives the session's metrics into the root first and
 * pushes them too; `derive` only derives.
 */
export function pushOnWorker(root: string, what: 'logs' | 'metrics' | 'derive'): { results: TransportResult[] } | { failure: PushKindsFailure } {
  const metrics = what === 'metrics';
  const deriveOnly = what === 'derive';
  const flag = new Int32Array(new SharedArrayBuffer(4));
  const { port1, port2 } = new MessageChannel();
  const worker = new Worker(new URL('./push-worker.js', import.meta.url), {
    workerData: { root, flag, port: port2, metrics, deriveOnly },
    transferList: [port2],
  });
  try {
    const waited = Atomics.wait(flag, 0, 0, TIMEOUT_MS);
    const msg = receiveMessageOnPort(port1)?.message as { results: TransportResult[]; error?: string } | undefined;
    if (waited === 'timed-out' || !msg) return { failure: { where: 'push', expected: 'a push within 120 s', got: 'no answer from the push' } };
    if (msg.error) return { failure: { where: 'push', expected: 'a push', got: msg.error } };
    return { results: msg.results };
  } finally {
    port1.close();
    void worker.terminate();
  }
}

/** Pushes `root` over gRPC and HTTP; returns what does not match (empty when every kind arrived both ways). */
export function checkPushKinds(root: string, kinds: readonly string[]): PushKindsFailure[] {
  const pushed = pushOnWorker(root, 'logs');
  if ('failure' in pushed) return [pushed.failure];
  const failures: PushKindsFailure[] = [];
  for (const r of pushed.results) {
    const missing = kinds.filter((k) => !r.kinds.includes(k));
    if (missing.length) failures.push({ where: `push over ${r.protocol}: kinds`, expected: [...kinds], got: r.kinds });
    for (const p of r.problems) failures.push({ where: `push over ${r.protocol}`, expected: 'records as the contract says', got: p });
  }
  return failures;
}

/** An expectation's `push:` value: `{kinds: [...]}`, nothing else. Throws naming the file. */
export function pushKinds(file: string, raw: unknown): string[] {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error(`${file}: push: must be a mapping such as {kinds: [transcript, round]}`);
  for (const k of Object.keys(raw)) if (k !== 'kinds') throw new Error(`${file}: push: unknown key "${k}" (allowed: kinds)`);
  const kinds = (raw as { kinds?: unknown }).kinds;
  if (!Array.isArray(kinds) || kinds.length === 0 || !kinds.every((k) => typeof k === 'string' && k))
    throw new Error(`${file}: push.kinds: must be a non-empty list of kinds`);
  return kinds as string[];
}
