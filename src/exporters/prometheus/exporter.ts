/**
 * The `prometheus` exporter: `claude_code.token.usage` as a Prometheus counter,
 * `claude_code_token_usage_tokens_total{session_id, model, query_source, type}` (the usual
 * translation of an OpenTelemetry monotonic sum: dots to underscores, the unit, `_total`).
 *
 * Its send stage reads the spooled requests it has not read yet (the same source an `otlp`
 * exporter would send: derived, or the receiver's) and adds their points; a scrape reads the
 * totals. After a restart it reads the whole spool again, so the totals are the spool's.
 */
import express from 'express';
import { readdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Counter, Registry } from 'prom-client';
import { formatEndpoint } from '../../config/reader.js';
import type { Component, ComponentSettings, PassContext, StageResult } from '../../service/component.js';
import { closeServer, listen } from '../../service/http.js';
import { METRICS_DIR, SPOOL_NAME } from '../../receivers/claude-code-otlp/metrics-spool.js';
import { DERIVED_SPOOL_NAME } from '../../processors/token-metrics/spool.js';
import { METRIC_DESCRIPTION, tokenPoints } from '../../processors/token-metrics/points.js';
import { metricsSourceOfRunning } from '../otlp/source.js';
import type { PrometheusExporterConfig } from './config.js';

export const PROMETHEUS_NAME = 'claude_code_token_usage_tokens_total';

export class PrometheusExporter implements Component {
  readonly registry = new Registry();
  private readonly counter: Counter<'session_id' | 'model' | 'query_source' | 'type'>;
  private readonly read = new Set<string>();
  private server: Server | undefined;
  private bound = '';

  constructor(private readonly cfg: PrometheusExporterConfig, private readonly s: ComponentSettings) {
    this.counter = new Counter({
      name: PROMETHEUS_NAME, help: METRIC_DESCRIPTION, labelNames: ['session_id', 'model', 'query_source', 'type'], registers: [this.registry],
    });
  }

  async start(): Promise<void> {
    const app = express();
    app.disable('x-powered-by');
    app.get(this.cfg.path, (_req, res, next) => {
      this.registry.metrics().then((text) => res.type(this.registry.contentType).send(text), next);
    });
    this.server = await listen(app, this.cfg.endpoint.host, this.cfg.endpoint.port);
    const a = this.server.address() as AddressInfo;
    this.bound = formatEndpoint({ host: a.address, port: a.port });
  }

  addresses(): Record<string, string> {
    return { endpoint: this.bound };
  }

  /** Adds the points of spooled requests not read yet. */
  async send(_ctx: PassContext): Promise<StageResult> {
    const source = metricsSourceOfRunning(this.s.host.status().components);
    if (!source) return {};
    const re = source === 'derived' ? DERIVED_SPOOL_NAME : SPOOL_NAME;
    const dir = join(this.s.storageRoot, METRICS_DIR);
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => re.test(n) && !this.read.has(n)).sort();
    } catch {
      return {};
    }
    const problems: string[] = [];
    let points = 0;
    for (const n of names) {
      try {
        for (const p of tokenPoints(readFileSync(join(dir, n)))) {
          this.counter.inc({ session_id: p.session, model: p.model, query_source: p.query_source, type: p.type }, p.value);
          points++;
        }
      } catch (err) {
        problems.push(`${this.s.id}: ${METRICS_DIR}/${n}: ${(err as Error).message}`);
      }
      this.read.add(n);
    }
    return { changed: names.length > 0, counts: { spool_files: names.length, points }, problems };
  }

  async shutdown(): Promise<void> {
    await closeServer(this.server);
    this.server = undefined;
  }
}
