/**
 * OTLP test material: requests shaped like the ones Claude Code 2.1.328 sends (measured through
 * the lab), built with the message types from proto/, and small raw clients for both transports
 * that send exact bytes (no SDK in between), for the receiver's tests and its benchmark.
 */
import type { ChildProcess } from 'node:child_process';
import { request as httpRequest, Agent } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { GRPC_SERVICE, otlpTypes, requestType, type Signal } from '../../src/otlp/proto.js';

export const CC_SCOPE_EVENTS = 'com.anthropic.claude_code.events';
export const CC_SCOPE_METRICS = 'com.anthropic.claude_code';

const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
const int = (key: string, v: number) => ({ key, value: { intValue: v } });
const bool = (key: string, v: boolean) => ({ key, value: { boolValue: v } });
const dbl = (key: string, v: number) => ({ key, value: { doubleValue: v } });

export const ccResource = (version = '2.1.328') => ({
  attributes: [str('host.arch', 'amd64'), str('os.type', 'linux'), str('service.name', 'claude-code'), str('service.version', version)],
});

export interface CcEvent {
  name: string;
  seq: number;
  timeMs: number;
  attrs?: { key: string; value: Record<string, unknown> }[];
}

const common = (session: string) => [
  str('user.id', 'bd5b72822c70fc830e477470d7187362c6fe585face0a1b96889c6936a33c9b8'),
  str('session.id', session),
  str('anthropic.provider', 'firstParty'),
  bool('anthropic.custom_base_url', true),
  str('terminal.type', 'xterm'),
];

/** One Claude Code event log record: body is the full name, attributes as the runtime sets them. */
export function ccLogRecord(session: string | undefined, e: CcEvent, bodyOverride?: string) {
  const ns = BigInt(e.timeMs) * 1_000_000n;
  const base = session === undefined ? common('x').filter((a) => a.key !== 'session.id') : common(session);
  return {
    timeUnixNano: (protobuf.util.Long as unknown as { fromString(s: string, u: boolean): object }).fromString(ns.toString(), true),
    observedTimeUnixNano: (protobuf.util.Long as unknown as { fromString(s: string, u: boolean): object }).fromString(ns.toString(), true),
    body: { stringValue: bodyOverride ?? `claude_code.${e.name}` },
    attributes: [
      ...base,
      str('event.name', e.name),
      str('event.timestamp', new Date(e.timeMs).toISOString()),
      int('event.sequence', e.seq),
      ...(e.attrs ?? []),
    ],
  };
}

export const apiRequestAttrs = (promptId: string, requestId: string, usage = { in: 100, out: 40, cr: 300, cw: 20 }) => [
  str('prompt.id', promptId),
  str('model', 'claude-opus-5-5'),
  int('input_tokens', usage.in),
  int('output_tokens', usage.out),
  int('cache_read_tokens', usage.cr),
  int('cache_creation_tokens', usage.cw),
  dbl('cost_usd', 0.00136),
  int('duration_ms', 86),
  str('request_id', requestId),
];

export const toolResultAttrs = (promptId: string, toolUseId: string, requestId: string) => [
  str('prompt.id', promptId),
  str('tool_name', 'Bash'),
  str('tool_use_id', toolUseId),
  str('success', 'true'),
  int('duration_ms', 340),
  str('request_id', requestId),
];

/** An ExportLogsServiceRequest (protobuf bytes) with the given records under Claude Code's resource and scope. */
export function logsRequest(records: object[], resource: object = ccResource(), scope = CC_SCOPE_EVENTS): Buffer {
  const T = otlpTypes().ExportLogsServiceRequest;
  const msg = T.fromObject({ resourceLogs: [{ resource, scopeLogs: [{ scope: { name: scope, version: '2.1.328' }, logRecords: records }] }] });
  return Buffer.from(T.encode(msg).finish());
}

/** A realistic Claude Code logs request: a prompt, a call, two tool results (about 5 KB). */
export function ccLogsRequest(session: string, firstSeq = 0, t0 = Date.UTC(2026, 10, 30, 5, 14, 12), tag = 'a'): Buffer {
  const prompt = `prompt-${tag}`;
  const req = `req_${tag}`;
  const events: CcEvent[] = [
    { name: 'user_prompt', seq: firstSeq, timeMs: t0, attrs: [str('prompt.id', prompt), int('prompt_length', 15), str('prompt', '<REDACTED>')] },
    { name: 'api_request', seq: firstSeq + 1, timeMs: t0 + 100, attrs: apiRequestAttrs(prompt, req) },
    { name: 'tool_result', seq: firstSeq + 2, timeMs: t0 + 400, attrs: toolResultAttrs(prompt, `toolu_${tag}_0`, req) },
    { name: 'tool_result', seq: firstSeq + 3, timeMs: t0 + 410, attrs: toolResultAttrs(prompt, `toolu_${tag}_1`, req) },
    { name: 'api_request', seq: firstSeq + 4, timeMs: t0 + 500, attrs: apiRequestAttrs(prompt, `${req}2`) },
  ];
  return logsRequest(events.map((e) => ccLogRecord(session, e)));
}

