/**
 * A test OAP: SkyWalking's OTLP receiver as a Sessionizer meets it, on loopback, over gRPC (the
 * OAP's 11800) and OTLP/HTTP (`POST /v1/logs`, `/v1/metrics` on the core HTTP port 12800, 10 MiB at
 * most per request). Every log record goes through the LAL rule (lal.ts) and is stored or rejected;
 * every metric point goes through the MAL rules (mal.ts) and is kept with the meters it feeds. Like
 * the OAP it answers success to every request it could decode: what its rules refuse is visible in
 * its own counts, never to the sender. Decoding uses @grpc/proto-loader over proto/, not our codec.
 */
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createServer, type Server as HttpServer } from 'node:http';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { REPO } from '../helpers/cli.js';
import { applyConversationRule, tagsOf, type LalOutcome } from './lal.js';
import { meterRules, routeResourceMetrics, type MeterRule, type PointVerdict } from './mal.js';
import { ConversationTables } from './store.js';

/** The OAP core HTTP server's default request limit. */
export const OAP_HTTP_LIMIT = 10 * 1024 * 1024;

export type Transport = 'grpc' | 'http';

export interface FileVerdict {
  transport: Transport;
  /** `asz.file` as the record carried it. */
  file: string;
  service: string;
  instance: string;
  outcome: LalOutcome;
}

export interface PointSeen extends PointVerdict {
  transport: Transport;
  service: string;
  instance: string;
}

const PROTO = join(REPO, 'proto');

function loadServices() {
  const pkg = protoLoader.loadSync(
    ['opentelemetry/proto/collector/logs/v1/logs_service.proto', 'opentelemetry/proto/collector/metrics/v1/metrics_service.proto'],
    { keepCase: false, longs: String, enums: Number, defaults: false, oneofs: true, includeDirs: [PROTO] },
  );
  return {
    logs: pkg['opentelemetry.proto.collector.logs.v1.LogsService'] as grpc.ServiceDefinition,
    metrics: pkg['opentelemetry.proto.collector.metrics.v1.MetricsService'] as grpc.ServiceDefinition,
  };
}

export class TestOap {
  readonly tables = new ConversationTables();
  readonly files: FileVerdict[] = [];
  readonly points: PointSeen[] = [];
  /** Requests by transport and signal, and what could not be decoded or was too large (answered with an error). */
  readonly requests: { transport: Transport; signal: 'logs' | 'metrics'; bytes: number }[] = [];
  readonly refused: { transport: Transport; status: number; why: string }[] = [];
  readonly rules: MeterRule[] = meterRules();
  grpcAddress = '';
  httpAddress = '';
  private grpcServer: grpc.Server | undefined;
  private http: HttpServer | undefined;
  private readonly services = loadServices();
  private readonly waiters: { ready: () => boolean; resolve: () => void }[] = [];

  async start(): Promise<void> {
    const server = new grpc.Server({ 'grpc.max_receive_message_length': 64 * 1024 * 1024 });
    for (const signal of ['logs', 'metrics'] as const) {
      server.addService(this.services[signal], {
        Export: (call: grpc.ServerUnaryCall<any, any>, cb: grpc.sendUnaryData<any>) => {
          this.take('grpc', signal, call.request, -1);
          cb(null, {});
        },
      });
    }
    const port = await new Promise<number>((res, rej) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
    );
    this.grpcServer = server;
    this.grpcAddress = `127.0.0.1:${port}`;
    this.http = createServer((req, res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      req.on('data', (c: Buffer) => {
        size += c.length;
        if (size <= OAP_HTTP_LIMIT) chunks.push(c);
      });
      req.on('end', () => {
        const signal = req.url === '/v1/logs' ? 'logs' : req.url === '/v1/metrics' ? 'metrics' : undefined;
        const refuse = (status: number, why: string) => {
          this.refused.push({ transport: 'http', status, why });
          res.writeHead(status, { 'content-type': 'text/plain', connection: 'close' }).end(why);
        };
        if (!signal || req.method !== 'POST') return refuse(404, `no route ${req.method} ${req.url}`);
        if (size > OAP_HTTP_LIMIT) return refuse(413, `${size} bytes is over the ${OAP_HTTP_LIMIT}-byte request limit`);
        if (req.headers['content-type'] !== 'application/x-protobuf')
          return refuse(415, `content-type ${req.headers['content-type']} is not application/x-protobuf`);
        let body = Buffer.concat(chunks);
        try {
          if (req.headers['content-encoding'] === 'gzip') body = gunzipSync(body);
          const method = (this.services[signal] as any).Export;
          this.take('http', signal, method.requestDeserialize(body), body.length);
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end((method.responseSerialize as (v: object) => Buffer)({}));
        } catch (err) {
          refuse(400, `cannot decode: ${(err as Error).message}`);
        }
      });
    });
    await new Promise<void>((res) => this.http!.listen(0, '127.0.0.1', res));
    this.httpAddress = `127.0.0.1:${(this.http.address() as { port: number }).port}`;
  }

