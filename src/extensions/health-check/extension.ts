import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { formatEndpoint } from '../../config/reader.js';
import type { Component, ComponentSettings } from '../../component/component.js';
import { closeServer, listen } from '../../component/http.js';
import type { HealthCheckConfig } from './config.js';

/**
 * Answers 503 (`unavailable`) when a component did not start, says it cannot do its work now
 * (landing failing on a full disk), or the last pass failed; 200 `degraded` when all works but
 * something needs a person (records in the quarantine); 200 `ok` otherwise. The JSON body says
 * which component or pass is the reason. A probe reads only the status code.
 */
export class HealthCheckExtension implements Component {
  private server: Server | undefined;
  private bound = '';

  constructor(
    private readonly cfg: HealthCheckConfig,
    private readonly s: ComponentSettings,
  ) {}

  async start(): Promise<void> {
    const app = express();
    app.disable('x-powered-by');
    app.get(this.cfg.path, (_req, res) => {
      const st = this.s.host.status();
      const status = !st.healthy ? 'unavailable' : st.degraded.length ? 'degraded' : 'ok';
      res.status(st.healthy ? 200 : 503).json({
        status,
        reasons: [...st.reasons, ...st.degraded],
        started_at: st.startedAt ?? null,
        components: Object.fromEntries(st.components.map((c) => [`${c.kind}s/${c.id}`, c.error ? { state: c.state, error: c.error } : { state: c.state }])),
        last_pass: st.lastPass
          ? { pass: st.lastPass.pass, ok: st.lastPass.ok, at: st.lastPass.at, duration_ms: st.lastPass.durationMs, problems: st.lastPass.problems }
          : null,
        passes: st.passes,
      });
    });
    this.server = await listen(app, this.cfg.endpoint.host, this.cfg.endpoint.port, {
      allowedHosts: this.cfg.allowedHosts,
      configPath: `extensions.${this.s.id}.allowed_hosts`,
    });
    const a = this.server.address() as AddressInfo;
    this.bound = formatEndpoint({ host: a.address, port: a.port });
  }

  addresses(): Record<string, string> {
    return { endpoint: this.bound };
  }

  async shutdown(): Promise<void> {
    await closeServer(this.server);
    this.server = undefined;
  }
}
