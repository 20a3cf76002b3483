/**
 * OTLP/gRPC: one @grpc/grpc-js client, so one HTTP/2 connection for the whole run, and every
 * request of a pass one unary `Export` call on it. Messages go as the bytes the pusher built
 * (identity serializers); `headers` travel as metadata.
 */
import * as grpc from '@grpc/grpc-js';
import { GRPC_SERVICE } from '../../otlp/proto.js';
import type { OtlpExporterConfig } from './config.js';
import { grpcRetryDelayMs, readResponse, type ExportSignal, type Outcome, type Transport } from './transport.js';

const identity = (b: Buffer) => b;
const S = grpc.status;

/** Codes after which no further request of the pass can succeed either. */
const STOP = new Set<number>([
  S.CANCELLED,
  S.UNKNOWN,
  S.ABORTED,
  S.OUT_OF_RANGE,
  S.UNAVAILABLE,
  S.DATA_LOSS,
  S.INTERNAL,
  S.UNAUTHENTICATED,
  S.PERMISSION_DENIED,
  S.UNIMPLEMENTED,
  S.NOT_FOUND,
]);

export class GrpcTransport implements Transport {
  private client: grpc.Client | undefined;
  private readonly target: string;

  constructor(
    private readonly cfg: OtlpExporterConfig,
    readonly endpoint: string,
  ) {
    const e = cfg.grpc!;
    this.target = `${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}`;
  }

  private open(): grpc.Client {
    if (this.client) return this.client;
    const creds = this.cfg.tls ? grpc.credentials.createSsl(this.cfg.ca ?? null) : grpc.credentials.createInsecure();
    const options: grpc.ClientOptions = {
      // The receiver's limit is what counts; ours must not refuse a large file first.
      'grpc.max_send_message_length': -1,
      'grpc.max_receive_message_length': 16 * 1024 * 1024,
      // One connection per exporter: do not share a subchannel with another client of the process.
      'grpc.use_local_subchannel_pool': 1,
    };
    if (this.cfg.compression === 'gzip') options['grpc.default_compression_algorithm'] = 2;
    return (this.client = new grpc.Client(this.target, creds, options));
  }

  send(signal: ExportSignal, body: Buffer, abort?: AbortSignal): Promise<Outcome> {
    const client = this.open();
    const md = new grpc.Metadata();
    for (const [k, v] of Object.entries(this.cfg.headers)) md.set(k, v);
    const where = `${this.endpoint} ${GRPC_SERVICE[signal]}/Export`;
    return new Promise<Outcome>((resolve) => {
      const call = client.makeUnaryRequest<Buffer, Buffer>(
        `/${GRPC_SERVICE[signal]}/Export`,
        identity,
        identity,
        body,
        md,
        { deadline: Date.now() + this.cfg.timeoutMs },
        (err, value) => {
          abort?.removeEventListener('abort', onAbort);
          if (!err) return resolve(readResponse(signal, value, where));
          resolve(this.outcomeOf(err, where));
        },
      );
      const onAbort = () => call.cancel();
      abort?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private outcomeOf(err: grpc.ServiceError, where: string): Outcome {
    const text = `${where} answered ${S[err.code] ?? err.code}: ${err.details || err.message}`;
    if (err.code === S.RESOURCE_EXHAUSTED) {
      // The receiver's message size limit is reported with this code too; that is no request to slow down.
      if (/larger than max|message too large|exceeds/i.test(err.details ?? ''))
        return { ok: false, kind: 'too_large', message: `${text}; the receiver's message size limit is below this request (see batch_bytes)` };
      const d = err.metadata?.get('grpc-status-details-bin')[0];
      return { ok: false, kind: 'throttled', message: text, retryAfterMs: grpcRetryDelayMs(Buffer.isBuffer(d) ? d : undefined) };
    }
    if (err.code === S.DEADLINE_EXCEEDED) return { ok: false, kind: 'timeout', message: `${where}: no answer within ${this.cfg.timeoutMs} ms (timeout)` };
    if (STOP.has(err.code)) return { ok: false, kind: 'unavailable', message: text };
    return { ok: false, kind: 'refused', message: text };
  }

  close(): void {
    this.client?.close();
    this.client = undefined;
  }
}
