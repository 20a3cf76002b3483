/**
 * The landing thread, seen from the request thread. One thread: it lands everything queued in
 * rounds (see land-worker.ts), so what it would gain from company — overlapping fsync waits — it
 * already gets from committing a whole round at once, and every session's state stays in one
 * place. Replies are matched to calls by id.
 */
import { Worker } from 'node:worker_threads';
import type { WorkerReply, WorkerRequest } from './land-worker.js';

type Body<T> = T extends unknown ? Omit<T, 'id'> : never;


export class LandPool {
  private readonly workers: Worker[] = [];
  private readonly pending = new Map<number, { resolve: (r: WorkerReply) => void; reject: (e: Error) => void }>();
  private nextId = 1;
  private failure?: Error;

  constructor(private readonly root: string) {}

  start(): void {
    const url = new URL('./land-worker.js', import.meta.url);
    {
      const w = new Worker(url, { workerData: { root: this.root } });
      w.on('message', (r: WorkerReply) => {
        const p = this.pending.get(r.id);
        if (!p) return;
        this.pending.delete(r.id);
        p.resolve(r);
      });
      w.on('error', (err) => this.fail(err));
      w.on('exit', (code) => {
        if (code !== 0) this.fail(new Error(`a landing thread exited with code ${code}`));
      });
      this.workers.push(w);
    }
  }

  private fail(err: Error): void {
    // A landing thread that dies is a bug; every waiting request is answered as retryable.
    this.failure ??= err;
    for (const [id, p] of this.pending) {
      this.pending.delete(id);
      p.reject(err);
    }
  }

  private call(index: number, req: Body<WorkerRequest>): Promise<WorkerReply> {
    if (this.failure) return Promise.reject(this.failure);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.workers[index]!.postMessage({ ...req, id });
    });
  }

  session(session: string, req: Omit<Extract<WorkerRequest, { op: 'session' }>, 'id' | 'op' | 'session'>): Promise<WorkerReply> {
    return this.call(0, { op: 'session', session, ...req });
  }

  spool(req: Body<Extract<WorkerRequest, { op: 'spool' | 'spool-open' }>>): Promise<WorkerReply> {
    return this.call(0, req);
  }

  /** Writes every state file still pending (cursors, session.state, spool.state). */
  async flush(): Promise<void> {
    await Promise.all(this.workers.map((_, i) => this.call(i, { op: 'flush' })));
  }

  async close(): Promise<void> {
    try {
      if (!this.failure) await this.flush();
    } finally {
      await Promise.all(this.workers.map((w) => w.terminate()));
      this.workers.length = 0;
    }
  }
}