export type TokenType = 'input' | 'output' | 'cacheRead' | 'cacheCreation';

/** A Claude Code metrics request: session.count, cost.usage and token.usage by type (delta sums, as the runtime sends). */
export function ccMetricsRequest(session: string, tokens: Record<TokenType, number>, t0 = Date.UTC(2026, 10, 30, 5, 14, 12), extraPoints = 0): Buffer {
  const T = otlpTypes().ExportMetricsServiceRequest;
  const ns = (ms: number) =>
    (protobuf.util.Long as unknown as { fromString(s: string, u: boolean): object }).fromString((BigInt(ms) * 1_000_000n).toString(), true);
  const attrs = [...common(session), str('model', 'claude-opus-5-5'), str('query_source', 'main')];
  const point = (value: number, extra: object[] = []) => ({
    startTimeUnixNano: ns(t0),
    timeUnixNano: ns(t0 + 900),
    asDouble: value,
    attributes: [...attrs, ...extra],
  });
  const tokenPoints = (Object.keys(tokens) as TokenType[]).map((k) => point(tokens[k], [str('type', k)]));
  for (let i = 0; i < extraPoints; i++) tokenPoints.push(point(0, [str('type', 'input'), int('pad', i)]));
  const msg = T.fromObject({
    resourceMetrics: [
      {
        resource: ccResource(),
        scopeMetrics: [
          {
            scope: { name: CC_SCOPE_METRICS, version: '2.1.328' },
            metrics: [
              {
                name: 'claude_code.session.count',
                description: 'Count of CLI sessions started',
                sum: { dataPoints: [point(1)], aggregationTemporality: 1, isMonotonic: true },
              },
              { name: 'claude_code.cost.usage', unit: 'USD', sum: { dataPoints: [point(0.00272)], aggregationTemporality: 1, isMonotonic: true } },
              { name: 'claude_code.token.usage', unit: 'tokens', sum: { dataPoints: tokenPoints, aggregationTemporality: 1, isMonotonic: true } },
            ],
          },
        ],
      },
    ],
  });
  return Buffer.from(T.encode(msg).finish());
}

/** Sums `claude_code.token.usage` points by `type` over metrics requests (protobuf bytes). */
export function tokenSums(requests: Buffer[]): Record<string, number> {
  const T = otlpTypes().ExportMetricsServiceRequest;
  const out: Record<string, number> = {};
  for (const b of requests) {
    const o = T.toObject(T.decode(b), { longs: Number }) as {
      resourceMetrics?: {
        scopeMetrics?: {
          metrics?: {
            name: string;
            sum?: { dataPoints?: { asDouble?: number; asInt?: number; attributes?: { key: string; value: { stringValue?: string } }[] }[] };
          }[];
        }[];
      }[];
    };
    for (const rm of o.resourceMetrics ?? [])
      for (const sm of rm.scopeMetrics ?? [])
        for (const m of sm.metrics ?? []) {
          if (m.name !== 'claude_code.token.usage') continue;
          for (const p of m.sum?.dataPoints ?? []) {
            const type = p.attributes?.find((a) => a.key === 'type')?.value.stringValue ?? '?';
            out[type] = (out[type] ?? 0) + (p.asDouble ?? p.asInt ?? 0);
          }
        }
  }
  return out;
}

/** Finds an 8-byte little-endian value in a buffer (a sentinel written to locate a field for in-place variation). */
export function findU64(buf: Buffer, value: bigint): number {
  const probe = Buffer.alloc(8);
  probe.writeBigUInt64LE(value);
  return buf.indexOf(probe);
}

export interface HttpReply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

const keepAlive = new Agent({ keepAlive: true, maxSockets: 64 });

/** POSTs exact bytes with exact headers (no client library rewriting anything). */
export function httpPost(
  address: string,
  path: string,
  body: Buffer | string,
  headers: Record<string, string | number> = {},
  agent: Agent | false = keepAlive,
): Promise<HttpReply> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  // A header given as '' is left out (to send a request with no Content-Type at all).
  const all = Object.fromEntries(
    Object.entries({ 'content-type': 'application/x-protobuf', 'content-length': Buffer.byteLength(body), ...headers }).filter(([, v]) => v !== ''),
  );
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host, port, path, method: 'POST', agent, headers: all }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const identity = (b: Buffer) => b;

