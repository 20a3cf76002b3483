/**
 * The reader's thread: reading, checking, describing and encoding the next logs request happens
 * here. Its bytes, SHA-256 and attributes cost about as much CPU as sending them, and on the
 * sending thread that work would hold up the request on the wire (its socket is served by the
 * same event loop). The request's memory is handed over without a copy.
 */
import { parentPort } from 'node:worker_threads';
import { buildLogsBatch, SessionFacts, type BatchFile, type BuiltBatch } from './batch.js';
import type { Identity } from '../../otlp/identity.js';
import type { WithholdCategory } from '../../formats/view/withhold.js';

export interface BuildRequest {
  id: number;
  root: string;
  /** A new pass starts with new facts about its sessions. */
  pass: number;
  identity: Identity;
  observedNs: bigint;
  files: BatchFile[];
  /** What the exporter withholds from landed files (withhold-file.ts). */
  hide: WithholdCategory[];
}

export type BuildReply = { id: number; batch: BuiltBatch } | { id: number; error: string };

/** A buffer that owns all of its memory (never a slice of the shared pool), so it can be transferred. */
function owned(b: Buffer): Buffer {
  if (b.byteOffset === 0 && b.buffer.byteLength === b.length) return b;
  const c = Buffer.allocUnsafeSlow(b.length);
  b.copy(c);
  return c;
}

if (parentPort) {
  const port = parentPort;
  let facts: { key: string; facts: SessionFacts } | undefined;
  port.on('message', (req: BuildRequest) => {
    try {
      const key = `${req.pass}\u0000${req.root}`;
      if (facts?.key !== key) facts = { key, facts: new SessionFacts(req.root) };
      const batch = buildLogsBatch(req.files, req.identity, facts.facts, req.observedNs, req.hide);
      if (batch.body) batch.body = owned(batch.body);
      port.postMessage({ id: req.id, batch } satisfies BuildReply, batch.body ? [batch.body.buffer as ArrayBuffer] : []);
    } catch (err) {
      port.postMessage({ id: req.id, error: (err as Error).stack ?? String(err) } satisfies BuildReply);
    }
  });
}
