/**
 * The scenario checker's push, on a worker thread (the checker is synchronous): a receiver of its
 * own on loopback (gRPC and HTTP), the root pushed to it over each transport with push.state kept
 * outside the root, and what arrived reported back: per transport, the kinds of the records, and
 * any record that breaks the contract's rules.
 */
import * as grpc from '@grpc/grpc-js';
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { workerData, type MessagePort } from 'node:worker_threads';
import { encodeResponse } from '../otlp/codec.js';
import { GRPC_SERVICE, otlpTypes } from '../otlp/proto.js';
import { validateOtlpExporterConfig } from '../exporters/otlp/config.js';
import { Pusher } from '../exporters/otlp/pusher.js';
import { deriveTokenUsage } from '../processors/token-metrics/derive.js';
import { tokenPoints } from '../otlp/token-usage.js';
import { mcpPoints } from '../otlp/mcp-usage.js';

export interface TransportResult {
  protocol: 'grpc' | 'http';
  kinds: string[];
  records: number;
  problems: string[];
  /** With `metrics`: the token points that arrived, summed by `query_source/type`, and the MCP points by `metric/server/tool/outcome/query_source`. */
  tokens?: Record<string, number>;
  mcp?: Record<string, number>;
}

interface Data {
  root: string;
  /** Derive the session's metrics into the root's spool first, then send them too. */
  metrics?: boolean;
  /** Only derive, send nothing: what the checker does after each checkpoint's landing, before any loss. */
  deriveOnly?: boolean;
  flag: Int32Array;
  port: MessagePort;
}

type KeyValueMsg = { key: string; value?: { value?: string; stringValue?: string; intValue?: number | { toNumber(): number } } | null };

/** String and integer attributes, which are all the contract uses. */
function attributesPlain(kvs: KeyValueMsg[] | undefined): Record<string, string | number | undefined> {
  const out: Record<string, string | number | undefined> = {};
  for (const kv of kvs ?? []) {
    const v = kv.value;
    // protobufjs names the member of the oneof that is set in `value`.
    if (v?.value === 'stringValue') out[kv.key] = v.stringValue;
    else if (v?.value === 'intValue') out[kv.key] = typeof v.intValue === 'number' ? v.intValue : v.intValue!.toNumber();
    else out[kv.key] = undefined;
  }
  return out;
}

type LogsMsg = {
  resourceLogs?: {
    resource?: { attributes?: KeyValueMsg[] };
    scopeLogs?: { logRecords?: { attributes?: KeyValueMsg[]; body?: { stringValue?: string } }[] }[];
  }[];
};

function collect(bodies: Buffer[]): { kinds: string[]; records: number; problems: string[] } {
  const T = otlpTypes().ExportLogsServiceRequest;
  const kinds = new Set<string>();
  const problems: string[] = [];
  const seen = new Set<string>();
  let records = 0;
  for (const b of bodies) {
    const msg = T.decode(b) as unknown as LogsMsg;
    for (const rl of msg.resourceLogs ?? []) {
      const res = attributesPlain(rl.resource?.attributes);
      if (!res['service.name'] || !res['service.instance.id'] || res['service.layer'] !== 'AI_AGENT')
        problems.push(`a resource lacks service.name, service.instance.id or service.layer: ${JSON.stringify(res)}`);
      for (const sl of rl.scopeLogs ?? [])
        for (const rec of sl.logRecords ?? []) {
          records++;
          const a = attributesPlain(rec.attributes);
          const file = String(a['asz.file']);
          if (seen.has(file)) problems.push(`${file}: sent twice`);
          seen.add(file);
          const kind = String(a['asz.file.kind'] ?? '');
          kinds.add(kind);
          const format = a['asz.format'];
          if (format !== 'sd' && format !== 'sf') problems.push(`${String(a['asz.file'])}: asz.format is ${JSON.stringify(format)}`);
          if (format === 'sf' && kind !== 'round') problems.push(`${String(a['asz.file'])}: a round's asz.file.kind is ${kind}`);
          if (typeof rec.body?.stringValue !== 'string') problems.push(`${String(a['asz.file'])}: the body is not a string`);
          else if ((rec.body.stringValue.match(/\n/g) ?? []).length !== a['asz.lines'])
            problems.push(`${String(a['asz.file'])}: asz.lines ${String(a['asz.lines'])} is not the body's line count`);
        }
    }
  }
  return { kinds: [...kinds].sort(), records, problems };
}

