import { afterAll, beforeAll } from '@jest/globals';
/**
 * An OTLP receiver for the exporter's tests, independent of the exporter's code: @grpc/grpc-js
 * serving the LogsService and MetricsService that @grpc/proto-loader loads from proto/, and an
 * HTTP server taking POST /v1/logs and /v1/metrics with the same message types. Every request is
 * kept with what it decoded to. Faults are queued per request: refuse, throttle (429 with
 * Retry-After, RESOURCE_EXHAUSTED with RetryInfo), partial success, hang (no answer), slow (a
 * success after a delay), an error status of the test's choosing, and drop (a TCP proxy in front
 * cuts the connection in the middle of the request's bytes). A request size limit, like the OAP's
 * 10 MiB on its HTTP port, answers 413 (RESOURCE_EXHAUSTED over gRPC) to every larger request.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, connect, type Server as NetServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import protobuf from 'protobufjs';
import { REPO } from '../helpers/cli.js';

export type Fault =
  | { kind: 'refuse' }
  | { kind: 'throttle'; retryAfterSeconds: number }
  | { kind: 'partial'; rejected: number }
  | { kind: 'hang' }
  | { kind: 'slow'; ms: number }
  | { kind: 'status'; http: number; grpc: grpc.status; retryAfterSeconds?: number }
  | { kind: 'too_large' }
  | { kind: 'drop' }
  | { kind: 'html' };

export interface Received {
  transport: 'grpc' | 'http';
  signal: 'logs' | 'metrics';
  /** Decoded with proto-loader's deserializer: longs as strings, oneofs named. */
  request: any;
  bytes: number;
  at: number;
  /** Answered with success (not faulted). */
  accepted: boolean;
  fault?: Fault['kind'];
  headers: Record<string, string>;
}

const PROTO = join(REPO, 'proto');
const LOAD_OPTS: protoLoader.Options = { keepCase: false, longs: String, enums: Number, defaults: false, oneofs: true, includeDirs: [PROTO] };

function loadDefs() {
  const pkg = protoLoader.loadSync(
    ['opentelemetry/proto/collector/logs/v1/logs_service.proto', 'opentelemetry/proto/collector/metrics/v1/metrics_service.proto'],
    LOAD_OPTS,
  );
  return {
    logs: pkg['opentelemetry.proto.collector.logs.v1.LogsService'] as grpc.ServiceDefinition,
    metrics: pkg['opentelemetry.proto.collector.metrics.v1.MetricsService'] as grpc.ServiceDefinition,
  };
}

/** Response messages with a partial success, encoded with protobufjs from the same protos. */
function responseBytes(signal: 'logs' | 'metrics', rejected: number): Buffer {
  const root = new protobuf.Root();
  root.resolvePath = (_o, t) => (t.startsWith('/') ? t : join(PROTO, t));
  root.loadSync(join(PROTO, `opentelemetry/proto/collector/${signal}/v1/${signal}_service.proto`));
  const T = root.lookupType(`opentelemetry.proto.collector.${signal}.v1.Export${signal === 'logs' ? 'Logs' : 'Metrics'}ServiceResponse`);
  const field = signal === 'logs' ? 'rejectedLogRecords' : 'rejectedDataPoints';
  return Buffer.from(T.encode(T.fromObject(rejected ? { partialSuccess: { [field]: rejected, errorMessage: 'some were bad' } } : {})).finish());
}

function retryInfoStatus(code: number, message: string, seconds: number): Buffer {
  const root = new protobuf.Root();
  root.resolvePath = (_o, t) => (t.startsWith('/') ? t : join(PROTO, t));
  root.loadSync(join(PROTO, 'google/rpc/status.proto'));
  const Status = root.lookupType('google.rpc.Status');
  const RetryInfo = root.lookupType('google.rpc.RetryInfo');
  const info = RetryInfo.encode(RetryInfo.fromObject({ retryDelay: { seconds } })).finish();
  // Both spellings: protobufjs's built-in Any names the field type_url, a loaded one typeUrl.
  const url = 'type.googleapis.com/google.rpc.RetryInfo';
  return Buffer.from(Status.encode({ code, message, details: [{ type_url: url, typeUrl: url, value: info }] } as never).finish());
}

/** A sink for the tests of one file or describe block: started before them, closed after them. */
export function sinkForTests(): OtlpSink {
  const sink = new OtlpSink();
  beforeAll(() => sink.start());
  afterAll(() => sink.close());
  return sink;
}

