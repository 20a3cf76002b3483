/**
 * The transport-neutral part of OTLP: which body formats and encodings a request may have,
 * turning a body into checked protobuf bytes, and encoding responses and error statuses.
 * Shared by the receiver (decode) and the exporter (encode).
 */
import { gunzip, inflate, gzip, type InputType } from 'node:zlib';
import { promisify } from 'node:util';
import { otlpTypes, requestType, responseType, type Signal, type Type } from './proto.js';
import { jsonBodyText, otlpJsonToProtobuf, OtlpJsonError, toOtlpJson } from './json.js';
import { validateMessage, WireError } from './wire.js';
import { lazy } from '../util/lazy.js';

export type BodyFormat = 'protobuf' | 'json';

/** Why a request was refused; these are also the `reason` label of the refusal counters. */
export type RefusalReason =
  | 'bad_protobuf'
  | 'bad_json'
  | 'bad_encoding'
  | 'too_large'
  | 'unsupported_media_type'
  | 'spool_full'
  /** The receiver's journal holds as much not yet landed as it may (`max_journal_bytes`). */
  | 'backlog_full'
  | 'busy'
  | 'shutting_down'
  | 'storage_error'
  | 'internal'
  | 'not_found'
  | 'method_not_allowed';

/** A request that cannot be accepted, with the reason a client is told. */
export class OtlpRequestError extends Error {
  constructor(
    readonly reason: RefusalReason,
    message: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'OtlpRequestError';
  }
}

export const CONTENT_TYPE: Record<BodyFormat, string> = { protobuf: 'application/x-protobuf', json: 'application/json' };

/** `application/x-protobuf` or `application/json` (parameters such as charset ignored), else undefined. */
export function bodyFormatOf(contentType: string | undefined): BodyFormat | undefined {
  const media = (contentType ?? '').split(';')[0]!.trim().toLowerCase();
  if (media === 'application/x-protobuf' || media === 'application/protobuf') return 'protobuf';
  if (media === 'application/json') return 'json';
  return undefined;
}

const gunzipAsync = promisify(gunzip) as (buf: InputType, opts: object) => Promise<Buffer>;
const inflateAsync = promisify(inflate) as (buf: InputType, opts: object) => Promise<Buffer>;
const gzipAsync = promisify(gzip) as (buf: InputType) => Promise<Buffer>;

/**
 * Undoes a Content-Encoding (gzip, deflate, identity), never producing more than `maxBytes`:
 * a small compressed body that inflates past the limit is refused as too large, not inflated.
 */
export async function decodeContentEncoding(body: Buffer, encoding: string | undefined, maxBytes: number): Promise<Buffer> {
  const enc = (encoding ?? '').trim().toLowerCase();
  if (enc === '' || enc === 'identity') return body;
  if (enc !== 'gzip' && enc !== 'x-gzip' && enc !== 'deflate') {
    throw new OtlpRequestError('unsupported_media_type', `Content-Encoding ${JSON.stringify(encoding)} is not supported; use gzip, deflate or none`);
  }
  try {
    return await (enc === 'deflate' ? inflateAsync : gunzipAsync)(body, { maxOutputLength: maxBytes });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ERR_BUFFER_TOO_LARGE' || err instanceof RangeError) {
      throw new OtlpRequestError('too_large', `the ${enc} body inflates past the limit of ${maxBytes} bytes`);
    }
    throw new OtlpRequestError('bad_encoding', `the body is not valid ${enc}: ${(err as Error).message}`);
  }
}

export const gzipBody = (b: Uint8Array): Promise<Buffer> => gzipAsync(b);

/** A request body turned into checked protobuf bytes, with how many items it carries. */
export interface CheckedRequest {
  bytes: Buffer;
  /** Log records, metric data points or spans. */
  items: number;
}

/**
 * A request body → checked protobuf bytes of the signal's request message. JSON is converted
 * to protobuf here, so everything after this point (the spool, the landed records' bytes) has
 * one format. One strict walk over the bytes checks them and counts the items. Throws
 * OtlpRequestError `bad_json` or `bad_protobuf` naming the exact place.
 */
export function checkedRequest(signal: Signal, body: Buffer, format: BodyFormat): CheckedRequest {
  const type = requestType(signal);
  let bytes: Buffer;
  if (format === 'json') {
    let json: unknown;
    let text: string;
    try {
      text = jsonBodyText(body);
    } catch (err) {
      if (err instanceof OtlpJsonError) throw new OtlpRequestError('bad_json', `the body is ${err.message.replace(/^\(request\): /, '')}`);
      throw err;
    }
    try {
      json = JSON.parse(text);
    } catch (err) {
      throw new OtlpRequestError('bad_json', `the body is not JSON: ${(err as Error).message}`);
    }
    try {
      const pb = otlpJsonToProtobuf(type, json);
      bytes = Buffer.from(pb.buffer, pb.byteOffset, pb.byteLength);
    } catch (err) {
      if (err instanceof OtlpJsonError) throw new OtlpRequestError('bad_json', `not an OTLP ${signal} request: ${err.message}`);
      throw err;
    }
  } else {
    bytes = body;
  }
  try {
    const counts = validateMessage(bytes, type, itemTypes(signal), 0, bytes.length, { envelope: true }).counts;
    return { bytes, items: counts.reduce((a, b) => a + b, 0) };
  } catch (err) {
    if (err instanceof WireError) throw new OtlpRequestError('bad_protobuf', `not an OTLP ${signal} request: ${err.message}`);
    throw err;
  }
}

