/**
 * OTLP/HTTP: `POST /v1/logs`, `/v1/metrics`, `/v1/traces` with an `application/x-protobuf` or
 * `application/json` body, optionally gzip- or deflate-encoded. Success is 200 with an
 * Export…ServiceResponse in the request's format; a refusal carries a google.rpc.Status in that
 * format, and `Retry-After` when trying again later can succeed (429, 503).
 *
 * node:http rather than express: the handler is one route table and a body reader, and the
 * receiver's throughput is measured against a bare node:http server.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  CONTENT_TYPE,
  OtlpRequestError,
  bodyFormatOf,
  decodeContentEncoding,
  encodeResponse,
  encodeStatus,
  grpcCodeOf,
  httpStatusOf,
  type BodyFormat,
} from '../../otlp/codec.js';
import { HTTP_PATH, SIGNALS, type Signal } from '../../otlp/proto.js';
import type { ExportHandler, ExportResult } from './handler.js';

const SIGNAL_OF_PATH = new Map<string, Signal>(SIGNALS.map((s) => [HTTP_PATH[s], s]));

/**
 * A refused request's unread body is drained, so a client that writes everything before it reads
 * (many do) still reads the answer; the connection is cut once the body stops arriving for this long…
 */
const DRAIN_IDLE_MS = 2000;
/** …or once this much has been drained, so a client cannot hold a connection open by sending forever. */
const DRAIN_MAX_BYTES = 256 * 1024 * 1024;

function send(res: ServerResponse, format: BodyFormat, result: ExportResult, signal: Signal, close: boolean): void {
  if (res.headersSent || res.destroyed) return;
  const headers: Record<string, string | number> = { 'content-type': CONTENT_TYPE[format] };
  let status = 200;
  let body: Buffer;
  if (result.ok) {
    body = encodeResponse(signal, format, result.partial);
  } else {
    const e = result.error;
    status = httpStatusOf(e.reason);
    body = encodeStatus(format, grpcCodeOf(e.reason), e.message);
    if (e.retryAfterSeconds !== undefined && (status === 429 || status === 503)) headers['retry-after'] = e.retryAfterSeconds;
  }
  headers['content-length'] = body.length;
  if (close) headers.connection = 'close';
  res.writeHead(status, headers);
  // An empty body (the usual success) goes out with the head in one write, not a writev of two.
  if (body.length === 0) res.end();
  else res.end(body);
}

/**
 * Answers a request whose body will not be read whole: the rest of it is read and dropped while
 * the answer goes out, then the connection is closed, so a client that is still sending sees
 * the answer instead of a reset.
 */
function refuseUnread(req: IncomingMessage, res: ServerResponse, format: BodyFormat, result: ExportResult, signal: Signal): void {
  req.removeAllListeners('data');
  // Not `Connection: close`: Node would end the socket as soon as the answer is out, and a client
  // still writing its body would get EPIPE. The rest of the body is drained, which leaves the
  // connection clean to reuse, or it is cut below.
  send(res, format, result, signal, false);
  if (req.complete) return;
  // Cut only when the body stalls or passes the budget: a fixed deadline after the answer reset a
  // slow client still sending, which then saw EPIPE instead of the answer (M6).
  let drained = 0;
  const cut = () => req.socket.destroy();
  const idle = setTimeout(cut, DRAIN_IDLE_MS);
  idle.unref();
  req.on('data', (chunk: Buffer) => {
    drained += chunk.length;
    if (drained > DRAIN_MAX_BYTES) cut();
    else idle.refresh();
  });
  req.once('end', () => clearTimeout(idle));
  req.once('close', () => clearTimeout(idle));
}

export function otlpHttpHandler(h: ExportHandler, maxRequestBytes: number): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const signal = SIGNAL_OF_PATH.get(path);
    // Before the format is known, a refusal is written as JSON: readable by a person and by any client.
    if (!signal) {
      const r = h.refused(
        'http',
        undefined,
        new OtlpRequestError('not_found', `no OTLP endpoint at ${path}; use POST ${SIGNALS.map((s) => HTTP_PATH[s]).join(', ')}`),
      );
      return refuseUnread(req, res, 'json', r, 'logs');
    }
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return refuseUnread(
        req,
        res,
        'json',
        h.refused('http', signal, new OtlpRequestError('method_not_allowed', `${req.method} is not allowed on ${path}; use POST`)),
        signal,
      );
    }
    const format = bodyFormatOf(req.headers['content-type']);
    if (!format) {
      const e = new OtlpRequestError(
        'unsupported_media_type',
        `Content-Type ${JSON.stringify(req.headers['content-type'] ?? '')} is not supported; use application/x-protobuf or application/json`,
      );
      return refuseUnread(req, res, 'json', h.refused('http', signal, e), signal);
    }
    const declared = Number(req.headers['content-length'] ?? NaN);
    if (declared > maxRequestBytes) {
      const e = new OtlpRequestError('too_large', `the body is ${declared} bytes, over the limit of ${maxRequestBytes} (max_request_bytes)`);
      return refuseUnread(req, res, format, h.refused('http', signal, e), signal);
    }
    if (!h.admits(Number.isFinite(declared) ? declared : 0)) {
      const e = new OtlpRequestError('busy', 'the receiver holds as many request bodies as it may; try again shortly', 1);
      return refuseUnread(req, res, format, h.refused('http', signal, e), signal);
    }

    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    req.on('data', (c: Buffer) => {
      if (refused) return;
      size += c.length;
      if (size > maxRequestBytes) {
        refused = true;
        chunks.length = 0;
        const e = new OtlpRequestError('too_large', `the body is over the limit of ${maxRequestBytes} bytes (max_request_bytes)`);
        refuseUnread(req, res, format, h.refused('http', signal, e), signal);
        return;
      }
      chunks.push(c);
    });
    req.on('error', () => {
      /* the client went away; nothing was landed for it */
    });
    req.on('end', () => {
      if (refused) return;
      const wire = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size);
      void (async () => {
        let result: ExportResult;
        try {
          const body = await decodeContentEncoding(wire, req.headers['content-encoding'], maxRequestBytes);
          result = await h.handle(signal, 'http', wire, body, format);
        } catch (err) {
          const e = err instanceof OtlpRequestError ? err : new OtlpRequestError('internal', (err as Error).message);
          result = h.refused('http', signal, e);
        }
        send(res, format, result, signal, false);
      })();
    });
  };
}