export class OtlpSink {
  readonly received: Received[] = [];
  private readonly faults: Fault[] = [];
  private grpcServer: grpc.Server | undefined;
  private http: HttpServer | undefined;
  private proxy: NetServer | undefined;
  private readonly sockets = new Set<Socket>();
  private dropArmed = false;
  /** Bytes clients sent through the proxy, all connections together. */
  proxiedBytes = 0;
  private hung: (() => void)[] = [];
  grpcAddress = '';
  httpAddress = '';
  /** The proxy in front of the gRPC port (for drops); connect here to be droppable. */
  grpcProxyAddress = '';
  httpProxyAddress = '';
  private readonly defs = loadDefs();
  /** Requests larger than this many bytes (decoded body) are answered too large; 0 is no limit. */
  maxRequestBytes = 0;
  private lastBytes = 0;

  /** The next requests get these faults, in order; later ones are accepted. */
  fault(...f: Fault[]): void {
    this.faults.push(...f);
  }

  accepted(signal?: 'logs' | 'metrics'): Received[] {
    return this.received.filter((r) => r.accepted && (!signal || r.signal === signal));
  }

  /** Every accepted log record with its resource and scope. */
  logRecords(): { resource: Record<string, unknown>; scope: { name: string; version: string }; record: any; transport: string }[] {
    const out: { resource: Record<string, unknown>; scope: { name: string; version: string }; record: any; transport: string }[] = [];
    for (const r of this.accepted('logs')) {
      for (const rl of r.request.resourceLogs ?? []) {
        const resource = attrs(rl.resource?.attributes);
        for (const sl of rl.scopeLogs ?? [])
          for (const rec of sl.logRecords ?? []) out.push({ resource, scope: sl.scope, record: rec, transport: r.transport });
      }
    }
    return out;
  }

