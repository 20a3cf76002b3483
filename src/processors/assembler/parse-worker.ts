/**
 * The parse step on its own thread (parse-thread.ts starts it). Assembling a long session takes
 * a CPU for hundreds of milliseconds; in the service that would be time the OTLP receiver and
 * the view could not answer in, since they share the process's event loop.
 */
import { parentPort, type MessagePort } from 'node:worker_threads';
import { parseStep, type ParseStepReport } from './parse-step.js';
import type { AssemblerConfig } from './config.js';

export type ParseRequest = { op: 'parse'; id: number; root: string; cfg: AssemblerConfig; stopped: boolean; sessions?: string[] } | { op: 'stop'; id: number };
export type ParseReply = { id: number; ok: true; report: ParseStepReport } | { id: number; ok: false; message: string };

/** The thread's side of the port: runs each parse asked for, and stops one when told to. */
class ParseWorker {
  /** Ids of parses told to stop: a stop can come before its parse starts or while it runs. */
  private readonly stopping = new Set<number>();

  constructor(private readonly port: MessagePort) {
    port.on('message', (m: ParseRequest) => this.onMessage(m));
  }

  private onMessage(m: ParseRequest): void {
    if (m.op === 'stop') {
      this.stopping.add(m.id);
      return;
    }
    if (m.stopped) this.stopping.add(m.id);
    parseStep(m.root, m.cfg, () => this.stopping.has(m.id), m.sessions)
      .then(
        (report) => this.port.postMessage({ id: m.id, ok: true, report } satisfies ParseReply),
        (err: Error) => this.port.postMessage({ id: m.id, ok: false, message: err.stack ?? err.message } satisfies ParseReply),
      )
      .finally(() => this.stopping.delete(m.id));
  }
}

new ParseWorker(parentPort as MessagePort);
