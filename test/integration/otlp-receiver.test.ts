import { afterAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { request } from 'node:http';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { OtlpReceiver, validateOtlpReceiverConfig } from '../../src/receivers/claude-code-otlp/index.js';
import { otlpTypes, requestType, responseType } from '../../src/otlp/proto.js';
import { protobufToOtlpJson } from '../../src/otlp/json.js';
import { verifyRoot } from '../../src/storage/verify.js';
import { FileLock } from '../../src/storage/lock.js';
import { sessionLockPath } from '../../src/storage/layout.js';
import { landLines } from '../../src/storage/landing.js';
import { parseKv } from '../../src/storage/kv-text.js';
import { AszError } from '../../src/util/errors.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { eventually } from '../helpers/wait.js';
import { landedFiles } from '../helpers/root.js';
import { RawGrpcClient, ccLogRecord, ccLogsRequest, ccMetricsRequest, httpPost, logsRequest, tokenSums } from '../helpers/otlp.js';

afterAll(cleanupTemp);

const PB = { 'content-type': 'application/x-protobuf' };
const JSON_CT = { 'content-type': 'application/json' };
const tokens = { input: 100, output: 40, cacheRead: 300, cacheCreation: 20 };

async function start(root: string, cfg: object = {}) {
  const r = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: { grpc: { endpoint: '127.0.0.1:0' }, http: { endpoint: '127.0.0.1:0' } }, ...cfg }), {
    storageRoot: root,
  });
  await r.start();
  return { r, http: r.addresses().http!, grpc: r.addresses().grpc! };
}

const spoolFiles = (root: string) =>
  existsSync(join(root, '_metrics'))
    ? readdirSync(join(root, '_metrics'))
        .filter((n) => /^metrics-.*-otlp\.pb$/.test(n))
        .sort()
    : [];
const sdFiles = (root: string) => {
  const out: string[] = [];
  for (const s of existsSync(root) ? readdirSync(root) : []) {
    if (s.startsWith('_') || !existsSync(join(root, s, 'otlp'))) continue;
    out.push(...readdirSync(join(root, s, 'otlp')).filter((n) => n.endsWith('.sd')));
  }
  return out;
};

/** The LogRecords of a request as protobufjs encodes them one by one: an independent view of each record's bytes. */
function recordBytes(req: Buffer): Buffer[] {
  const T = otlpTypes();
  const msg = T.ExportLogsServiceRequest.decode(req) as unknown as { resourceLogs: { scopeLogs: { logRecords: object[] }[] }[] };
  return msg.resourceLogs.flatMap((rl) => rl.scopeLogs.flatMap((sl) => sl.logRecords.map((r) => Buffer.from(T.LogRecord.encode(r).finish()))));
}
const sha12 = (b: Buffer) => createHash('sha256').update(b).digest('hex').slice(0, 12);