  async close(): Promise<void> {
    await new Promise<void>((res) => (this.grpcServer ? this.grpcServer.tryShutdown(() => res()) : res()));
    this.grpcServer?.forceShutdown();
    this.http?.closeAllConnections();
    await new Promise<void>((res) => (this.http ? this.http.close(() => res()) : res()));
  }

  /** Resolves once `ready()` holds after some request, or rejects after `ms` with what was seen. */
  until(ready: () => boolean, ms: number, what: string): Promise<void> {
    if (ready()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const w = { ready, resolve: () => (clearTimeout(t), resolve()) };
      const t = setTimeout(() => {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        reject(new Error(`the test OAP did not see ${what} within ${ms} ms: ${this.files.length} files, ${this.points.length} points`));
      }, ms);
      this.waiters.push(w);
    });
  }

  accepted(): FileVerdict[] {
    return this.files.filter((f) => f.outcome.verdict === 'accepted');
  }

  /** Files the OAP would not store, with why: the rejected ones and the dropped ones. */
  notStored(): { file: string; verdict: string; why: string }[] {
    return this.files.flatMap((f) => {
      const o = f.outcome;
      if (o.verdict === 'accepted') return [];
      return [{ file: f.file, verdict: o.verdict === 'rejected' ? `rejected (${o.reason})` : `dropped at ${o.stage}`, why: o.detail }];
    });
  }

  /** ai_agent_conversation_files_rejected by its reason label. */
  rejectedCounts(): Record<string, number> {
    const out: Record<string, number> = {};
    for (const f of this.files) if (f.outcome.verdict === 'rejected') out[f.outcome.reason] = (out[f.outcome.reason] ?? 0) + 1;
    return out;
  }

  private take(transport: Transport, signal: 'logs' | 'metrics', request: any, bytes: number): void {
    this.requests.push({ transport, signal, bytes });
    if (signal === 'logs') {
      for (const rl of request.resourceLogs ?? []) {
        const res = tagsOf(rl.resource?.attributes);
        for (const sl of rl.scopeLogs ?? [])
          for (const rec of sl.logRecords ?? []) {
            const outcome = applyConversationRule(rl.resource?.attributes, rec.attributes, rec.body);
            const file = tagsOf(rec.attributes)['asz.file'] ?? '';
            this.files.push({ transport, file, service: res['service.name'] ?? '', instance: res['service.instance.id'] ?? '', outcome });
            if (outcome.verdict === 'accepted') this.tables.put({ ...outcome.row, file });
          }
      }
    } else {
      for (const rm of request.resourceMetrics ?? []) {
        const res = tagsOf(rm.resource?.attributes);
        for (const p of routeResourceMetrics(this.rules, rm))
          this.points.push({ ...p, transport, service: res['service.name'] ?? '', instance: res['service.instance.id'] ?? '' });
      }
    }
    for (const w of [...this.waiters])
      if (w.ready()) {
        this.waiters.splice(this.waiters.indexOf(w), 1);
        w.resolve();
      }
  }
}