/** What the metrics requests carried, summed per series the way a plan states it. */
function sumMetrics(bodies: Buffer[]): { tokens: Record<string, number>; mcp: Record<string, number> } {
  const tokens: Record<string, number> = {};
  const mcp: Record<string, number> = {};
  for (const b of bodies) {
    for (const p of tokenPoints(b)) tokens[`${p.query_source}/${p.type}`] = (tokens[`${p.query_source}/${p.type}`] ?? 0) + p.value;
    for (const p of mcpPoints(b)) {
      const k = `${p.metric}/${p.server}/${p.tool}/${p.outcome}/${p.query_source}`;
      mcp[k] = (mcp[k] ?? 0) + p.value;
    }
  }
  return { tokens, mcp };
}

async function over(protocol: 'grpc' | 'http', root: string, metrics: boolean): Promise<TransportResult> {
  const bodies: Buffer[] = [];
  const metricBodies: Buffer[] = [];
  const state = mkdtempSync(join(tmpdir(), 'aszcol-push-check-'));
  let grpcServer: grpc.Server | undefined;
  let http: Server | undefined;
  let endpoint: string;
  try {
    if (protocol === 'grpc') {
      grpcServer = new grpc.Server({ 'grpc.max_receive_message_length': -1 });
      addRawExport(grpcServer, 'logs', bodies);
      addRawExport(grpcServer, 'metrics', metricBodies);
      const port = await new Promise<number>((res, rej) =>
        grpcServer!.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) => (e ? rej(e) : res(p))),
      );
      endpoint = `127.0.0.1:${port}`;
    } else {
      http = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          if (req.url === '/v1/logs') bodies.push(Buffer.concat(chunks));
          if (req.url === '/v1/metrics') metricBodies.push(Buffer.concat(chunks));
          res.writeHead(200, { 'content-type': 'application/x-protobuf' }).end(encodeResponse(req.url === '/v1/metrics' ? 'metrics' : 'logs', 'protobuf'));
        });
      });
      await new Promise<void>((res) => http!.listen(0, '127.0.0.1', res));
      endpoint = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
    }
    // One byte per request: every file travels alone, as the largest-file case does.
    const cfg = validateOtlpExporterConfig({ protocol, endpoint, batch_bytes: 1, instance_id: 'scenario-check' }, 'scenario');
    const pusher = new Pusher({ root, cfg, logs: true, metrics: metrics ? 'derived' : undefined, stateDir: state });
    try {
      const r = await pusher.pass({ force: true });
      const c = collect(bodies);
      const problems = [...r.problems, ...c.problems];
      if (r.pending !== 0) problems.push(`${r.pending} file(s) were not sent`);
      const again = await pusher.pass({ force: true });
      if (again.logs.files !== 0) problems.push(`a second pass sent ${again.logs.files} file(s) again`);
      if (metrics && again.metrics.files !== 0) problems.push(`a second pass sent ${again.metrics.files} metrics file(s) again`);
      return { protocol, kinds: c.kinds, records: c.records, problems, ...(metrics ? sumMetrics(metricBodies) : {}) };
    } finally {
      pusher.close();
    }
  } finally {
    grpcServer?.forceShutdown();
    if (http) {
      http.closeAllConnections();
      await new Promise<void>((res) => http!.close(() => res()));
    }
    rmSync(state, { recursive: true, force: true });
  }
}

const d = workerData as Data | undefined;
if (d) {
  const results: TransportResult[] = [];
  let error: string | undefined;
  try {
    // A scenario is history by construction: every call counts, none waits for a continuation.
    if (d.metrics || d.deriveOnly) await deriveTokenUsage({ root: d.root, lookbackMs: 100 * 365 * 86_400_000, graceMs: 0 });
    if (!d.deriveOnly) for (const p of ['grpc', 'http'] as const) results.push(await over(p, d.root, d.metrics === true));
  } catch (err) {
    error = (err as Error).stack ?? String(err);
  }
  d.port.postMessage({ results, error });
  Atomics.store(d.flag, 0, 1);
  Atomics.notify(d.flag, 0);
}

/** An OTLP Export service that keeps each request's bytes as sent (no decoding) and answers success. */
function addRawExport(server: grpc.Server, signal: 'logs' | 'metrics', into: Buffer[]): void {
  const id = (b: Buffer) => b;
  const method = { requestStream: false, responseStream: false, requestSerialize: id, requestDeserialize: id, responseSerialize: id, responseDeserialize: id };
  server.addService({ Export: { path: `/${GRPC_SERVICE[signal]}/Export`, ...method } } as grpc.ServiceDefinition, {
    Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, cb: grpc.sendUnaryData<Buffer>) => {
      into.push(call.request);
      cb(null, encodeResponse(signal, 'protobuf'));
    },
  });
}
