/**
 * Bad input as a feature: hundreds of broken requests over both transports, to a receiver in a
 * process of its own. Every one is refused with a 4xx or an error status, nothing lands, the
 * process stays up and still lands a good request afterwards, and it shuts down cleanly.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { request } from 'node:http';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import * as grpc from '@grpc/grpc-js';
import { requestType, type Signal } from '../../src/otlp/proto.js';
import { protobufToOtlpJson } from '../../src/otlp/json.js';
import { eventually } from '../helpers/wait.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { RawGrpcClient, ccLogsRequest, ccMetricsRequest, httpPost, startRunner } from '../helpers/otlp.js';
import { rng } from '../helpers/rng.js';

const runners: { child: { kill: (s?: NodeJS.Signals) => boolean; exitCode: number | null } }[] = [];
afterAll(() => {
  // A test that failed half-way must not leave its receiver process behind.
  for (const r of runners) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  cleanupTemp();
});

const MAX = 64 * 1024;
const SIGNALS: Signal[] = ['logs', 'metrics', 'traces'];

/** Landed anything? Session files or spooled requests. */
function landed(root: string): string[] {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (/\.(sd|pb)$/.test(e.name)) out.push(join(d, e.name));
    }
  };
  if (existsSync(root)) walk(root);
  return out;
}

/** Sends raw bytes on a TCP connection and collects whatever comes back until the server closes or 2 s pass. */
function rawTcp(address: string, bytes: Buffer): Promise<string> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  return new Promise((resolve) => {
    const s = connect(port, host, () => s.end(bytes));
    let got = '';
    s.on('data', (d) => (got += d.toString('latin1')));
    s.on('error', () => resolve(got));
    s.on('close', () => resolve(got));
    setTimeout(() => {
      s.destroy();
      resolve(got);
    }, 2000).unref();
  });
}

function broken(r: () => number): { name: string; signal: Signal; body: Buffer | string; headers: Record<string, string> }[] {
  const out: ReturnType<typeof broken> = [];
  const pb = { 'content-type': 'application/x-protobuf' };
  const js = { 'content-type': 'application/json' };
  const valid: Record<Signal, Buffer> = {
    logs: ccLogsRequest('M-1'),
    metrics: ccMetricsRequest('M-1', { input: 1, output: 2, cacheRead: 3, cacheCreation: 4 }),
    traces: Buffer.from(
      requestType('traces')
        .encode(
          requestType('traces').fromObject({
            resourceSpans: [{ scopeSpans: [{ spans: [{ name: 'x', attributes: [{ key: 'session.id', value: { stringValue: 'M-1' } }] }] }] }],
          }),
        )
        .finish(),
    ),
  };
  const randomBytes = (n: number) => Buffer.from(Array.from({ length: n }, () => Math.floor(r() * 256)));
  for (const signal of SIGNALS) {
    for (let i = 0; i < 40; i++) out.push({ name: 'random bytes', signal, body: randomBytes(64 + Math.floor(r() * 4000)), headers: pb });
    for (let i = 0; i < 25; i++) {
      const v = valid[signal];
      out.push({ name: 'truncated protobuf', signal, body: v.subarray(0, 1 + Math.floor(r() * (v.length - 2))), headers: pb });
    }
    out.push({ name: 'group wire type', signal, body: Buffer.from([0x0b, 0x0c]), headers: pb });
    out.push({ name: 'invalid UTF-8 in a string', signal, body: Buffer.from([0x0a, 0x07, 0x0a, 0x05, 0x0a, 0x03, 0x0a, 0x01, 0xff]), headers: pb });
    const json = protobufToOtlpJson(requestType(signal), valid[signal]);
    for (let i = 0; i < 15; i++) out.push({ name: 'truncated JSON', signal, body: json.slice(0, 1 + Math.floor(r() * (json.length - 2))), headers: js });
    const key = signal === 'logs' ? 'resourceLogs' : signal === 'metrics' ? 'resourceMetrics' : 'resourceSpans';
    const inner =
      signal === 'logs'
        ? '{"scopeLogs":[{"logRecords":[{"traceId":"zz"}]}]}'
        : signal === 'metrics'
          ? '{"scopeMetrics":[{"metrics":[{"sum":{"dataPoints":[{"asInt":"1.5"}]}}]}]}'
          : '{"scopeSpans":[{"spans":[{"kind":"SIDEWAYS"}]}]}';
    // (A key another signal uses is simply unknown here, and ignored as OTLP requires: not broken.)
    for (const body of [
      '',
      'null',
      '[]',
      '"a"',
      '12',
      `{"${key}":{}}`,
      `{"${key}":[1]}`,
      `{"${key}":[${inner}]}`,
      '['.repeat(60_000),
      '{"a":'.repeat(12_000),
    ]) {
      out.push({ name: 'bad JSON', signal, body, headers: js });
    }
    for (const ct of ['text/plain', 'application/grpc', 'multipart/form-data; boundary=x', 'application/x-www-form-urlencoded', 'application/protobufjson']) {
      out.push({ name: 'wrong content type', signal, body: valid[signal], headers: { 'content-type': ct } });
    }
    out.push({ name: 'no content type', signal, body: valid[signal], headers: { 'content-type': '' } });
    out.push({ name: 'oversize', signal, body: Buffer.alloc(MAX + 1, 0x0a), headers: pb });
    out.push({ name: 'gzip bomb', signal, body: gzipSync(Buffer.alloc(4 * MAX)), headers: { ...pb, 'content-encoding': 'gzip' } });
    out.push({ name: 'not gzip', signal, body: valid[signal], headers: { ...pb, 'content-encoding': 'gzip' } });
    out.push({ name: 'gzipped garbage', signal, body: gzipSync(randomBytes(300)), headers: { ...pb, 'content-encoding': 'gzip' } });
    out.push({ name: 'unknown encoding', signal, body: valid[signal], headers: { ...pb, 'content-encoding': 'zstd' } });
  }
  return out;
}