describe('claude_code_otlp over HTTP', () => {
  const root = tempDir('aszcol-otlp-http-');
  let rx: Awaited<ReturnType<typeof start>>;

  test("a logs request lands as one otlp_log file: header, one record per log record, provenance of each record's bytes", async () => {
    rx = await start(root);
    const req = ccLogsRequest('S-http', 0);
    const res = await httpPost(rx.http, '/v1/logs', req, PB);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-protobuf');
    expect(res.body.length).toBe(0); // an empty ExportLogsServiceResponse: full success
    expect(await rx.r.landed(10_000)).toBe(true);
    const files = landedFiles(root, 'S-http');
    expect(files).toHaveLength(1);
    const f = files[0]!;
    expect(f.path).toMatch(/S-http\/otlp\/otlp_log-\d{8}T\d{6}\.\d{9}Z-000001\.sd$/);
    expect(f.header).toMatchObject({
      seq: 1,
      kind: 'otlp_log',
      adapter: 'claude-code-otlp/0.1.0',
      dialect: 'claude-code/1',
      src: 'otlp/logs',
      session: 'S-http',
      resource: { attributes: { 'service.name': 'claude-code', 'service.version': '2.1.328' } },
      scope: { name: 'com.anthropic.claude_code.events', version: '2.1.328' },
    });
    const bytes = recordBytes(req);
    let off = 0;
    expect(f.records.map((r) => r.ord)).toEqual([1, 2, 3, 4, 5]);
    for (const [i, r] of f.records.entries()) {
      expect([r.off, r.bytes, r.sha]).toEqual([off, bytes[i]!.length, sha12(bytes[i]!)]);
      off += bytes[i]!.length + 1;
    }
    expect(f.records.map((r) => r.parts[0]!.name)).toEqual([
      'claude_code.user_prompt',
      'claude_code.api_request',
      'claude_code.tool_result',
      'claude_code.tool_result',
      'claude_code.api_request',
    ]);
    expect(f.records.map((r) => r.tool)).toEqual([undefined, undefined, 'toolu_a_0', 'toolu_a_1', undefined]);
    expect(rx.r.stats().accepted.log_records).toBe(5);
  });

  test('the next request continues the stream (seq, ord, off); an exact retry lands nothing and is answered the same', async () => {
    const req = ccLogsRequest('S-http', 5, Date.UTC(2026, 10, 30, 5, 20), 'b');
    expect((await httpPost(rx.http, '/v1/logs', req, PB)).status).toBe(200);
    const again = await httpPost(rx.http, '/v1/logs', req, PB);
    expect(again.status).toBe(200);
    await rx.r.landed(10_000);
    const files = landedFiles(root, 'S-http');
    expect(files.map((f) => f.seq)).toEqual([1, 2]);
    expect(files[1]!.records.map((r) => r.ord)).toEqual([6, 7, 8, 9, 10]);
    const last = files[0]!.records[4]!;
    expect(files[1]!.records[0]!.off).toBe(last.off + last.bytes + 1);
    expect(rx.r.stats().requests.duplicates).toBe(1);
    expect(rx.r.stats().accepted.log_records).toBe(10);
    // The same request gzip-encoded is other bytes on the wire: not an exact retry, so it lands.
    expect((await httpPost(rx.http, '/v1/logs', gzipSync(req), { ...PB, 'content-encoding': 'gzip' })).status).toBe(200);
    await rx.r.landed(10_000);
    expect(landedFiles(root, 'S-http')).toHaveLength(3);
  });

  test('OTLP/JSON lands the same records as the protobuf it stands for', async () => {
    const pb = ccLogsRequest('S-json', 0);
    const json = protobufToOtlpJson(requestType('logs'), pb);
    const res = await httpPost(rx.http, '/v1/logs', json, JSON_CT);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(JSON.parse(res.body.toString())).toEqual({});
    await rx.r.landed(10_000);
    const landed = landedFiles(root, 'S-json')[0]!.records;
    expect(landed.map((r) => r.sha)).toEqual(recordBytes(pb).map(sha12));
  });

  test('metrics land in the spool as received; JSON is stored as its protobuf', async () => {
    const pb = ccMetricsRequest('S-http', tokens);
    expect((await httpPost(rx.http, '/v1/metrics', pb, PB)).status).toBe(200);
    const pb2 = ccMetricsRequest('S-http', { input: 1, output: 2, cacheRead: 3, cacheCreation: 4 }, Date.UTC(2026, 10, 30, 6));
    expect((await httpPost(rx.http, '/v1/metrics', protobufToOtlpJson(requestType('metrics'), pb2), JSON_CT)).status).toBe(200);
    await rx.r.landed(10_000);
    const files = spoolFiles(root);
    expect(files).toHaveLength(2);
    expect(files[0]).toMatch(/^metrics-\d{8}T\d{6}\.\d{9}Z-000001-otlp\.pb$/);
    expect(files[1]).toMatch(/-000002-otlp\.pb$/);
    expect(readFileSync(join(root, '_metrics', files[0]!)).equals(pb)).toBe(true);
    expect(readFileSync(join(root, '_metrics', files[1]!)).equals(pb2)).toBe(true);
    expect(tokenSums(files.map((f) => readFileSync(join(root, '_metrics', f))))).toEqual({ input: 101, output: 42, cacheRead: 303, cacheCreation: 24 });
    expect(rx.r.stats().accepted.metric_points).toBe(12);
  });

  test('traces land as otlp_span', async () => {
    const T = requestType('traces');
    const body = Buffer.from(
      T.encode(
        T.fromObject({
          resourceSpans: [
            {
              scopeSpans: [
                {
                  spans: [
                    {
                      traceId: Buffer.alloc(16, 1),
                      spanId: Buffer.alloc(8, 2),
                      name: 'claude_code.interaction',
                      attributes: [{ key: 'session.id', value: { stringValue: 'S-span' } }],
                    },
                  ],
                },
              ],
            },
          ],
        }),
      ).finish(),
    );
    expect((await httpPost(rx.http, '/v1/traces', body, PB)).status).toBe(200);
    await rx.r.landed(10_000);
    const f = landedFiles(root, 'S-span');
    expect(f).toHaveLength(1);
    expect(f[0]!.header).toMatchObject({ kind: 'otlp_span', src: 'otlp/traces' });
    expect(f[0]!.path).toMatch(/otlp\/otlp_span-.*-000001\.sd$/);
    expect(rx.r.stats().accepted.spans).toBe(1);
  });

  test('records with no usable session are refused singly (partial success); the rest land', async () => {
    const req = logsRequest([
      ccLogRecord('S-part', { name: 'user_prompt', seq: 0, timeMs: 1 }),
      ccLogRecord(undefined, { name: 'user_prompt', seq: 1, timeMs: 2 }),
      ccLogRecord('../escape', { name: 'user_prompt', seq: 2, timeMs: 3 }),
      ccLogRecord('S-part', { name: 'user_prompt', seq: 3, timeMs: 4 }),
    ]);
    const res = await httpPost(rx.http, '/v1/logs', req, PB);
    expect(res.status).toBe(200);
    const body = responseType('logs').toObject(responseType('logs').decode(res.body), { longs: Number }) as {
      partialSuccess: { rejectedLogRecords: number; errorMessage: string };
    };
    expect(body.partialSuccess.rejectedLogRecords).toBe(2);
    expect(body.partialSuccess.errorMessage).toMatch(
      /1 log records carry no session.id.*1 log records carry a session.id that cannot name a directory and were not landed: "\.\.\/escape" \(contains a path separator/,
    );
    await rx.r.landed(10_000);
    expect(landedFiles(root, 'S-part')[0]!.records).toHaveLength(2);
    expect(existsSync(join(root, '..', 'escape'))).toBe(false);
    const json = await httpPost(
      rx.http,
      '/v1/logs',
      protobufToOtlpJson(requestType('logs'), logsRequest([ccLogRecord(undefined, { name: 'x', seq: 0, timeMs: 5 })])),
      JSON_CT,
    );
    expect(JSON.parse(json.body.toString())).toEqual({ partialSuccess: { rejectedLogRecords: '1', errorMessage: expect.stringMatching(/no session.id/) } });
    expect(rx.r.stats().refused_items).toEqual({ no_session_id: 2, bad_session_id: 1 });
  });

  test('refusals: wrong path, method, media type, encoding, bad bytes, oversize; each lands nothing', async () => {
    const before = { sd: sdFiles(root).length, spool: spoolFiles(root).length };
    const statusText = async (path: string, body: Buffer | string, headers: Record<string, string | number>) => {
      const r = await httpPost(rx.http, path, body, headers, false);
      return [r.status, r.body.toString()] as const;
    };
    expect(await statusText('/v1/profiles', 'x', PB)).toEqual([404, expect.stringMatching(/no OTLP endpoint at \/v1\/profiles/)]);
    const media = await statusText('/v1/logs', 'x', { 'content-type': 'text/plain' });
    expect([media[0], JSON.parse(media[1]).message]).toEqual([
      415,
      'Content-Type "text/plain" is not supported; use application/x-protobuf or application/json',
    ]);
    const enc = await statusText('/v1/logs', 'x', { ...PB, 'content-encoding': 'br' });
    expect([enc[0], otlpTypes().Status.decode(Buffer.from(enc[1], 'latin1')).toJSON().message]).toEqual([
      415,
      expect.stringMatching(/^Content-Encoding "br" is not supported/),
    ]);
    expect((await statusText('/v1/logs', 'not gzip', { ...PB, 'content-encoding': 'gzip' }))[0]).toBe(400);
    const bad = await httpPost(rx.http, '/v1/logs', Buffer.from([0x0a, 0x05, 0x01]), PB);
    expect(bad.status).toBe(400);
    const status = otlpTypes().Status.toObject(otlpTypes().Status.decode(bad.body)) as { code: number; message: string };
    expect(status).toEqual({ code: 3, message: 'not an OTLP logs request: resourceLogs: length 5 runs past the end of the message (1 bytes left)' });
    const bj = await httpPost(rx.http, '/v1/metrics', '{"resourceMetrics": 5}', JSON_CT);
    expect([bj.status, JSON.parse(bj.body.toString())]).toEqual([
      400,
      { code: 3, message: 'not an OTLP metrics request: resourceMetrics: expected an array, got number 5' },
    ]);
    const get = await new Promise<number>((resolve) =>
      request(`http://${rx.http}/v1/logs`, (res) => {
        res.resume();
        resolve(res.statusCode!);
      }).end(),
    );
    expect(get).toBe(405);
    await rx.r.landed(10_000);
    expect(sdFiles(root).length).toBe(before.sd);
    expect(spoolFiles(root).length).toBe(before.spool);
    await rx.r.shutdown();
  });

  test('oversize: by Content-Length, by a chunked body, and by a gzip body that inflates past the limit', async () => {
    const small = await start(tempDir('aszcol-otlp-big-'), { max_request_bytes: '64KiB' });
    const big = Buffer.alloc(100_000, 0x41);
    const r1 = await httpPost(small.http, '/v1/logs', big, PB, false);
    expect([r1.status, r1.headers.connection]).toEqual([413, 'close']);
    const chunked = await new Promise<number>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: Number(small.http.split(':')[1]), path: '/v1/logs', method: 'POST', headers: PB }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      for (let i = 0; i < 10; i++) req.write(Buffer.alloc(16_384, 0x42));
      req.end();
    });
    expect(chunked).toBe(413);
    const bomb = gzipSync(Buffer.alloc(2_000_000));
    expect(bomb.length).toBeLessThan(64 * 1024);
    const r3 = await httpPost(small.http, '/v1/metrics', bomb, { ...PB, 'content-encoding': 'gzip' }, false);
    expect([r3.status, otlpTypes().Status.decode(r3.body).toJSON().message]).toEqual([413, 'the gzip body inflates past the limit of 65536 bytes']);
    expect(small.r.stats().refused_requests.too_large).toBe(3);
    await small.r.shutdown();
  });
});