  async start(): Promise<void> {
    const server = new grpc.Server({ 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
    for (const signal of ['logs', 'metrics'] as const) {
      // The same definition, its deserializer noting each request's size on the wire.
      const m = (this.defs[signal] as any).Export;
      const def = { Export: { ...m, requestDeserialize: (b: Buffer) => Object.defineProperty(m.requestDeserialize(b), '__bytes', { value: b.length }) } };
      server.addService(def as grpc.ServiceDefinition, {
        Export: (call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) => {
          const md = call.metadata.getMap();
          const headers = Object.fromEntries(Object.entries(md).map(([k, v]) => [k, String(v)]));
          this.handle('grpc', signal, call.request, (call.request as { __bytes: number }).__bytes, headers, (f) => {
            if (!f) return cb(null, {});
            if (f.kind === 'refuse') return cb({ code: grpc.status.INVALID_ARGUMENT, details: 'refused by the test' });
            if (f.kind === 'throttle') {
              const m = new grpc.Metadata();
              m.set('grpc-status-details-bin', retryInfoStatus(grpc.status.RESOURCE_EXHAUSTED, 'slow down', f.retryAfterSeconds));
              return cb({ code: grpc.status.RESOURCE_EXHAUSTED, details: 'slow down', metadata: m });
            }
            if (f.kind === 'partial') {
              const field = signal === 'logs' ? 'rejectedLogRecords' : 'rejectedDataPoints';
              return cb(null, { partialSuccess: { [field]: String(f.rejected), errorMessage: 'some were bad' } });
            }
            if (f.kind === 'status') return cb({ code: f.grpc, details: `status ${f.grpc} by the test` });
            if (f.kind === 'too_large')
              return cb({ code: grpc.status.RESOURCE_EXHAUSTED, details: `Received message larger than max (${this.lastBytes} vs. ${this.maxRequestBytes})` });
            return cb({ code: grpc.status.UNAVAILABLE, details: 'unavailable' });
          });
        },
      });
    }
    const gport = await new Promise<number>((res, rej) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
    );
    this.grpcServer = server;
    this.grpcAddress = `127.0.0.1:${gport}`;

    this.http = createHttpServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const signal = req.url === '/v1/logs' ? 'logs' : req.url === '/v1/metrics' ? 'metrics' : undefined;
        if (!signal || req.method !== 'POST') {
          res.writeHead(404).end();
          return;
        }
        if (req.headers['content-type'] !== 'application/x-protobuf') {
          res.writeHead(415).end();
          return;
        }
        let body = Buffer.concat(chunks);
        if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
        const method = (this.defs[signal] as any).Export;
        const request = method.requestDeserialize(body);
        const headers = Object.fromEntries(Object.entries(req.headers).map(([k, v]) => [k, String(v)]));
        this.handle('http', signal, request, body.length, headers, (f) => {
          if (!f) {
            res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(responseBytes(signal, 0));
            return;
          }
          if (f.kind === 'refuse') {
            res.writeHead(400, { 'content-type': 'text/plain' }).end('refused by the test');
            return;
          }
          if (f.kind === 'throttle') {
            res.writeHead(429, { 'retry-after': String(f.retryAfterSeconds), 'content-type': 'text/plain' }).end('slow down');
            return;
          }
          if (f.kind === 'partial') {
            res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(responseBytes(signal, f.rejected));
            return;
          }
          if (f.kind === 'status') {
            const h: Record<string, string> = { 'content-type': 'text/plain' };
            if (f.retryAfterSeconds !== undefined) h['retry-after'] = String(f.retryAfterSeconds);
            res.writeHead(f.http, h).end(`status ${f.http} by the test`);
            return;
          }
          if (f.kind === 'too_large') {
            res.writeHead(413, { 'content-type': 'text/plain' }).end('request entity too large');
            return;
          }
          if (f.kind === 'html') {
            res.writeHead(200, { 'content-type': 'text/html' }).end('<html>login</html>');
            return;
          }
          res.writeHead(503).end();
        });
      });
    });
    await new Promise<void>((res) => this.http!.listen(0, '127.0.0.1', res));
    this.httpAddress = `127.0.0.1:${(this.http.address() as { port: number }).port}`;
    this.proxy = createNetServer((client) => this.pipe(client));
    await new Promise<void>((res) => this.proxy!.listen(0, '127.0.0.1', res));
    // One proxy port per upstream would be simplest; the first bytes say which protocol it is.
    this.grpcProxyAddress = `127.0.0.1:${(this.proxy.address() as { port: number }).port}`;
    this.httpProxyAddress = this.grpcProxyAddress;
  }

  /** The next request's connection is cut after part of its bytes went through. */
  armDrop(): void {
    this.dropArmed = true;
  }

  private pipe(client: Socket): void {
    let upstream: Socket | undefined;
    let seen = 0;
    this.sockets.add(client);
    client.on('close', () => this.sockets.delete(client));
    client.on('error', () => undefined);
    client.on('data', (d: Buffer) => {
      if (!upstream) {
        // HTTP/2 (gRPC) opens with its preface; anything else is HTTP/1.1.
        const target = d.subarray(0, 3).toString() === 'PRI' ? this.grpcAddress : this.httpAddress;
        const [host, port] = target.split(':');
        upstream = connect(Number(port), host!);
        this.sockets.add(upstream);
        upstream.on('close', () => {
          this.sockets.delete(upstream!);
          client.destroy();
        });
        upstream.on('error', () => client.destroy());
        upstream.on('data', (b) => client.write(b));
      }
      seen += d.length;
      this.proxiedBytes += d.length;
      if (this.dropArmed && seen > 2048) {
        // Let part of the request through, then cut both sides.
        this.dropArmed = false;
        upstream.write(d.subarray(0, Math.min(d.length, 512)));
        this.received.push({ transport: 'grpc', signal: 'logs', request: undefined, bytes: seen, at: Date.now(), accepted: false, fault: 'drop', headers: {} });
        client.destroy();
        upstream.destroy();
        return;
      }
      upstream.write(d);
    });
  }

  private handle(
    transport: 'grpc' | 'http',
    signal: 'logs' | 'metrics',
    request: any,
    bytes: number,
    headers: Record<string, string>,
    answer: (f?: Fault) => void,
  ): void {
    this.lastBytes = bytes;
    const f: Fault | undefined = this.maxRequestBytes && bytes > this.maxRequestBytes ? { kind: 'too_large' } : this.faults.shift();
    this.received.push({ transport, signal, request, bytes, at: Date.now(), accepted: !f, fault: f?.kind, headers });
    if (f?.kind === 'hang') {
      this.hung.push(() => answer({ kind: 'refuse' }));
      return;
    }
    if (f?.kind === 'slow') {
      // A success that comes after the client gave up: the receiver has it, the client cannot know.
      const timer = setTimeout(() => answer(), f.ms);
      this.hung.push(() => clearTimeout(timer));
      return;
    }
    answer(f);
  }

  async close(): Promise<void> {
    for (const h of this.hung.splice(0))
      try {
        h();
      } catch {
        /* the client is gone */
      }
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((res) => (this.grpcServer ? this.grpcServer.tryShutdown(() => res()) : res()));
    this.grpcServer?.forceShutdown();
    this.http?.closeAllConnections();
    await new Promise<void>((res) => (this.http ? this.http.close(() => res()) : res()));
    await new Promise<void>((res) => (this.proxy ? this.proxy.close(() => res()) : res()));
  }
}

/** OTLP attributes as a plain object (proto-loader's oneof shape). */
export function attrs(list: any[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of list ?? []) {
    const v = kv.value ?? {};
    const which = v.value as string | undefined;
    out[kv.key] = which === 'intValue' ? Number(v.intValue) : which ? v[which] : undefined;
  }
  return out;
}
