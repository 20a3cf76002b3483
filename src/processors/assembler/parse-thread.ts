/**
 * The assembler's thread, seen from the service: one parse step at a time, stoppable between
 * sessions. A thread that dies fails the step it was running (as a problem, not a crash) and is
 * started again for the next.
 */
import { Worker } from 'node:worker_threads';
import type { ParseStepReport } from './parse-step.js';
import type { AssemblerConfig } from './config.js';
import type { ParseReply, ParseRequest } from './parse-worker.js';

export class ParseThread {
  private worker?: Worker;
  private nextId = 1;
  private pending?: { id: number; resolve: (r: ParseReply) => void };

  private ensure(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL('./parse-worker.js', import.meta.url));
    w.on('message', (r: ParseReply) => {
      if (this.pending?.id === r.id) {
        const p = this.pending;
        this.pending = undefined;
        p.resolve(r);
      }
    });
    const gone = (why: string) => {
      if (this.worker === w) this.worker = undefined;
      const p = this.pending;
      this.pending = undefined;
      p?.resolve({ id: p.id, ok: false, message: why });
    };
    w.on('error', (err) => gone(`the parse thread failed: ${err.message}`));
    w.on('exit', (code) => gone(`the parse thread exited with code ${code}`));
    this.worker = w;
    return w;
  }

  /** Runs one parse step (over `sessions` alone when given); `signal` asks it to stop before the next session. */
  async parse(root: string, cfg: AssemblerConfig, signal?: AbortSignal, sessions?: ReadonlySet<string>): Promise<ParseStepReport> {
    if (this.pending) throw new Error('a parse step is already running');
    const w = this.ensure();
    const id = this.nextId++;
    const onAbort = () => w.postMessage({ op: 'stop', id } satisfies ParseRequest);
    const reply = await new Promise<ParseReply>((resolve) => {
      this.pending = { id, resolve };
      signal?.addEventListener('abort', onAbort, { once: true });
      w.postMessage({ op: 'parse', id, root, cfg, stopped: signal?.aborted === true, ...(sessions ? { sessions: [...sessions] } : {}) } satisfies ParseRequest);
    });
    signal?.removeEventListener('abort', onAbort);
    if (!reply.ok) return { sessions: 0, rounds: 0, busy: 0, problems: [reply.message] };
    return reply.report;
  }

  async close(): Promise<void> {
    const w = this.worker;
    this.worker = undefined;
    await w?.terminate();
  }
}