describe('claude_code_otlp over gRPC', () => {
  test('logs, metrics and traces services; refusals carry the right codes', async () => {
    const root = tempDir('aszcol-otlp-grpc-');
    const rx = await start(root, { max_request_bytes: '256KiB' });
    const c = new RawGrpcClient(rx.grpc);
    try {
      const logs = ccLogsRequest('S-grpc', 0);
      expect((await c.export('logs', logs)).code).toBe(grpc.status.OK);
      const metrics = ccMetricsRequest('S-grpc', tokens);
      expect((await c.export('metrics', metrics)).code).toBe(grpc.status.OK);
      await rx.r.landed(10_000);
      expect(landedFiles(root, 'S-grpc')[0]!.records.map((r) => r.sha)).toEqual(recordBytes(logs).map(sha12));
      expect(readFileSync(join(root, '_metrics', spoolFiles(root)[0]!)).equals(metrics)).toBe(true);
      // Exact retry over gRPC too.
      expect((await c.export('logs', logs)).code).toBe(grpc.status.OK);
      await rx.r.landed(10_000);
      expect(landedFiles(root, 'S-grpc')).toHaveLength(1);

      const bad = await c.export('logs', Buffer.from('not protobuf at all, not at all'));
      expect([bad.code, bad.details]).toEqual([grpc.status.INVALID_ARGUMENT, expect.stringMatching(/^not an OTLP logs request: /)]);
      const over = await c.export('metrics', Buffer.alloc(300_000, 0x41));
      expect([over.code, over.details]).toEqual([grpc.status.RESOURCE_EXHAUSTED, 'the message is 300000 bytes, over the limit of 262144 (max_request_bytes)']);
      expect(over.metadata?.get('grpc-status-details-bin') ?? []).toEqual([]); // not retryable: no RetryInfo
      expect(rx.r.stats().requests.grpc).toBe(5);
      await rx.r.landed(10_000);
      expect(verifyRoot(root).problems).toEqual([]);
    } finally {
      c.close();
      await rx.r.shutdown();
    }
  });
});

