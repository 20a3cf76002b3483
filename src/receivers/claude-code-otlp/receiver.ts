/**
 * The `claude_code_otlp` receiver: OTLP/gRPC and OTLP/HTTP listeners in front of the export
 * handler, with a start and a graceful shutdown the service host calls.
 *
 * With `endpoint` set, one port serves both. A connection's first bytes tell them apart: an
 * HTTP/2 connection (gRPC) opens with the fixed preface `PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n`, an
 * HTTP/1.1 request with a method name. The HTTP/1.1 socket goes to the HTTP server with the
 * bytes already read put back; the HTTP/2 one goes to gRPC through a stream that replays them
 * first (Node's HTTP/2 session reads the socket's handle directly and would not see put-back
 * bytes), which costs an extra copy on that port only.
 */
import { createServer as createHttpServer, type Server as HttpServer } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { Duplex } from 'node:stream';
import * as grpc from '@grpc/grpc-js';
import { AszError } from '../../util/errors.js';
import { formatEndpoint, type Endpoint, type OtlpReceiverConfig } from './config.js';
import { ExportHandler } from './handler.js';
import type { ReceiverLog } from './log.js';
import { otlpGrpcServer } from './grpc.js';
import { otlpHttpHandler } from './http.js';
import type { OtlpReceiverStats } from './stats.js';

export type { OtlpReceiverStats } from './stats.js';
export type { ReceiverLog, LogLevel } from './log.js';

export interface OtlpReceiverOptions {
  storageRoot: string;
  /** The instance's name (its component id), naming its journal under `<root>/_journal/`. */
  name?: string;
  /** False: received metrics are answered and counted, not spooled (no metrics pipeline would read them). Default true. */
  keepMetrics?: boolean;
  log?: ReceiverLog;
}

/** A component id such as `claude_code_otlp/edge` as a directory name. */
export const journalNameOf = (id: string) => id.replace(/[^A-Za-z0-9_.-]/g, '-');

export interface OtlpReceiverAddresses {
  grpc?: string;
  http?: string;
  /** The one port serving both, when `endpoint` is configured. */
  endpoint?: string;
}

const H2_PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');
/** A connection that says nothing for this long is closed before it is classified. */
const SNIFF_TIMEOUT_MS = 10_000;
/** How long shutdown waits for requests in flight before it closes what is left. */
const DRAIN_MS = 25_000;

const bindHost = (e: Endpoint) => e.host || '0.0.0.0';

/** A socket for HTTP/2 whose first bytes (already read while sniffing) are replayed before the rest. */
function replaying(sock: Socket, head: Buffer): Duplex {
  const d = new Duplex({
    read() {
      sock.resume();
    },
    write(chunk, enc, cb) {
      sock.write(chunk, enc, cb);
    },
    final(cb) {
      sock.end(cb);
    },
    destroy(err, cb) {
      sock.destroy(err ?? undefined);
      cb(err);
    },
  });
  d.push(head);
  sock.on('data', (c: Buffer) => {
    if (!d.push(c)) sock.pause();
  });
  sock.on('end', () => d.push(null));
  sock.on('error', (e) => d.destroy(e));
  sock.on('close', () => d.destroy());
  Object.assign(d, { remoteAddress: sock.remoteAddress, remotePort: sock.remotePort, localAddress: sock.localAddress, localPort: sock.localPort });
  return d;
}

export class OtlpReceiver {
  private readonly handler: ExportHandler;
  private readonly log: ReceiverLog;
  private grpcServer?: grpc.Server;
  private grpcPort?: number;
  private httpServer?: HttpServer;
  private netServer?: NetServer;
  private injector?: ReturnType<grpc.Server['createConnectionInjector']>;
  private readonly sockets = new Set<Socket>();
  private readonly bound: OtlpReceiverAddresses = {};
  private stopping?: Promise<void>;
  private state: 'new' | 'starting' | 'running' | 'draining' | 'drained' | 'stopped' = 'new';

