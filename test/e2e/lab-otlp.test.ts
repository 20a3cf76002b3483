/**
 * The real Claude Code CLI (through ../shared/lab) exporting its own telemetry to the receiver:
 * over gRPC, over HTTP/protobuf, and over one shared port. Ground truth is independent of the
 * receiver: the mock API's request log (every provider call and tool use the runtime was told
 * about), the runtime's own event sequence numbers, and — over HTTP — the exact bytes of every
 * request, recorded by a proxy in front of the receiver.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { createServer, request, type Server } from 'node:http';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { OtlpReceiver, validateOtlpReceiverConfig } from '../../src/receivers/claude-code-otlp/index.js';
import { otlpTypes } from '../../src/otlp/proto.js';
import { verifyRoot } from '../../src/storage/verify.js';
import { labRun, readRequestLog, type LoggedRequest } from '../helpers/lab.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { landedFiles } from '../helpers/root.js';
import { tokenSums } from '../helpers/otlp.js';

afterAll(cleanupTemp);

interface Recorded {
  path: string;
  body: Buffer;
  status: number;
}

/** A recording HTTP proxy: keeps every request body it forwards, and the status the receiver answered. */
function recordingProxy(target: string): Promise<{ server: Server; address: string; seen: Recorded[] }> {
  const seen: Recorded[] = [];
  const [host, port] = target.split(':');
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const fwd = request({ host, port: Number(port), path: req.url, method: req.method, headers: req.headers }, (up) => {
        const back: Buffer[] = [];
        up.on('data', (c: Buffer) => back.push(c));
        up.on('end', () => {
          seen.push({ path: req.url ?? '', body, status: up.statusCode ?? 0 });
          res.writeHead(up.statusCode ?? 502, up.headers);
          res.end(Buffer.concat(back));
        });
      });
      fwd.on('error', () => {
        res.writeHead(502);
        res.end();
      });
      fwd.end(body);
    });
  });
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, address: `127.0.0.1:${(server.address() as { port: number }).port}`, seen })));
}

interface EventView {
  event: string;
  attributes: Record<string, unknown>;
}

function checkAgainstGroundTruth(root: string, session: string, log: LoggedRequest[]): void {
  const files = landedFiles(root, session).filter((f) => f.header.kind === 'otlp_log');
  expect(files.length).toBeGreaterThan(0);
  for (const f of files)
    expect(f.header).toMatchObject({
      session,
      adapter: 'claude-code-otlp/0.1.0',
      dialect: 'claude-code/1',
      scope: { name: 'com.anthropic.claude_code.events' },
    });
  const records = files.flatMap((f) => f.records);
  const events = records.map((r) => r.parts[0]!.data as EventView);
  for (const e of events) expect(e.attributes['session.id']).toBe(session);

  // The runtime numbers its events 0, 1, 2, …: each one landed exactly once, none missing.
  const seqs = events.map((e) => Number(e.attributes['event.sequence'])).sort((a, b) => a - b);
  expect(seqs).toEqual(seqs.map((_, i) => i));
  expect(records.map((r) => r.ord)).toEqual(records.map((_, i) => i + 1));

  // Every provider call in the API's log has its api_request event, joined by request_id, once.
  const calls = events
    .filter((e) => e.event === 'claude_code.api_request')
    .map((e) => e.attributes.request_id)
    .sort();
  expect(calls).toEqual(log.map((l) => l.request_id).sort());
  for (const l of log) {
    const e = events.find((x) => x.event === 'claude_code.api_request' && x.attributes.request_id === l.request_id)!;
    expect([e.attributes.input_tokens, e.attributes.output_tokens, e.attributes.cache_read_tokens, e.attributes.cache_creation_tokens]).toEqual([
      l.usage.in,
      l.usage.out,
      l.usage.cache_read,
      l.usage.cache_write,
    ]);
  }
  // Every tool use the API handed out has its tool_result, lifted to `tool`, once.
  const tools = records
    .filter((r) => r.parts[0]!.name === 'claude_code.tool_result')
    .map((r) => r.tool)
    .sort();
  expect(tools).toEqual(log.flatMap((l) => l.tools.map((t) => t.id)).sort());
}

function spooled(root: string): Buffer[] {
  return readdirSync(join(root, '_metrics'))
    .filter((n) => n.endsWith('-otlp.pb'))
    .sort()
    .map((n) => readFileSync(join(root, '_metrics', n)));
}