export function grpcDefinition(signal: Signal): grpc.ServiceDefinition {
  return {
    Export: {
      path: `/${GRPC_SERVICE[signal]}/Export`,
      requestStream: false,
      responseStream: false,
      requestSerialize: identity,
      requestDeserialize: identity,
      responseSerialize: identity,
      responseDeserialize: identity,
    } as grpc.MethodDefinition<Buffer, Buffer>,
  };
}

export interface GrpcReply {
  code: number;
  details: string;
  body?: Buffer;
  metadata?: grpc.Metadata;
}

/** A raw gRPC client for the three OTLP services: sends exact request bytes. */
export class RawGrpcClient {
  private readonly clients = new Map<Signal, grpc.Client>();

  constructor(
    readonly address: string,
    opts: grpc.ClientOptions = {},
  ) {
    for (const s of ['logs', 'metrics', 'traces'] as Signal[]) {
      const Ctor = grpc.makeGenericClientConstructor(grpcDefinition(s), s);
      this.clients.set(
        s,
        new Ctor(address, grpc.credentials.createInsecure(), { 'grpc.max_send_message_length': -1, 'grpc.max_receive_message_length': -1, ...opts }),
      );
    }
  }

  export(signal: Signal, body: Buffer, deadlineMs = 30_000): Promise<GrpcReply> {
    const c = this.clients.get(signal)! as unknown as {
      Export: (b: Buffer, md: grpc.Metadata, o: grpc.CallOptions, cb: (e: grpc.ServiceError | null, v?: Buffer) => void) => void;
    };
    return new Promise((resolve) => {
      c.Export(body, new grpc.Metadata(), { deadline: Date.now() + deadlineMs }, (err, v) => {
        if (err) resolve({ code: err.code, details: err.details, metadata: err.metadata });
        else resolve({ code: 0, details: '', body: v });
      });
    });
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
  }
}

/** Decodes a request (for assertions). */
export function decodeRequest(signal: Signal, bytes: Uint8Array): Record<string, unknown> {
  const T = requestType(signal);
  return T.toObject(T.decode(bytes), { longs: String, bytes: String }) as Record<string, unknown>;
}

/** A receiver running in its own process (test/helpers/otlp-runner.ts). */
export interface RunnerProcess {
  addresses: { grpc?: string; http?: string; endpoint?: string };
  pid: number;
  child: ChildProcess;
  stderr: () => string;
  /** SIGTERM, then the final stats the runner prints, and its exit code. */
  stop: () => Promise<{ code: number | null; stats?: Record<string, unknown> }>;
}

/**
 * `fdLimit`: the runner's limit of open files (`ulimit -n`), for tests of what a round holds open;
 * `shutdownMs`: the timeout its SIGTERM hands to the receiver's shutdown (as the service's shutdown_timeout would).
 */
export async function startRunner(root: string, cfg: object, opts: { fdLimit?: number; shutdownMs?: number } = {}): Promise<RunnerProcess> {
  const { spawn } = await import('node:child_process');
  const { fileURLToPath } = await import('node:url');
  const runner = fileURLToPath(new URL('./otlp-runner.js', import.meta.url));
  const args = [runner, root, JSON.stringify(cfg), ...(opts.shutdownMs ? [String(opts.shutdownMs)] : [])];
  const child = opts.fdLimit
    ? spawn('/bin/sh', ['-c', `ulimit -n ${opts.fdLimit} && exec "$0" "$@"`, process.execPath, ...args], { stdio: ['ignore', 'pipe', 'pipe'] })
    : spawn(process.execPath, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr!.on('data', (d) => (err += d));
  const first = await new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`runner did not start: ${err}`)), 20_000);
    child.stdout!.on('data', (d) => {
      out += d;
      const nl = out.indexOf('\n');
      if (nl >= 0) {
        clearTimeout(t);
        resolve(out.slice(0, nl));
      }
    });
    child.once('exit', (code) => reject(new Error(`runner exited ${code}: ${err}`)));
  });
  const info = JSON.parse(first) as { addresses: RunnerProcess['addresses']; pid: number };
  return {
    ...info,
    child,
    stderr: () => err,
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', (code) => {
          const line = out.split('\n').find((l) => l.startsWith('{"stats"'));
          resolve({ code, stats: line ? (JSON.parse(line) as { stats: Record<string, unknown> }).stats : undefined });
        });
        child.kill('SIGTERM');
      }),
  };
}