  constructor(
    private readonly cfg: OtlpReceiverConfig,
    opts: OtlpReceiverOptions,
  ) {
    this.log = opts.log ?? (() => {});
    this.handler = new ExportHandler({
      storageRoot: opts.storageRoot,
      journalName: journalNameOf(opts.name ?? 'claude_code_otlp'),
      maxRequestBytes: cfg.maxRequestBytes,
      maxSpoolBytes: cfg.maxSpoolBytes,
      maxJournalBytes: cfg.maxJournalBytes,
      lockWaitMs: cfg.lockWaitMs,
      durability: cfg.durability,
      keepMetrics: opts.keepMetrics ?? true,
      log: this.log,
    });
  }

  /** Opens the spool and binds every configured listener; rejects (binding nothing) if any cannot bind. */
  async start(): Promise<void> {
    if (this.state !== 'new') throw new AszError(`cannot start a receiver that is ${this.state}`, 'claude_code_otlp');
    this.state = 'starting';
    try {
      await this.handler.open();
      const needGrpc = this.cfg.grpc || this.cfg.endpoint;
      const needHttp = this.cfg.http || this.cfg.endpoint;
      if (needGrpc) this.grpcServer = otlpGrpcServer(this.handler, this.cfg.maxRequestBytes);
      if (needHttp) {
        this.httpServer = createHttpServer(
          { requestTimeout: 120_000, headersTimeout: 30_000, keepAliveTimeout: 65_000 },
          otlpHttpHandler(this.handler, this.cfg.maxRequestBytes),
        );
        this.httpServer.on('clientError', (_err, socket) => {
          // Malformed HTTP: answer 400 if the socket can still take it, never throw.
          if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\ncontent-length: 0\r\n\r\n');
          else socket.destroy();
        });
      }
      if (this.cfg.grpc) await this.bindGrpc(this.cfg.grpc);
      if (this.cfg.http) await this.bindHttp(this.cfg.http);
      if (this.cfg.endpoint) await this.bindShared(this.cfg.endpoint);
      this.state = 'running';
      this.log('info', 'OTLP receiver listening', { ...this.bound });
    } catch (err) {
      await this.closeListeners(0);
      await this.handler.release(0).catch(() => {});
      this.state = 'stopped';
      throw err instanceof AszError ? err : new AszError((err as Error).message, 'receivers.claude_code_otlp');
    }
  }

  private bindGrpc(e: Endpoint): Promise<void> {
    return new Promise((resolve, reject) => {
      this.grpcServer!.bindAsync(formatEndpoint({ host: bindHost(e), port: e.port }), grpc.ServerCredentials.createInsecure(), (err, port) => {
        if (err)
          return reject(new AszError(`cannot listen for gRPC on ${formatEndpoint(e)}: ${err.message}`, 'receivers.claude_code_otlp.protocols.grpc.endpoint'));
        this.grpcPort = port;
        this.bound.grpc = formatEndpoint({ host: bindHost(e), port });
        resolve();
      });
    });
  }

  private listen(server: HttpServer | NetServer, e: Endpoint, where: string): Promise<number> {
    return new Promise((resolve, reject) => {
      const onError = (err: Error) => reject(new AszError(`cannot listen on ${formatEndpoint(e)}: ${err.message}`, where));
      server.once('error', onError);
      server.listen(e.port, bindHost(e), () => {
        server.off('error', onError);
        resolve((server.address() as AddressInfo).port);
      });
    });
  }

  private async bindHttp(e: Endpoint): Promise<void> {
    const port = await this.listen(this.httpServer!, e, 'receivers.claude_code_otlp.protocols.http.endpoint');
    this.bound.http = formatEndpoint({ host: bindHost(e), port });
  }

  private async bindShared(e: Endpoint): Promise<void> {
    this.injector = this.grpcServer!.createConnectionInjector(grpc.ServerCredentials.createInsecure());
    this.netServer = createNetServer((sock) => this.classify(sock));
    const port = await this.listen(this.netServer, e, 'receivers.claude_code_otlp.endpoint');
    this.bound.endpoint = formatEndpoint({ host: bindHost(e), port });
  }

