/**
 * The test OAP on the wire: both of the OAP's OTLP doors (gRPC, and OTLP/HTTP with its 10 MiB
 * limit) put every record and point through the rules, answer success as the OAP does whatever
 * its rules then refuse, and refuse only what the OAP's HTTP server would (size, route, type).
 * Requests are encoded with protobufjs from proto/, not with aszcol's codec.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';
import { createHash } from 'node:crypto';
import { request } from 'node:http';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { REPO } from '../helpers/cli.js';
import { OAP_HTTP_LIMIT, TestOap } from './server.js';

const PROTO = join(REPO, 'proto');
const BODY = '{"h":1}\n{"t":"end"}\n';
const sha = (b: string) => createHash('sha256').update(b).digest('hex');
const s = (key: string, v: string) => ({ key, value: { stringValue: v } });
const i = (key: string, v: number) => ({ key, value: { intValue: v } });
const RESOURCE = { attributes: [s('service.name', 'Claude Code'), s('service.instance.id', 'ann@box'), s('service.layer', 'AI_AGENT')] };

function record(file: string, lines: number) {
  return {
    body: { stringValue: BODY },
    attributes: [s('asz.format', 'sd'), s('asz.file', file), s('asz.file.digest', sha(BODY)), i('asz.lines', lines), s('asz.session', 'S'), i('asz.seq', 1)],
  };
}

const LOGS = { resourceLogs: [{ resource: RESOURCE, scopeLogs: [{ logRecords: [record('S/otlp/a.sd', 2), record('S/otlp/b.sd', 5)] }] }] };
const METRICS = {
  resourceMetrics: [
    {
      resource: RESOURCE,
      scopeMetrics: [
        {
          metrics: [
            {
              name: 'claude_code.token.usage',
              sum: {
                aggregationTemporality: 1,
                isMonotonic: true,
                dataPoints: [{ attributes: [s('model', 'm'), s('type', 'input'), s('query_source', 'main')], timeUnixNano: 1, asDouble: 3 }],
              },
            },
          ],
        },
      ],
    },
  ],
};

function encoder(signal: 'logs' | 'metrics'): protobuf.Type {
  const root = new protobuf.Root();
  root.resolvePath = (_o, t) => (t.startsWith('/') ? t : join(PROTO, t));
  root.loadSync(join(PROTO, `opentelemetry/proto/collector/${signal}/v1/${signal}_service.proto`));
  return root.lookupType(`opentelemetry.proto.collector.${signal}.v1.Export${signal === 'logs' ? 'Logs' : 'Metrics'}ServiceRequest`);
}

const bytes = (signal: 'logs' | 'metrics', msg: object) => {
  const T = encoder(signal);
  return Buffer.from(T.encode(T.fromObject(msg)).finish());
};

describe('the test OAP over gRPC and OTLP/HTTP', () => {
  const oap = new TestOap();
  beforeAll(() => oap.start());
  afterAll(() => oap.close());

  test('over OTLP/HTTP: answered 200; one record stored, one rejected for its line count; the point feeds the token meters', async () => {
    // node:http without an agent: no pooled socket outlives the test.
    const post = (path: string, body: Buffer, type = 'application/x-protobuf') =>
      new Promise<{ status: number }>((res, rej) => {
        const [host, port] = oap.httpAddress.split(':');
        const req = request({ host, port: Number(port), path, method: 'POST', agent: false, headers: { 'content-type': type } }, (r) => {
          r.resume();
          r.on('end', () => res({ status: r.statusCode ?? 0 }));
        });
        req.on('error', rej);
        req.end(body);
      });
    expect((await post('/v1/logs', bytes('logs', LOGS))).status).toBe(200);
    expect((await post('/v1/metrics', bytes('metrics', METRICS))).status).toBe(200);
    expect(oap.files.map((f) => [f.transport, f.file, f.outcome.verdict])).toEqual([
      ['http', 'S/otlp/a.sd', 'accepted'],
      ['http', 'S/otlp/b.sd', 'rejected'],
    ]);
    expect(oap.rejectedCounts()).toEqual({ lines: 1 });
    expect(oap.tables.all().map((r) => [r.service, r.instance, r.digest])).toEqual([['Claude Code', 'ann@box', sha(BODY)]]);
    expect(oap.points[0]!.feeds).toContain('meter_ai_agent_instance_tokens_by_model');

    expect((await post('/v1/traces', bytes('logs', LOGS))).status).toBe(404);
    expect((await post('/v1/logs', Buffer.from('{}'), 'application/json')).status).toBe(415);
    expect((await post('/v1/logs', Buffer.alloc(OAP_HTTP_LIMIT + 1))).status).toBe(413);
    expect(oap.refused.map((r) => r.status)).toEqual([404, 415, 413]);
  });

  test('over gRPC: the same rules; the stored row is the same row when the same sender sends the file again', async () => {
    const pkg = protoLoader.loadSync('opentelemetry/proto/collector/logs/v1/logs_service.proto', { includeDirs: [PROTO] });
    const Logs = (grpc.loadPackageDefinition(pkg) as any).opentelemetry.proto.collector.logs.v1.LogsService;
    const client = new Logs(oap.grpcAddress, grpc.credentials.createInsecure());
    try {
      await new Promise<void>((res, rej) => client.Export(LOGS, (err: Error | null) => (err ? rej(err) : res())));
    } finally {
      client.close();
    }
    expect(oap.files.filter((f) => f.transport === 'grpc').map((f) => f.outcome.verdict)).toEqual(['accepted', 'rejected']);
    expect(oap.tables.all()).toHaveLength(1);
    expect(oap.tables.rewrites).toBe(1);
  });
});
