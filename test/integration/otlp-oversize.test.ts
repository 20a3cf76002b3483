import { afterAll, describe, expect, test } from '@jest/globals';
import { request } from 'node:http';
import { connect } from 'node:net';
import { OtlpReceiver, validateOtlpReceiverConfig } from '../../src/receivers/claude-code-otlp/index.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

/** Node's own client, writing the whole body before it reads: the one that saw EPIPE when the server hung up early. */
function postLarge(address: string, bytes: number, declareLength: boolean): Promise<{ status: number; body: string } | { error: string }> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  return new Promise((res) => {
    const headers: Record<string, string | number> = { 'content-type': 'application/x-protobuf' };
    if (declareLength) headers['content-length'] = bytes;
    const req = request({ host, port, path: '/v1/logs', method: 'POST', headers }, (r) => {
      let body = '';
      r.setEncoding('utf8');
      r.on('data', (c: string) => {
        body += c;
      });
      r.on('end', () => res({ status: r.statusCode ?? 0, body }));
    });
    req.on('error', (err) => res({ error: (err as NodeJS.ErrnoException).code ?? err.message }));
    const chunk = Buffer.alloc(1024 * 1024, 0x0a);
    let left = bytes;
    const pump = (): void => {
      while (left > 0) {
        const n = Math.min(left, chunk.length);
        left -= n;
        if (!req.write(n === chunk.length ? chunk : chunk.subarray(0, n))) {
          req.once('drain', pump);
          return;
        }
      }
      req.end();
    };
    pump();
  });
}

/**
 * A client that writes its whole body before it reads anything (as many HTTP libraries do), slowly:
 * 20 MiB at 1 MiB per `everyMs`. Resolves with what it read afterwards, or the error its writes got.
 */
function writeAllThenRead(address: string, bytes: number, everyMs: number): Promise<{ head: string } | { error: string }> {
  const [host, port] = [address.slice(0, address.lastIndexOf(':')), Number(address.slice(address.lastIndexOf(':') + 1))];
  return new Promise((res) => {
    const sock = connect(port, host);
    const got: Buffer[] = [];
    sock.pause(); // nothing is read until the whole body is written
    sock.on('data', (c: Buffer) => got.push(c));
    sock.on('error', (err: NodeJS.ErrnoException) => res({ error: err.code ?? err.message }));
    sock.once('connect', () => {
      sock.write(`POST /v1/logs HTTP/1.1\r\nHost: ${address}\r\nContent-Type: application/x-protobuf\r\nContent-Length: ${bytes}\r\n\r\n`);
      const chunk = Buffer.alloc(1024 * 1024, 0x0a);
      let left = bytes;
      const next = (): void => {
        if (left <= 0) {
          // The answer's head, once it has come whole (the connection itself may stay open for reuse).
          const headOf = () => {
            const text = Buffer.concat(got).toString('latin1');
            if (text.includes('\r\n\r\n')) {
              res({ head: text.split('\r\n')[0]! });
              sock.destroy();
            }
          };
          sock.on('data', headOf);
          sock.on('end', () => res({ error: `closed before an answer: ${JSON.stringify(Buffer.concat(got).toString('latin1'))}` }));
          sock.resume();
          headOf();
          return;
        }
        const n = Math.min(left, chunk.length);
        left -= n;
        sock.write(chunk.subarray(0, n), (err) => (err ? undefined : setTimeout(next, everyMs)));
      };
      next();
    });
  });
}

describe('a body over max_request_bytes is refused with an answer every client can read', () => {
  test('a client that writes 20 MiB over 5 s before reading anything still reads the 413 (the body is drained while it arrives)', async () => {
    const r = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: { http: { endpoint: '127.0.0.1:0' } } }), { storageRoot: tempDir('aszcol-otlp-slow-') });
    await r.start();
    try {
      expect(await writeAllThenRead(r.addresses().http!, 20 * 1024 * 1024, 250)).toEqual({ head: 'HTTP/1.1 413 Payload Too Large' });
    } finally {
      await r.shutdown();
    }
  }, 60_000);

  const root = tempDir('aszcol-otlp-oversize-');
  let rx: OtlpReceiver | undefined;

  test.each([
    ['its own HTTP port', { protocols: { http: { endpoint: '127.0.0.1:0' } } }],
    ['the one port shared with gRPC', { endpoint: '127.0.0.1:0' }],
  ])(
    'on %s, 20 MiB against the default 16 MiB limit, declared and chunked: 413 with the reason, never EPIPE or a reset',
    async (_where, cfg) => {
      rx = new OtlpReceiver(validateOtlpReceiverConfig(cfg), { storageRoot: root });
      await rx.start();
      const a = rx.addresses();
      const http = a.http ?? a.endpoint!;
      for (const declared of [true, false]) {
        const r = await postLarge(http, 20 * 1024 * 1024, declared);
        expect(r).toEqual({ status: 413, body: expect.stringContaining('max_request_bytes') });
      }
      // The receiver still takes requests afterwards.
      const small = await postLarge(http, 0, true);
      expect(small).toEqual({ status: 200, body: '' });
      await rx.shutdown();
      rx = undefined;
    },
    60_000,
  );

  afterAll(async () => {
    await rx?.shutdown();
  });
});