  /** Reads until the first bytes say HTTP/2 or not, then hands the socket to gRPC or HTTP/1.1. */
  private classify(sock: Socket): void {
    this.sockets.add(sock);
    sock.once('close', () => this.sockets.delete(sock));
    let head: Buffer = Buffer.alloc(0);
    const timer = setTimeout(() => sock.destroy(), SNIFF_TIMEOUT_MS);
    const onError = () => sock.destroy();
    const onData = (chunk: Buffer) => {
      head = head.length ? Buffer.concat([head, chunk]) : chunk;
      const n = Math.min(head.length, H2_PREFACE.length);
      const h2 = head.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      if (h2 && head.length < H2_PREFACE.length) return; // a prefix of the preface so far: read on
      clearTimeout(timer);
      sock.off('data', onData);
      sock.off('error', onError);
      sock.pause();
      if (this.state !== 'running') return void sock.destroy();
      if (h2) {
        this.injector!.injectConnection(replaying(sock, head));
      } else {
        sock.unshift(head);
        this.httpServer!.emit('connection', sock);
      }
      sock.resume();
    };
    sock.on('data', onData);
    sock.on('error', onError);
  }

  /** The bound addresses as host:port, so a test can listen on port 0 and find where. */
  addresses(): OtlpReceiverAddresses {
    return { ...this.bound };
  }

  /** What keeps the receiver from taking or landing requests now; the service fails its pass on it. */
  problems(): string[] {
    return this.handler.problems();
  }

  stats(): OtlpReceiverStats {
    return this.handler.snapshot();
  }

  /**
   * Resolves once every request answered so far has landed in the storage root (true), or after
   * `timeoutMs` (false; it stays in the journal and keeps landing).
   */
  landed(timeoutMs: number): Promise<boolean> {
    return this.handler.landed(timeoutMs);
  }

  /**
   * Stops taking requests: closes the listeners, lets requests in flight be answered (refusing
   * new ones on open connections as retryable), then closes every connection. What was accepted
   * keeps landing until `shutdown`. Idempotent.
   */
  async stopIntake(timeoutMs = DRAIN_MS): Promise<void> {
    if (this.state !== 'running') return;
    this.state = 'draining';
    this.handler.close();
    // Stop listening first, so nothing new arrives, then wait for what is in flight.
    const closing = this.closeListeners(timeoutMs);
    await Promise.race([this.handler.idle(), new Promise<void>((r) => setTimeout(r, timeoutMs).unref())]);
    this.httpServer?.closeAllConnections();
    for (const s of this.sockets) s.destroy();
    await closing;
    this.state = 'drained';
  }

  /**
   * Stops taking requests (if not stopped yet), waits for what was accepted to land, writes the
   * state files, stops the landing thread and releases every lock, all within `timeoutMs`; what
   * has not landed by then lands at the next start. Idempotent.
   */
  shutdown(timeoutMs = DRAIN_MS): Promise<void> {
    this.stopping ??= this.stop(timeoutMs);
    return this.stopping;
  }

  private async stop(timeoutMs: number): Promise<void> {
    if (this.state === 'stopped' || this.state === 'new') return;
    const deadline = Date.now() + timeoutMs;
    await this.stopIntake(Math.floor(timeoutMs / 2));
    this.state = 'stopped';
    await this.handler.release(Math.max(0, deadline - Date.now()));
    this.log('info', 'OTLP receiver stopped', this.handler.snapshot() as unknown as Record<string, unknown>);
  }

  private async closeListeners(graceMs: number): Promise<void> {
    const waits: Promise<void>[] = [];
    if (this.httpServer?.listening) {
      waits.push(new Promise((r) => this.httpServer!.close(() => r())));
      this.httpServer.closeIdleConnections();
    }
    if (this.netServer?.listening) waits.push(new Promise((r) => this.netServer!.close(() => r())));
    if (this.injector) {
      this.injector.drain(graceMs);
      this.injector.destroy();
    }
    if (this.grpcServer) {
      const server = this.grpcServer;
      waits.push(
        new Promise((r) => {
          const force = setTimeout(() => server.forceShutdown(), graceMs);
          force.unref();
          server.tryShutdown(() => {
            clearTimeout(force);
            r();
          });
        }),
      );
    }
    await Promise.all(waits);
  }
}
