/** The sending thread's side of read-worker.ts: one worker per pusher, started on first use. */
import { Worker } from 'node:worker_threads';
import type { BuildReply, BuildRequest } from './read-worker.js';
import type { BuiltBatch } from './batch.js';

export class BatchBuilder {
  private worker: Worker | undefined;
  private next = 0;
  private readonly pending = new Map<number, { resolve: (r: BuiltBatch) => void; reject: (e: Error) => void }>();

  build(req: Omit<BuildRequest, 'id'>): Promise<BuiltBatch> {
    const w = this.start();
    const id = ++this.next;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      w.ref(); // an answer is awaited: keep the process alive for it
      w.postMessage({ ...req, id } satisfies BuildRequest);
    });
  }

  private start(): Worker {
    if (this.worker) return this.worker;
    const w = new Worker(new URL('./read-worker.js', import.meta.url));
    w.on('message', (m: BuildReply) => {
      const p = this.pending.get(m.id);
      this.pending.delete(m.id);
      if (this.pending.size === 0) w.unref();
      if (!p) return;
      if ('error' in m) return p.reject(new Error(`building a request: ${m.error}`));
      // The transferred memory arrives as a Uint8Array: make it a Buffer again.
      const b = m.batch.body;
      if (b) m.batch.body = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
      p.resolve(m.batch);
    });
    const fail = (err: Error) => {
      for (const p of this.pending.values()) p.reject(err);
      this.pending.clear();
      if (this.worker === w) this.worker = undefined;
    };
    w.on('error', fail);
    w.on('exit', (code) => fail(new Error(`the request builder stopped (exit ${code})`)));
    // The worker keeps the process alive only while an answer is awaited.
    w.unref();
    return (this.worker = w);
  }

  close(): void {
    void this.worker?.terminate();
    this.worker = undefined;
  }
}
