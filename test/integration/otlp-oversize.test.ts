import { afterAll, describe, expect, test } from '@jest/globals';
import { request } from 'node:http';
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

describe('a body over max_request_bytes is refused with an answer every client can read', () => {
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
