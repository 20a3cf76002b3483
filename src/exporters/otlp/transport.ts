/**
 * What a transport answers for one export request. Only `ok` lets the pusher record the
 * request's files as sent (a partial success is `ok` with what was rejected); every other outcome
 * leaves them for the next pass.
 */
import { otlpTypes, responseType, type Signal } from '../../otlp/proto.js';
import { toBigInt, type LongLike } from '../../otlp/values.js';

export type ExportSignal = Extract<Signal, 'logs' | 'metrics'>;

/** What a receiver said it rejected in a request it took (an OTLP partial success). */
export interface PartialRejection {
  /** Log records or data points rejected; the receiver does not say which. */
  items: number;
  /** The receiver's words, with the count. */
  message: string;
}

export type Outcome =
  | {
      ok: true;
      /** A warning the receiver sent with a full success. */
      warning?: string;
      /** A partial success: the request is taken (OTLP says not to send it again) with some items rejected. */
      rejected?: PartialRejection;
    }
  | {
      ok: false;
      /**
       * `throttled`: 429 / RESOURCE_EXHAUSTED, the receiver asks us to slow down (the pass stops).
       * `unavailable`: the receiver could not be reached, dropped the connection, or is down for now (the pass stops).
       * `timeout`: no answer within `timeout` (the pass stops).
       * `refused`: the receiver answered with an error about this request (the pass goes on with the next one).
       * `too_large`: the request is over the receiver's size limit (413, or gRPC's message size error); smaller requests may pass.
       */
      kind: 'throttled' | 'unavailable' | 'timeout' | 'refused' | 'too_large';
      message: string;
      retryAfterMs?: number;
    };

/** Whether an outcome ends the pass: the receiver is not taking requests now. */
export const stopsPass = (o: Outcome): boolean => !o.ok && (o.kind === 'throttled' || o.kind === 'unavailable' || o.kind === 'timeout');

export interface Transport {
  /** The receiver's name in push.state and in messages. */
  readonly endpoint: string;
  send(signal: ExportSignal, body: Buffer, abort?: AbortSignal): Promise<Outcome>;
  close(): void;
}

const REJECTED: Record<ExportSignal, string> = { logs: 'rejectedLogRecords', metrics: 'rejectedDataPoints' };
const ITEMS: Record<ExportSignal, string> = { logs: 'log records', metrics: 'data points' };

/**
 * Reads an Export…ServiceResponse. A partial success with rejected items is a taken request, as
 * OTLP and asz 0.6 define it: the receiver kept what it could and asks not to be sent it again.
 */
export function readResponse(signal: ExportSignal, body: Uint8Array | undefined, where: string): Outcome {
  if (!body || body.length === 0) return { ok: true };
  let msg: { partialSuccess?: Record<string, unknown> };
  try {
    msg = responseType(signal).decode(body) as unknown as { partialSuccess?: Record<string, unknown> };
  } catch (err) {
    return {
      ok: false,
      kind: 'refused',
      message: `${where} answered with a body that is not an OTLP ${signal} response (${(err as Error).message}); nothing is recorded as sent`,
    };
  }
  const ps = msg.partialSuccess;
  if (!ps) return { ok: true };
  const rejected = toBigInt(ps[REJECTED[signal]] as number | LongLike | undefined);
  const text = typeof ps.errorMessage === 'string' ? ps.errorMessage : '';
  if (rejected > 0n) {
    const items = Number(rejected > BigInt(Number.MAX_SAFE_INTEGER) ? BigInt(Number.MAX_SAFE_INTEGER) : rejected);
    return {
      ok: true,
      rejected: { items, message: `${where} rejected ${rejected} of the request's ${ITEMS[signal]}${text ? `: ${text}` : ' (no reason given)'}` },
    };
  }
  return text ? { ok: true, warning: text } : { ok: true };
}

/** A Retry-After header: seconds, or an HTTP date. */
export function retryAfterMs(value: string | string[] | undefined, now = Date.now()): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  if (/^\s*\d+\s*$/.test(v)) return Number(v) * 1000;
  const at = Date.parse(v);
  return Number.isFinite(at) ? Math.max(0, at - now) : undefined;
}

/** The RetryInfo delay in a gRPC status's details (`grpc-status-details-bin`), if any. */
export function grpcRetryDelayMs(details: Buffer | undefined): number | undefined {
  if (!details || details.length === 0) return undefined;
  try {
    const t = otlpTypes();
    const status = t.Status.decode(details) as unknown as { details?: { type_url?: string; typeUrl?: string; value?: Uint8Array }[] };
    for (const d of status.details ?? []) {
      // protobufjs's google.protobuf.Any keeps the field name `type_url`. A detail without one
      // (some encoders drop it) is still read when it decodes as a RetryInfo with a delay.
      const url = d.type_url || d.typeUrl || '';
      if ((url && !url.endsWith('google.rpc.RetryInfo')) || !d.value) continue;
      const info = t.RetryInfo.decode(d.value) as unknown as { retryDelay?: { seconds?: number | LongLike; nanos?: number } };
      if (!info.retryDelay) continue;
      const sec = Number(toBigInt(info.retryDelay?.seconds));
      return sec * 1000 + Math.round((info.retryDelay?.nanos ?? 0) / 1e6);
    }
  } catch {
    /* details we cannot read: no delay */
  }
  return undefined;
}