describe('limits, locks and lifecycle', () => {
  test('a full spool refuses metrics as retryable: 429 with Retry-After, RESOURCE_EXHAUSTED with RetryInfo', async () => {
    const root = tempDir('aszcol-otlp-spool-');
    const rx = await start(root, { max_spool_bytes: '3KiB' });
    const c = new RawGrpcClient(rx.grpc);
    try {
      const m = (t: number) => ccMetricsRequest('S', tokens, t);
      expect((await httpPost(rx.http, '/v1/metrics', m(1), PB)).status).toBe(200);
      await rx.r.landed(10_000);
      const full = await httpPost(rx.http, '/v1/metrics', m(2), PB);
      expect([full.status, full.headers['retry-after']]).toEqual([429, '30']);
      expect(otlpTypes().Status.decode(full.body).toJSON().message).toMatch(/at its limit of 3072 \(max_spool_bytes\)/);
      const g = await c.export('metrics', m(3));
      expect(g.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      const detail = otlpTypes().Status.decode(g.metadata!.get('grpc-status-details-bin')[0] as Buffer) as unknown as {
        code: number;
        details: { type_url: string; value: Uint8Array }[];
      };
      expect(detail.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
      expect(detail.details[0]!.type_url).toBe('type.googleapis.com/google.rpc.RetryInfo');
      expect(otlpTypes().RetryInfo.toObject(otlpTypes().RetryInfo.decode(detail.details[0]!.value), { longs: Number })).toEqual({
        retryDelay: { seconds: 30 },
      });
      await rx.r.landed(10_000);
      expect(spoolFiles(root)).toHaveLength(1);
      expect(rx.r.stats().refused_requests.spool_full).toBe(2);
      // Logs still land: the limit is the metrics spool's.
      expect((await httpPost(rx.http, '/v1/logs', ccLogsRequest('S'), PB)).status).toBe(200);
    } finally {
      c.close();
      await rx.r.shutdown();
    }
  });

  test('a session locked by another collector: the request is answered at once, its records wait in the journal and land when the lock is free', async () => {
    const root = tempDir('aszcol-otlp-lock-');
    const logs: string[] = [];
    const r = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: { http: { endpoint: '127.0.0.1:0' } }, lock_wait: '300ms' }), {
      storageRoot: root,
      log: (level, msg) => logs.push(`${level} ${msg}`),
    });
    await r.start();
    const lock = new FileLock(sessionLockPath(root, 'S-locked'));
    lock.acquire();
    try {
      const req = ccLogsRequest('S-locked');
      expect((await httpPost(r.addresses().http!, '/v1/logs', req, PB)).status).toBe(200);
      expect(await r.landed(800)).toBe(false);
      expect(sdFiles(root)).toHaveLength(0);
      // The landing thread found the lock held (on a loaded machine its first round can come after 800 ms).
      expect(await eventually(() => r.stats().waiting_sessions === 1)).toBe(true);
      expect(r.stats()).toMatchObject({ waiting_sessions: 1, accepted: { log_records: 5 } });
      expect(r.stats().journal_bytes).toBeGreaterThan(req.length);
      expect(
        await eventually(() => logs.some((l) => /^warn session S-locked is locked by another collector .*its 5 records wait in the journal/.test(l))),
      ).toBe(true);
      lock.release();
      expect(await r.landed(10_000)).toBe(true);
      expect(landedFiles(root, 'S-locked')[0]!.records).toHaveLength(5);
      expect(r.stats()).toMatchObject({ waiting_sessions: 0, journal_bytes: 0 });
    } finally {
      lock.release();
      await r.shutdown();
    }
  });

  test('a request for two sessions, one locked: the free one lands at once, the other when its lock is free, nothing twice', async () => {
    const root = tempDir('aszcol-otlp-partial-');
    const rx = await start(root, { lock_wait: '200ms' });
    const lock = new FileLock(sessionLockPath(root, 'S-B'));
    lock.acquire();
    try {
      const req = logsRequest([
        ccLogRecord('S-A', { name: 'user_prompt', seq: 0, timeMs: 1 }),
        ccLogRecord('S-B', { name: 'user_prompt', seq: 0, timeMs: 2 }),
        ccLogRecord('S-A', { name: 'user_prompt', seq: 1, timeMs: 3 }),
      ]);
      expect((await httpPost(rx.http, '/v1/logs', req, PB)).status).toBe(200);
      // A second request for both while S-B waits: S-B's records stay in order behind the first ones.
      const req2 = logsRequest([
        ccLogRecord('S-B', { name: 'user_prompt', seq: 1, timeMs: 4 }),
        ccLogRecord('S-A', { name: 'user_prompt', seq: 2, timeMs: 5 }),
      ]);
      expect((await httpPost(rx.http, '/v1/logs', req2, PB)).status).toBe(200);
      for (let i = 0; i < 100 && landedFiles(root, 'S-A').flatMap((f) => f.records).length < 3; i++) await new Promise((r) => setTimeout(r, 50));
      expect(landedFiles(root, 'S-A').flatMap((f) => f.records.map((x) => x.ord))).toEqual([1, 2, 3]);
      expect(sdFiles(root).filter((n) => n.startsWith('otlp_log')).length).toBe(landedFiles(root, 'S-A').length);
      lock.release();
      expect(await rx.r.landed(10_000)).toBe(true);
      expect(landedFiles(root, 'S-A').flatMap((f) => f.records)).toHaveLength(3); // not landed twice
      const b = landedFiles(root, 'S-B').flatMap((f) => f.records);
      expect(b.map((x) => x.ord)).toEqual([1, 2]);
      expect(b.map((x) => x.sha)).toEqual([sha12(recordBytes(req)[1]!), sha12(recordBytes(req2)[0]!)]); // in the order received
      expect(rx.r.stats().accepted.log_records).toBe(5);
      expect(verifyRoot(root).problems).toEqual([]);
    } finally {
      lock.release();
      await rx.r.shutdown();
    }
  });

  test('one endpoint serves gRPC and HTTP', async () => {
    const root = tempDir('aszcol-otlp-shared-');
    const r = new OtlpReceiver(validateOtlpReceiverConfig({ endpoint: '127.0.0.1:0' }), { storageRoot: root });
    await r.start();
    const at = r.addresses();
    expect(Object.keys(at)).toEqual(['endpoint']);
    const c = new RawGrpcClient(at.endpoint!);
    try {
      expect((await httpPost(at.endpoint!, '/v1/logs', ccLogsRequest('S-one', 0), PB)).status).toBe(200);
      expect((await c.export('logs', ccLogsRequest('S-one', 5, Date.UTC(2026, 10, 30, 7), 'g'))).code).toBe(grpc.status.OK);
      expect((await c.export('metrics', ccMetricsRequest('S-one', tokens))).code).toBe(grpc.status.OK);
      expect((await httpPost(at.endpoint!, '/v1/metrics', ccMetricsRequest('S-one', tokens, 9), PB)).status).toBe(200);
      await r.landed(10_000);
      expect(landedFiles(root, 'S-one').flatMap((f) => f.records.map((x) => x.ord))).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(spoolFiles(root)).toHaveLength(2);
      expect(r.stats().requests).toMatchObject({ grpc: 2, http: 2 });
    } finally {
      c.close();
      await r.shutdown();
    }
  });

  test('a restart continues every stream and counter; sequences stay above what the local receiver landed', async () => {
    const root = tempDir('aszcol-otlp-restart-');
    // The local receiver has landed a transcript file with sequence 7 in this session.
    const target = {
      dir: join(root, 'S-both', 'streams', 'main'),
      prefix: 'transcript',
      stamp: '20261130T051412.000000000Z',
      at: '2026-11-30T05:14:12Z',
      header: {
        kind: 'transcript' as const,
        adapter: 'claude-code-local/0.1.0',
        dialect: 'claude-code/1',
        src: 'p/S-both.jsonl',
        session: 'S-both',
        stream: 'main',
      },
    };
    landLines(target, 7, [{ line: Buffer.from('{"type":"user"}'), off: 0, ord: 1 }], () => ({ from: 'external', parts: [] }));
    let rx = await start(root);
    expect((await httpPost(rx.http, '/v1/logs', ccLogsRequest('S-both', 0), PB)).status).toBe(200);
    expect((await httpPost(rx.http, '/v1/metrics', ccMetricsRequest('S-both', tokens, 1), PB)).status).toBe(200);
    await rx.r.shutdown();
    expect(parseKv(readFileSync(join(root, 'S-both', 'otlp', 'otlp_log.cursor'), 'utf8')).get('ord')).toBe('5');
    expect(parseKv(readFileSync(join(root, 'S-both', 'session.state'), 'utf8')).get('next_seq')).toBe('9');
    expect(parseKv(readFileSync(join(root, '_metrics', 'spool.state'), 'utf8')).get('next_seq')).toBe('2');

    rx = await start(root);
    expect((await httpPost(rx.http, '/v1/logs', ccLogsRequest('S-both', 5, Date.UTC(2026, 10, 30, 8), 'r'), PB)).status).toBe(200);
    expect((await httpPost(rx.http, '/v1/metrics', ccMetricsRequest('S-both', tokens, 2), PB)).status).toBe(200);
    await rx.r.shutdown();
    const files = landedFiles(root, 'S-both');
    expect(files.map((f) => [f.header.kind, f.seq])).toEqual([
      ['transcript', 7],
      ['otlp_log', 8],
      ['otlp_log', 9],
    ]);
    expect(files[2]!.records.map((r) => r.ord)).toEqual([6, 7, 8, 9, 10]);
    expect(spoolFiles(root).map((n) => n.split('-')[2])).toEqual(['000001', '000002']);
    expect(verifyRoot(root).problems).toEqual([]);
  });

  test('shutdown lands what was accepted before it stops, then releases every lock', async () => {
    const root = tempDir('aszcol-otlp-drain-');
    const rx = await start(root, { lock_wait: '5s' });
    const lock = new FileLock(sessionLockPath(root, 'S-drain'));
    lock.acquire();
    expect((await httpPost(rx.http, '/v1/logs', ccLogsRequest('S-drain'), PB, false)).status).toBe(200);
    const stopping = rx.r.shutdown();
    setTimeout(() => lock.release(), 200);
    await stopping;
    expect(landedFiles(root, 'S-drain')[0]!.records).toHaveLength(5);
    expect(existsSync(sessionLockPath(root, 'S-drain'))).toBe(false);
    expect(existsSync(join(root, '_metrics', '.lock'))).toBe(false);
    await expect(httpPost(rx.http, '/v1/logs', ccLogsRequest('S-drain'), PB, false)).rejects.toThrow(/ECONNREFUSED/);
  });

  test('a port already taken fails start with the configuration path, and binds nothing', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    const r = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: { grpc: { endpoint: '127.0.0.1:0' }, http: { endpoint: `127.0.0.1:${port}` } } }), {
      storageRoot: tempDir('aszcol-otlp-port-'),
    });
    await expect(r.start()).rejects.toThrow(AszError);
    await expect(r.start()).rejects.toThrow(/cannot start a receiver that is stopped/);
    const again = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: { http: { endpoint: `127.0.0.1:${port}` } } }), {
      storageRoot: tempDir('aszcol-otlp-port-'),
    });
    await expect(again.start()).rejects.toThrow(`receivers.claude_code_otlp.protocols.http.endpoint: cannot listen on 127.0.0.1:${port}`);
    blocker.close();
  });
});