describe('malformed input', () => {
  test('hundreds of broken requests over HTTP and gRPC: all refused, nothing landed, the process survives', async () => {
    const root = tempDir('aszcol-otlp-bad-');
    const rx = await startRunner(root, { protocols: { grpc: { endpoint: '127.0.0.1:0' }, http: { endpoint: '127.0.0.1:0' } }, max_request_bytes: MAX });
    runners.push(rx);
    const r = rng(7);
    const cases = broken(r);
    const statuses = new Map<string, Set<number>>();
    for (const c of cases) {
      const res = await httpPost(rx.addresses.http!, `/v1/${c.signal}`, c.body, c.headers, false);
      (statuses.get(c.name) ?? statuses.set(c.name, new Set()).get(c.name)!).add(res.status);
      expect([c.name, res.status >= 400 && res.status < 500 ? '4xx' : res.status]).toEqual([c.name, '4xx']);
    }
    expect(cases.length).toBeGreaterThan(300);
    expect(Object.fromEntries([...statuses].map(([k, v]) => [k, [...v].sort()]))).toEqual({
      'random bytes': [400],
      'truncated protobuf': [400],
      'group wire type': [400],
      'invalid UTF-8 in a string': [400],
      'truncated JSON': [400],
      'bad JSON': [400],
      'wrong content type': [415],
      'no content type': [415],
      oversize: [413],
      'gzip bomb': [413],
      'not gzip': [400],
      'gzipped garbage': [400],
      'unknown encoding': [415],
    });

    // Not OTLP, not even HTTP: garbage on the sockets, an HTTP/2 preface then garbage, a wrong path and method.
    for (let i = 0; i < 20; i++) await rawTcp(rx.addresses.http!, Buffer.from(Array.from({ length: 200 }, () => Math.floor(r() * 256))));
    expect(await rawTcp(rx.addresses.http!, Buffer.from('GARBAGE / HTTP/9.9\r\n\r\n'))).toMatch(/^HTTP\/1\.1 400/);
    for (let i = 0; i < 20; i++) await rawTcp(rx.addresses.grpc!, Buffer.from(Array.from({ length: 200 }, () => Math.floor(r() * 256))));
    await rawTcp(rx.addresses.grpc!, Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.alloc(100, 0xff)]));
    const get = await new Promise<number>((resolve) =>
      request(`http://${rx.addresses.http}/v1/logs`, { method: 'PUT' }, (res) => {
        res.resume();
        resolve(res.statusCode!);
      }).end('x'),
    );
    expect(get).toBe(405);

    // gRPC: random and truncated messages, and messages past the limit and past twice the limit.
    const c = new RawGrpcClient(rx.addresses.grpc!);
    const codes = new Set<number>();
    for (const signal of SIGNALS) {
      for (let i = 0; i < 30; i++)
        codes.add((await c.export(signal, Buffer.from(Array.from({ length: 64 + Math.floor(r() * 2000) }, () => Math.floor(r() * 256))))).code);
      const v = signal === 'logs' ? ccLogsRequest('M-2') : ccMetricsRequest('M-2', { input: 1, output: 1, cacheRead: 1, cacheCreation: 1 });
      for (let i = 0; i < 10; i++) codes.add((await c.export(signal, v.subarray(0, 1 + Math.floor(r() * (v.length - 2))))).code);
      codes.add((await c.export(signal, Buffer.alloc(MAX + 10, 0x0a))).code);
      codes.add((await c.export(signal, Buffer.alloc(3 * MAX, 0x0a))).code);
    }
    // Only refusals: nothing OK, nothing INTERNAL or UNAVAILABLE.
    expect([...codes].sort()).toEqual([grpc.status.INVALID_ARGUMENT, grpc.status.RESOURCE_EXHAUSTED].sort());
    c.close();

    expect(() => process.kill(rx.pid, 0)).not.toThrow();
    expect(landed(root)).toEqual([]);

    // Still serving: a good request lands.
    expect((await httpPost(rx.addresses.http!, '/v1/logs', ccLogsRequest('M-ok'), { 'content-type': 'application/x-protobuf' }, false)).status).toBe(200);
    expect(await eventually(() => landed(root).length === 1)).toBe(true);
    expect(landed(root)).toHaveLength(1);
    const { code, stats } = await rx.stop();
    expect(code).toBe(0);
    const s = stats as { refused_requests: Record<string, number>; accepted: Record<string, number> };
    expect(s.accepted.log_records).toBe(5);
    expect(Object.values(s.refused_requests).reduce((a, b) => a + b, 0)).toBeGreaterThanOrEqual(cases.length + 100);
    expect(rx.stderr()).not.toMatch(/"level":"error"/);
  });

  test('one shared port: garbage and half-prefaces are dropped, both protocols still work', async () => {
    const root = tempDir('aszcol-otlp-bad-shared-');
    const rx = await startRunner(root, { endpoint: '127.0.0.1:0' });
    runners.push(rx);
    const at = rx.addresses.endpoint!;
    const r = rng(11);
    for (let i = 0; i < 30; i++) await rawTcp(at, Buffer.from(Array.from({ length: 1 + Math.floor(r() * 300) }, () => Math.floor(r() * 256))));
    await rawTcp(at, Buffer.from('PRI * HTTP/2.0\r\n')); // a preface cut short, then the client goes away
    await rawTcp(at, Buffer.concat([Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n'), Buffer.alloc(50, 0)]));
    expect(
      await rawTcp(
        at,
        Buffer.from('POST /v1/logs HTTP/1.1\r\nhost: x\r\ncontent-type: application/x-protobuf\r\ncontent-length: 3\r\nconnection: close\r\n\r\nabc'),
      ),
    ).toMatch(/^HTTP\/1\.1 400/);
    const c = new RawGrpcClient(at);
    expect((await c.export('logs', Buffer.from('garbage garbage garbage garbage garbage'))).code).toBe(grpc.status.INVALID_ARGUMENT);
    expect((await c.export('logs', ccLogsRequest('SH-1'))).code).toBe(grpc.status.OK);
    c.close();
    expect((await httpPost(at, '/v1/logs', ccLogsRequest('SH-2'), { 'content-type': 'application/x-protobuf' }, false)).status).toBe(200);
    expect(await eventually(() => landed(root).length === 2)).toBe(true);
    expect((await rx.stop()).code).toBe(0);
  });
});
