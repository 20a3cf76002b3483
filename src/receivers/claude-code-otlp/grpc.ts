/**
 * OTLP/gRPC: the LogsService, MetricsService and TraceService `Export` methods on one
 * @grpc/grpc-js server. Messages are handed over as raw bytes (identity serializers): the
 * receiver checks and lands the bytes itself, so a request is never decoded twice and the spool
 * gets exactly what came over the wire. A refusal is a gRPC status with a message; a retryable
 * RESOURCE_EXHAUSTED carries a google.rpc.RetryInfo in `grpc-status-details-bin`, which is what
 * tells an OTLP client it may retry.
 */
import * as grpc from '@grpc/grpc-js';
import { OtlpRequestError, encodeResponse, encodeStatus, grpcCodeOf } from '../../otlp/codec.js';
import { GRPC_SERVICE, SIGNALS, type Signal } from '../../otlp/proto.js';
import type { ExportHandler, ExportResult } from './handler.js';

const identity = (b: Buffer) => b;

function serviceDefinition(signal: Signal): grpc.ServiceDefinition {
  return {
    Export: {
      path: `/${GRPC_SERVICE[signal]}/Export`,
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
      originalName: 'export',
    } as grpc.MethodDefinition<Buffer, Buffer>,
  };
}

function toServiceError(result: Extract<ExportResult, { ok: false }>): Partial<grpc.StatusObject> {
  const e = result.error;
  const code = grpcCodeOf(e.reason);
  const metadata = new grpc.Metadata();
  if (e.retryAfterSeconds !== undefined) metadata.set('grpc-status-details-bin', encodeStatus('protobuf', code, e.message, e.retryAfterSeconds));
  return { code, details: e.message, metadata };
}

/**
 * The server, with its message size limit at twice max_request_bytes: requests between the two
 * reach the receiver and are refused and counted there as too large; beyond that, gRPC itself
 * refuses them (RESOURCE_EXHAUSTED) before they are read, without reaching the counters.
 */
export function otlpGrpcServer(h: ExportHandler, maxRequestBytes: number): grpc.Server {
  const server = new grpc.Server({
    'grpc.max_receive_message_length': Math.min(2 * maxRequestBytes, 0x7fffffff),
    'grpc.max_send_message_length': 4 * 1024 * 1024,
  });
  for (const signal of SIGNALS) {
    server.addService(serviceDefinition(signal), {
      Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => {
        const bytes = call.request;
        const done = (result: ExportResult) => {
          if (result.ok) callback(null, encodeResponse(signal, 'protobuf', result.partial));
          else callback(toServiceError(result));
        };
        if (bytes.length > maxRequestBytes) {
          const e = new OtlpRequestError('too_large', `the message is ${bytes.length} bytes, over the limit of ${maxRequestBytes} (max_request_bytes)`);
          return done(h.refused('grpc', signal, e));
        }
        h.handle(signal, 'grpc', bytes, bytes, 'protobuf').then(done, (err: Error) =>
          done(h.refused('grpc', signal, new OtlpRequestError('internal', err.message))),
        );
      },
    });
  }
  return server;
}