function expectTokensMatch(root: string, log: LoggedRequest[]): void {
  const sum = (k: keyof LoggedRequest['usage']) => log.reduce((n, l) => n + l.usage[k], 0);
  expect(tokenSums(spooled(root))).toEqual({ input: sum('in'), output: sum('out'), cacheRead: sum('cache_read'), cacheCreation: sum('cache_write') });
}

describe('Claude Code exporting to the receiver', () => {
  const base = tempDir('aszcol-e2e-otlp-');

  test('over gRPC: every event lands once, the token counts in the spool equal the API log', async () => {
    const root = join(base, 'grpc-data');
    const r = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: { grpc: { endpoint: '127.0.0.1:0' } } }), { storageRoot: root });
    await r.start();
    try {
      const log = join(base, 'grpc-requests.jsonl');
      const run = await labRun({
        configDir: join(base, 'grpc-home'),
        cwd: join(base, 'grpc-work'),
        prompt: 'PARALLEL please',
        tools: 'Bash',
        log,
        otlp: `http://${r.addresses().grpc}`,
        protocol: 'grpc',
      });
      const truth = readRequestLog(log);
      expect(truth.length).toBeGreaterThanOrEqual(2);
      expect(await r.landed(10_000)).toBe(true);
      checkAgainstGroundTruth(root, run.session_id, truth);
      expectTokensMatch(root, truth);
      expect(r.stats().requests.grpc).toBeGreaterThanOrEqual(2);
      expect(r.stats().refused_requests).toEqual({});
    } finally {
      await r.shutdown();
    }
    expect(verifyRoot(root).problems).toEqual([]);
  });

  test('over HTTP/protobuf: every request the runtime sent landed, byte for byte', async () => {
    const root = join(base, 'http-data');
    const r = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: { http: { endpoint: '127.0.0.1:0' } } }), { storageRoot: root });
    await r.start();
    const proxy = await recordingProxy(r.addresses().http!);
    try {
      const log = join(base, 'http-requests.jsonl');
      const home = join(base, 'http-home');
      const run = await labRun({
        configDir: home,
        cwd: join(base, 'http-work'),
        prompt: 'PARALLEL please',
        tools: 'Bash',
        log,
        otlp: `http://${proxy.address}`,
        protocol: 'http/protobuf',
      });
      // A second prompt in the same session: more requests, the same streams continued.
      await labRun({
        configDir: home,
        cwd: join(base, 'http-work'),
        prompt: 'PARALLEL again',
        tools: 'Bash',
        log,
        otlp: `http://${proxy.address}`,
        protocol: 'http/protobuf',
        resume: run.session_id,
      });
      const truth = readRequestLog(log);
      expect(truth.length).toBeGreaterThanOrEqual(4);
      expect(proxy.seen.every((s) => s.status === 200)).toBe(true);
      const logsSent = proxy.seen.filter((s) => s.path === '/v1/logs');
      const metricsSent = proxy.seen.filter((s) => s.path === '/v1/metrics');
      expect(logsSent.length).toBeGreaterThan(0);
      expect(metricsSent.length).toBeGreaterThan(0);
      expect(await r.landed(10_000)).toBe(true);

      // Each metrics request is in the spool exactly as it was sent.
      const spool = spooled(root)
        .map((b) => b.toString('base64'))
        .sort();
      expect(spool).toEqual(metricsSent.map((s) => s.body.toString('base64')).sort());
      // Each log record of each logs request landed, in order, under the digest of its own bytes
      // as the runtime encoded them (found here with protobufjs's reader, not the receiver's).
      const sent = logsSent.flatMap((s) => recordSlices(s.body).map((x) => createHash('sha256').update(x).digest('hex').slice(0, 12)));
      expect(sent.length).toBe(
        logsSent.reduce(
          (n, s) =>
            n +
            (otlpTypes().ExportLogsServiceRequest.decode(s.body).toJSON().resourceLogs as { scopeLogs: { logRecords: unknown[] }[] }[]).reduce(
              (k, rl) => k + rl.scopeLogs.reduce((j, sl) => j + sl.logRecords.length, 0),
              0,
            ),
          0,
        ),
      );
      const landed = landedFiles(root, run.session_id).flatMap((f) => f.records.map((x) => x.sha));
      expect(landed).toEqual(sent);

      // The resumed process numbers its events from 0 again: check each process's run on its own.
      checkAgainstGroundTruthAcrossRuns(root, run.session_id, truth);
      expectTokensMatch(root, truth);
    } finally {
      proxy.server.close();
      await r.shutdown();
    }
    expect(verifyRoot(root).problems).toEqual([]);
  });

  test('over one shared port, gRPC and HTTP/protobuf side by side', async () => {
    const root = join(base, 'shared-data');
    const r = new OtlpReceiver(validateOtlpReceiverConfig({ endpoint: '127.0.0.1:0' }), { storageRoot: root });
    await r.start();
    try {
      const at = r.addresses().endpoint!;
      const logA = join(base, 'shared-a.jsonl');
      const logB = join(base, 'shared-b.jsonl');
      const [a, b] = await Promise.all([
        labRun({
          configDir: join(base, 'sa-home'),
          cwd: join(base, 'sa-work'),
          prompt: 'PARALLEL please',
          tools: 'Bash',
          log: logA,
          otlp: `http://${at}`,
          protocol: 'grpc',
        }),
        labRun({
          configDir: join(base, 'sb-home'),
          cwd: join(base, 'sb-work'),
          prompt: 'PARALLEL please',
          tools: 'Bash',
          log: logB,
          otlp: `http://${at}`,
          protocol: 'http/protobuf',
        }),
      ]);
      expect(await r.landed(10_000)).toBe(true);
      checkAgainstGroundTruth(root, a.session_id, readRequestLog(logA));
      checkAgainstGroundTruth(root, b.session_id, readRequestLog(logB));
      expectTokensMatch(root, [...readRequestLog(logA), ...readRequestLog(logB)]);
      expect(r.stats().requests.grpc).toBeGreaterThan(0);
      expect(r.stats().requests.http).toBeGreaterThan(0);
    } finally {
      await r.shutdown();
    }
    expect(verifyRoot(root).problems).toEqual([]);
  });
});

