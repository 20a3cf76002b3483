import type express from 'express';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { isIP } from 'node:net';
import { formatEndpoint, join, strList } from '../config/reader.js';

/**
 * Which `Host` names a listener answers for. A page on another site can point its own name at
 * 127.0.0.1 (DNS rebinding) and read whatever a loopback listener serves; the browser then sends
 * that name as `Host`. So a request is answered only when its Host is an IP literal, `localhost`
 * (or a name under `.localhost`), the host the listener is bound to, or a configured name.
 */
export interface HostRule {
  /** Names to accept beyond the defaults: `aszcol.example`, `.svc.cluster.local` (a suffix), `*` (any). */
  allowedHosts: readonly string[];
  /** Where `allowed_hosts` is configured, for the refusal's message: `extensions.view.allowed_hosts`. */
  configPath: string;
}

/** `allowed_hosts`: a list of names; a leading `.` accepts every name under it, `*` any name. */
export function allowedHosts(v: unknown, path: string): string[] {
  const list = strList(v, join(path, 'allowed_hosts'), []);
  return list.map((h) => h.trim().toLowerCase());
}

/** The name part of a Host header: `[::1]:8787` → `::1`, `Example.com.:80` → `example.com`. */
export function hostName(header: string): string {
  const h = header.trim().toLowerCase();
  const v6 = /^\[([^\]]*)\](?::\d*)?$/.exec(h);
  const name = v6 ? v6[1]! : h.replace(/:\d*$/, '');
  return name.endsWith('.') ? name.slice(0, -1) : name;
}

export function hostAllowed(header: string | undefined, bindHost: string, allowed: readonly string[]): boolean {
  // HTTP/1.0 clients may send no Host; a browser always sends one, so no page can rebind without it.
  if (header === undefined) return true;
  const name = hostName(header);
  if (name === '') return false;
  if (isIP(name) || name === 'localhost' || name.endsWith('.localhost')) return true;
  if (name === bindHost.toLowerCase()) return true;
  return allowed.some((a) => a === '*' || a === name || (a.startsWith('.') && name.endsWith(a)));
}

function refuseHost(req: IncomingMessage, res: ServerResponse, rule: HostRule): void {
  const name = hostName(req.headers.host ?? '');
  res.writeHead(421, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' });
  res.end(`Host ${JSON.stringify(name)} is not a name this server answers for; if it is yours, add it to ${rule.configPath}\n`);
}

/**
 * Listens, turning a bind failure (port taken, address not local) into a rejected promise. Every
 * request passes the Host rule before the app sees it.
 */
export function listen(app: express.Express, host: string, port: number, rule: HostRule): Promise<Server> {
  return new Promise((res, rej) => {
    const server = createServer((req, response) => {
      if (!hostAllowed(req.headers.host, host, rule.allowedHosts)) return refuseHost(req, response, rule);
      app(req, response);
    });
    server.listen(port, host);
    server.once('listening', () => res(server));
    server.once('error', (err) => rej(new Error(`cannot listen on ${formatEndpoint({ host, port })}: ${err.message}`)));
  });
}

export function closeServer(server: Server | undefined): Promise<void> {
  if (!server) return Promise.resolve();
  return new Promise((res) => {
    server.close(() => res());
    // Keep-alive connections from probes would hold close() open; they carry no work to finish.
    server.closeAllConnections();
  });
}