/** The message types that are one item of each signal: a log record, a span, any kind of metric data point. */
const itemTypesBySignal: () => Record<Signal, Type[]> = lazy(() => {
  const t = otlpTypes();
  const root = t.LogRecord.root;
  return {
    logs: [t.LogRecord],
    traces: [t.Span],
    metrics: ['NumberDataPoint', 'HistogramDataPoint', 'ExponentialHistogramDataPoint', 'SummaryDataPoint'].map((n) =>
      root.lookupType(`opentelemetry.proto.metrics.v1.${n}`),
    ),
  };
});

function itemTypes(signal: Signal): Type[] {
  return itemTypesBySignal()[signal];
}

export interface PartialSuccess {
  rejected: number;
  message: string;
}

const REJECTED_FIELD: Record<Signal, string> = { logs: 'rejectedLogRecords', metrics: 'rejectedDataPoints', traces: 'rejectedSpans' };

/** An Export…ServiceResponse: empty on full success, with `partial_success` when items were refused. */
export function encodeResponse(signal: Signal, format: BodyFormat, partial?: PartialSuccess): Buffer {
  const type = responseType(signal);
  const msg = partial && partial.rejected > 0 ? { partialSuccess: { [REJECTED_FIELD[signal]]: partial.rejected, errorMessage: partial.message } } : {};
  if (format === 'json') return Buffer.from(JSON.stringify(toOtlpJson(type, type.fromObject(msg))));
  const pb = type.encode(type.fromObject(msg)).finish();
  return Buffer.from(pb.buffer, pb.byteOffset, pb.byteLength);
}

/** gRPC status codes the receiver uses. */
export const GRPC = { OK: 0, INVALID_ARGUMENT: 3, NOT_FOUND: 5, RESOURCE_EXHAUSTED: 8, INTERNAL: 13, UNAVAILABLE: 14, UNIMPLEMENTED: 12 } as const;

/**
 * A google.rpc.Status for an error response. With `retryAfterSeconds` it carries a RetryInfo
 * detail: OTLP clients treat RESOURCE_EXHAUSTED as retryable only when that detail is present.
 */
export function encodeStatus(format: BodyFormat, code: number, message: string, retryAfterSeconds?: number): Buffer {
  const t = otlpTypes();
  const details = [];
  if (retryAfterSeconds !== undefined) {
    const info = t.RetryInfo.encode(t.RetryInfo.fromObject({ retryDelay: { seconds: retryAfterSeconds } })).finish();
    // protobufjs's bundled google.protobuf.Any keeps its original field name, type_url.
    details.push({ type_url: 'type.googleapis.com/google.rpc.RetryInfo', value: info });
  }
  const status = t.Status.fromObject({ code, message, details });
  if (format === 'json') {
    // The JSON mapping of Any embeds the detail's fields beside "@type".
    const json: Record<string, unknown> = { code, message };
    if (retryAfterSeconds !== undefined) json.details = [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryAfterSeconds}s` }];
    return Buffer.from(JSON.stringify(json));
  }
  const pb = t.Status.encode(status).finish();
  return Buffer.from(pb.buffer, pb.byteOffset, pb.byteLength);
}

/** The gRPC code a refusal maps to. */
export function grpcCodeOf(reason: RefusalReason): number {
  switch (reason) {
    case 'bad_protobuf':
    case 'bad_json':
    case 'bad_encoding':
    case 'unsupported_media_type':
      return GRPC.INVALID_ARGUMENT;
    case 'too_large':
    case 'spool_full':
    case 'backlog_full':
      return GRPC.RESOURCE_EXHAUSTED;
    case 'not_found':
    case 'method_not_allowed':
      return GRPC.UNIMPLEMENTED;
    case 'internal':
      return GRPC.INTERNAL;
    default:
      return GRPC.UNAVAILABLE;
  }
}

/** The HTTP status a refusal maps to (OTLP/HTTP: 400 is final; 429, 502, 503, 504 are retried). */
export function httpStatusOf(reason: RefusalReason): number {
  switch (reason) {
    case 'bad_protobuf':
    case 'bad_json':
    case 'bad_encoding':
      return 400;
    case 'too_large':
      return 413;
    case 'unsupported_media_type':
      return 415;
    case 'spool_full':
    case 'backlog_full':
      return 429;
    case 'not_found':
      return 404;
    case 'method_not_allowed':
      return 405;
    case 'internal':
      return 500;
    default:
      return 503;
  }
}