/** The payloads of field `id` (length-delimited) in buf[start, end), read with protobufjs's Reader. */
function fieldPayloads(buf: Buffer, id: number, start = 0, end = buf.length): Buffer[] {
  const r = protobuf.Reader.create(buf.subarray(start, end));
  const out: Buffer[] = [];
  while (r.pos < r.len) {
    const tag = r.uint32();
    if ((tag & 7) === 2) {
      const n = r.uint32();
      if (tag >>> 3 === id) out.push(buf.subarray(start + r.pos, start + r.pos + n));
      r.skip(n);
    } else r.skipType(tag & 7);
  }
  return out;
}

/** Every LogRecord's bytes in a logs request: resource_logs (1) → scope_logs (2) → log_records (2). */
function recordSlices(body: Buffer): Buffer[] {
  return fieldPayloads(body, 1).flatMap((rl) => fieldPayloads(rl, 2).flatMap((sl) => fieldPayloads(sl, 2)));
}

/** As checkAgainstGroundTruth, for a session continued by a second process: sequence numbers restart per process. */
function checkAgainstGroundTruthAcrossRuns(root: string, session: string, log: LoggedRequest[]): void {
  const records = landedFiles(root, session).flatMap((f) => f.records);
  const events = records.map((r) => r.parts[0]!.data as EventView);
  const seqs = events.map((e) => Number(e.attributes['event.sequence']));
  // Two processes, one after the other: in landed order, the first numbered 0..n-1, then the second 0..m-1.
  const second = seqs.indexOf(0, 1);
  expect(second).toBeGreaterThan(0);
  for (const part of [seqs.slice(0, second), seqs.slice(second)]) {
    expect([...part].sort((a, b) => a - b)).toEqual(part.map((_, i) => i));
  }
  const calls = events
    .filter((e) => e.event === 'claude_code.api_request')
    .map((e) => e.attributes.request_id)
    .sort();
  expect(calls).toEqual(log.map((l) => l.request_id).sort());
  const tools = records
    .filter((r) => r.parts[0]!.name === 'claude_code.tool_result')
    .map((r) => r.tool)
    .sort();
  expect(tools).toEqual(log.flatMap((l) => l.tools.map((t) => t.id)).sort());
}
