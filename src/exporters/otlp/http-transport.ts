/**
 * OTLP/HTTP: one POST of the protobuf request to `<endpoint>/v1/logs` or `/v1/metrics`, over a
 * keep-alive connection. A request counts as taken only when the answer has a 2xx status and a
 * body that is empty or protobuf; a redirect is not followed (a receiver that moved is configured
 * again, rather than a login page being taken for a receiver).
 */
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { gzipBody } from '../../otlp/codec.js';
import { HTTP_PATH } from '../../otlp/proto.js';
import type { OtlpExporterConfig } from './config.js';
import { readResponse, retryAfterMs, type ExportSignal, type Outcome, type Transport } from './transport.js';

/** The largest response body read; an OTLP response is a few bytes. */
const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

export class HttpTransport implements Transport {
  private readonly agent: HttpAgent;
  private readonly https: boolean;

  constructor(
    private readonly cfg: OtlpExporterConfig,
    readonly endpoint: string,
  ) {
    this.https = cfg.url!.protocol === 'https:';
    this.agent = this.https ? new HttpsAgent({ keepAlive: true, maxSockets: 1, ca: cfg.ca }) : new HttpAgent({ keepAlive: true, maxSockets: 1 });
  }

  async send(signal: ExportSignal, body: Buffer, abort?: AbortSignal): Promise<Outcome> {
    const url = new URL(this.cfg.url!.href.replace(/\/+$/, '') + HTTP_PATH[signal]);
    const where = `${url.href}`;
    const payload = this.cfg.compression === 'gzip' ? await gzipBody(body) : body;
    const headers: Record<string, string | number> = {
      ...this.cfg.headers,
      'content-type': 'application/x-protobuf',
      'content-length': payload.length,
    };
    if (this.cfg.compression === 'gzip') headers['content-encoding'] = 'gzip';
    return new Promise<Outcome>((resolve) => {
      let settled = false;
      const done = (o: Outcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        abort?.removeEventListener('abort', onAbort);
        resolve(o);
      };
      const req = (this.https ? httpsRequest : httpRequest)(url, { method: 'POST', agent: this.agent, headers }, (res) => {
        this.answer(signal, res, where, payload.length).then(done, (err: Error) =>
          done({ ok: false, kind: 'unavailable', message: `${where}: the answer broke off: ${err.message}` }),
        );
      });
      const timer = setTimeout(() => {
        req.destroy();
        done({ ok: false, kind: 'timeout', message: `${where}: no answer within ${this.cfg.timeoutMs} ms (timeout)` });
      }, this.cfg.timeoutMs);
      const onAbort = () => {
        req.destroy();
        done({ ok: false, kind: 'unavailable', message: `${where}: the request was abandoned (shutting down)` });
      };
      abort?.addEventListener('abort', onAbort, { once: true });
      req.on('error', (err) => done({ ok: false, kind: 'unavailable', message: `${where}: ${err.message}` }));
      req.end(payload);
    });
  }

  private async answer(signal: ExportSignal, res: IncomingMessage, where: string, bytes: number): Promise<Outcome> {
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of res) {
      size += (c as Buffer).length;
      if (size > MAX_RESPONSE_BYTES) {
        res.destroy();
        return {
          ok: false,
          kind: 'refused',
          message: `${where} answered ${res.statusCode} with a body over ${MAX_RESPONSE_BYTES} bytes; nothing is recorded as sent`,
        };
      }
      chunks.push(c as Buffer);
    }
    const body = Buffer.concat(chunks);
    const status = res.statusCode ?? 0;
    const type = String(res.headers['content-type'] ?? '');
    const said = `${where} answered ${status} ${res.statusMessage ?? ''}`.trimEnd();
    const text = () => (body.length && /^(text\/|application\/json)/i.test(type) ? `: ${body.toString('utf8', 0, Math.min(body.length, 300)).trim()}` : '');
    if (status >= 200 && status < 300) {
      const media = type.split(';')[0]!.trim().toLowerCase();
      if (body.length > 0 && media !== 'application/x-protobuf' && media !== 'application/protobuf') {
        return { ok: false, kind: 'unavailable', message: `${said} with ${media || 'no content type'}, not an OTLP response; nothing is recorded as sent` };
      }
      return readResponse(signal, body, where);
    }
    const after = retryAfterMs(res.headers['retry-after']);
    if (status === 429) return { ok: false, kind: 'throttled', message: `${said}${text()}`, retryAfterMs: after };
    if (status === 413)
      return {
        ok: false,
        kind: 'too_large',
        message: `${said}${text()}: the request (${bytes} bytes) is over the receiver's limit (the OAP takes 10 MiB; see batch_bytes)`,
      };
    if (status >= 300 && status < 400) {
      return {
        ok: false,
        kind: 'unavailable',
        message: `${said} (a redirect${res.headers.location ? ` to ${res.headers.location}` : ''}), which is not followed: configure the receiver's own address`,
      };
    }
    if (status >= 500 || status === 401 || status === 403 || status === 404 || status === 405) {
      return { ok: false, kind: 'unavailable', message: `${said}${text()}`, retryAfterMs: after };
    }
    return { ok: false, kind: 'refused', message: `${said}${text()}` };
  }

  close(): void {
    this.agent.destroy();
  }
}
