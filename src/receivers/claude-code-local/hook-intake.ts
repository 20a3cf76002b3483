/**
 * The local receiver's hook intake: a loopback listener that takes the plugin's observations
 * (`aszcol hook` posts each one) and appends them to the hook spool under the storage root,
 * answering only once the append is synced. It writes its address to `_hooks/endpoint.json` so a
 * hook finds it, and removes the file when it stops, so a hook never waits on a service that is gone.
 *
 * It takes `POST /v1/hook` with one `aszcol-hook/1` object and nothing else: it listens on
 * loopback only, and a body larger than the spool's line limit is refused.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { HOOK_SCHEMA } from '../../adapters/claude-code/hook-event.js';
import { appendSpoolLine, endpointPath, hooksDir, readHookEndpoint, MAX_SPOOL_LINE } from '../../storage/hook-spool.js';

export const HOOK_PATH = '/v1/hook';

export class HookIntake {
  private server: Server | undefined;
  private url = '';
  /** Observations appended since start (the service's own count; the spool does not say who wrote a line). */
  accepted = 0;

  constructor(
    private readonly root: string,
    private readonly host: string,
    private readonly port: number,
    private readonly warn: (msg: string, fields: { error: string }) => void,
  ) {}

  async start(): Promise<string> {
    const server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((ok, fail) => {
      server.once('error', fail);
      server.listen(this.port, this.host, () => ok());
    });
    this.server = server;
    const a = server.address() as AddressInfo;
    const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
    this.url = `http://${host}:${a.port}${HOOK_PATH}`;
    mkdirSync(hooksDir(this.root), { recursive: true });
    const tmp = `${endpointPath(this.root)}.tmp-${process.pid}`;
    writeFileSync(tmp, JSON.stringify({ url: this.url, pid: process.pid }) + '\n');
    renameSync(tmp, endpointPath(this.root));
    return this.url;
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const answer = (status: number, error?: string) => {
      res.writeHead(status, error ? { 'content-type': 'application/json' } : {});
      res.end(error ? JSON.stringify({ error }) : undefined);
    };
    if (req.method !== 'POST' || req.url !== HOOK_PATH) return answer(404, `only POST ${HOOK_PATH}`);
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of req as AsyncIterable<Buffer>) {
      size += c.length;
      if (size > MAX_SPOOL_LINE) return answer(413, `an observation is at most ${MAX_SPOOL_LINE} bytes`);
      chunks.push(c);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    let obs: { schema?: unknown; session?: unknown };
    try {
      obs = JSON.parse(text) as typeof obs;
    } catch (err) {
      return answer(400, `not JSON: ${(err as Error).message}`);
    }
    if (!obs || typeof obs !== 'object' || obs.schema !== HOOK_SCHEMA) return answer(400, `not an ${HOOK_SCHEMA} observation`);
    try {
      await appendSpoolLine(this.root, typeof obs.session === 'string' ? obs.session : undefined, JSON.stringify(obs));
      this.accepted++;
      answer(204);
    } catch (err) {
      // The hook falls back to appending itself, so nothing is lost; the service says why it could not.
      this.warn('hook observation not spooled', { error: (err as Error).message });
      answer(503, (err as Error).message);
    }
  }

  async stop(): Promise<void> {
    // Only our own endpoint file: a second service on the same root may have written its own since.
    if (readHookEndpoint(this.root)?.url === this.url) rmSync(endpointPath(this.root), { force: true });
    const s = this.server;
    this.server = undefined;
    if (!s) return;
    // A hook's request is one short exchange; an idle kept-alive connection must not hold the shutdown.
    const closed = new Promise<void>((ok) => s.close(() => ok()));
    s.closeIdleConnections();
    await closed;
  }
}
