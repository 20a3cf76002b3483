import { afterAll, describe, expect, test } from '@jest/globals';
import { request } from 'node:http';
import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { closeServer, hostAllowed, hostName, listen } from '../../src/component/http.js';
import { ViewExtension } from '../../src/extensions/view/extension.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

/** A GET with the Host header a browser on another site would send after rebinding its name to 127.0.0.1. */
function get(port: number, path: string, host: string | undefined): Promise<{ status: number; body: string }> {
  return new Promise((res, rej) => {
    const headers: Record<string, string> = {};
    if (host !== undefined) headers.host = host;
    const req = request({ host: '127.0.0.1', port, path, headers, setHost: host === undefined ? false : undefined }, (r) => {
      let body = '';
      r.setEncoding('utf8');
      r.on('data', (c: string) => {
        body += c;
      });
      r.on('end', () => res({ status: r.statusCode ?? 0, body }));
    });
    req.on('error', rej);
    req.end();
  });
}

describe('listeners answer only for names that cannot be rebound (DNS rebinding)', () => {
  test('the rule: IP literals, localhost, the bound host and configured names; a foreign name is refused', () => {
    expect(hostName('[::1]:8787')).toBe('::1');
    expect(hostName('Example.COM.:80')).toBe('example.com');
    for (const h of ['127.0.0.1:8787', '[::1]:8787', '10.1.2.3', 'localhost:8787', 'app.localhost']) expect(hostAllowed(h, '127.0.0.1', [])).toBe(true);
    expect(hostAllowed('evil.example', '127.0.0.1', [])).toBe(false);
    expect(hostAllowed('evil.example:8787', '127.0.0.1', [])).toBe(false);
    expect(hostAllowed('', '127.0.0.1', [])).toBe(false);
    expect(hostAllowed('aszcol.internal', 'aszcol.internal', [])).toBe(true);
    expect(hostAllowed('aszcol.ns.svc.cluster.local', '0.0.0.0', ['.svc.cluster.local'])).toBe(true);
    expect(hostAllowed('svc.cluster.local.evil.example', '0.0.0.0', ['.svc.cluster.local'])).toBe(false);
    expect(hostAllowed('anything.example', '0.0.0.0', ['*'])).toBe(true);
    expect(hostAllowed(undefined, '127.0.0.1', [])).toBe(true);
  });

  test('a listener refuses a foreign Host with 421 naming the setting, and serves loopback and configured names', async () => {
    const app = express();
    app.get('/x', (_req, res) => {
      res.send('secret');
    });
    let server: Server | undefined;
    try {
      server = await listen(app, '127.0.0.1', 0, { allowedHosts: ['aszcol.example'], configPath: 'extensions.test.allowed_hosts' });
      const port = (server.address() as AddressInfo).port;
      const refused = await get(port, '/x', 'evil.example');
      expect(refused.status).toBe(421);
      expect(refused.body).not.toContain('secret');
      expect(refused.body).toContain('extensions.test.allowed_hosts');
      expect(await get(port, '/x', `127.0.0.1:${port}`)).toEqual({ status: 200, body: 'secret' });
      expect(await get(port, '/x', `localhost:${port}`)).toEqual({ status: 200, body: 'secret' });
      expect(await get(port, '/x', 'aszcol.example')).toEqual({ status: 200, body: 'secret' });
    } finally {
      await closeServer(server);
    }
  });

  test("the view's conversation list is not given to a rebound name", async () => {
    const ext = new ViewExtension({ endpoint: '127.0.0.1:0', allowedHosts: [] }, { storageRoot: tempDir() });
    await ext.start();
    try {
      const port = Number(ext.address().split(':').pop());
      expect((await get(port, '/api/conversations', 'evil.example')).status).toBe(421);
      expect((await get(port, '/api/conversations', `127.0.0.1:${port}`)).status).toBe(200);
    } finally {
      await ext.shutdown();
    }
  });
});