describe('claude_code_otlp landing under steady load', () => {
  test('landing paces itself yet never stalls: a pass waiting for what was accepted is answered while requests keep coming, and once they stop everything lands with nobody waiting', async () => {
    const root = tempDir('aszcol-otlp-pace-');
    const rx = await start(root);
    let stop = false;
    let answered = 0;
    const refusals: number[] = [];
    // Four senders back to back, bounded in count so the loop ends by itself.
    const senders = Array.from({ length: 4 }, async (_, slot) => {
      for (let i = 0; !stop && i < 4000; i++) {
        const r = await httpPost(rx.http, '/v1/logs', ccLogsRequest(`S-pace-${slot}`, i * 5, undefined, `p${slot}x${i}`), PB);
        if (r.status === 200) answered++;
        else refusals.push(r.status);
      }
    });
    await new Promise((r) => setTimeout(r, 600));
    const acceptedBefore = rx.r.stats().accepted.log_records;
    const t0 = Date.now();
    // What the service's pass does before it parses: everything answered so far must land, now.
    expect(await rx.r.landed(10_000)).toBe(true);
    const waited = Date.now() - t0;
    expect(rx.r.stats().landed.records).toBeGreaterThanOrEqual(acceptedBefore);
    expect(waited).toBeLessThan(5_000);
    await new Promise((r) => setTimeout(r, 400));
    stop = true;
    await Promise.all(senders);
    expect(refusals).toEqual([]);
    const accepted = rx.r.stats().accepted.log_records;
    expect(accepted).toBe(answered * 5);
    // Nobody asks now: the receiver is quiet, so landing runs flat out on its own.
    expect(await eventually(() => rx.r.stats().landed.records === accepted, 5_000)).toBe(true);
    await rx.r.shutdown();
    expect(verifyRoot(root).problems).toEqual([]);
  });
});
