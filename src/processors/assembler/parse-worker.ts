/**
 * The parse step on its own thread (parse-thread.ts starts it). Assembling a long session takes
 * a CPU for hundreds of milliseconds; in the service that would be time the OTLP receiver and
 * the view could not answer in, since they share the process's event loop.
 */
import { parentPort, type MessagePort } from 'node:worker_threads';
import { parseStep, type ParseStepReport } from './parse-step.js';
import type { AssemblerConfig } from './config.js';

export type ParseRequest = { op: 'parse'; id: number; root: string; cfg: AssemblerConfig; stopped: boolean } | { op: 'stop'; id: number };
export type ParseReply = { id: number; ok: true; report: ParseStepReport } | { id: number; ok: false; message: string };

const port = parentPort as MessagePort;
const stopping = new Set<number>();

port.on('message', (m: ParseRequest) => {
  if (m.op === 'stop') {
    stopping.add(m.id);
    return;
  }
  if (m.stopped) stopping.add(m.id);
  parseStep(m.root, m.cfg, () => stopping.has(m.id)).then(
    (report) => port.postMessage({ id: m.id, ok: true, report } satisfies ParseReply),
    (err: Error) => port.postMessage({ id: m.id, ok: false, message: err.stack ?? err.message } satisfies ParseReply),
  ).finally(() => stopping.delete(m.id));
});
