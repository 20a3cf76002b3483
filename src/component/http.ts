import type express from 'express';
import type { Server } from 'node:http';
import { formatEndpoint } from '../config/reader.js';

/** Listens, turning a bind failure (port taken, address not local) into a rejected promise. */
export function listen(app: express.Express, host: string, port: number): Promise<Server> {
  return new Promise((res, rej) => {
    const server = app.listen(port, host);
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
