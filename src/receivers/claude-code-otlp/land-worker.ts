/**
 * The landing thread: it reads the receiver's journal (journal.ts) from where landing stands and
 * turns each acknowledged request into what the storage root holds — log records and spans as
 * Session Data files in their sessions' `otlp/` directories, metrics requests as spool files —
 * then records how far it got and forgets the journal segments it no longer needs. The work is
 * landing/landing.ts's; this file wires it to the thread: this thread exists so the request
 * thread never waits on the disk.
 */
import { parentPort, receiveMessageOnPort, workerData, type MessagePort } from 'node:worker_threads';
import { lowerThreadPriority } from '../../util/thread-priority.js';
import { monotonicMs } from './land-pace.js';
import { Landing } from './landing/landing.js';
import type { LandWorkerInit, WorkerMessage, WorkerRequest } from './landing/messages.js';

export type { LandProgress, LandWorkerInit, WorkerMessage, WorkerRequest } from './landing/messages.js';

const init = workerData as LandWorkerInit;
const port = parentPort as MessagePort;

const landing = new Landing(init, {
  post: (m: WorkerMessage) => port.postMessage(m),
  nextMessage: () => receiveMessageOnPort(port)?.message as WorkerRequest | undefined,
  clock: { monotonicMs, wallMs: Date.now },
});
port.on('message', (m: WorkerRequest) => landing.onMessage(m));

/**
 * Landing yields the CPU to the request thread when both want it: answering is what a client
 * waits for, and the journal holds what is answered until it lands (bounded by max_journal_bytes).
 */
const LANDING_NICE = Number(process.env.ASZCOL_LANDING_NICE ?? 10);
const priority = LANDING_NICE > 0 ? lowerThreadPriority(LANDING_NICE) : undefined;
if (priority) landing.log('info', `the landing thread runs at normal CPU priority: ${priority}`);

landing.start();
