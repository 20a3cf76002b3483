/**
 * The `prometheus` exporter: `claude_code.token.usage` as a Prometheus counter,
 * `claude_code_token_usage_tokens_total{session_id, model, query_source, type}` (the usual
 * translation of an OpenTelemetry monotonic sum: dots to underscores, the unit, `_total`), and the
 * derived MCP metrics the same way: `agent_mcp_calls_total` and `agent_mcp_duration_milliseconds_total`
 * `{session_id, mcp_server_name, mcp_tool_name, outcome, query_source}`.
 *
 * Its send stage reads the spooled requests it has not read yet (the same source an `otlp`
 * exporter would send: derived, or the receiver's) and adds their points; a scrape reads the
 * totals. It is one of the spool's readers (storage/metrics-spool.ts): a spool file the `otlp` exporters
 * have sent is removed only once this exporter has read it. After a restart it reads what is in
 * the spool again: a counter that starts over, as a restarted process's counters do.
 */
import express from 'express';
import { readdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Counter, Registry } from 'prom-client';
import { formatEndpoint } from '../../config/reader.js';
import type { Component, ComponentSettings, PassContext, StageResult } from '../../component/component.js';
import { closeServer, listen } from '../../component/http.js';
import { METRICS_DIR, MetricsSpool, RECEIVED_NAME, type MetricsSource, type SpoolReader } from '../../storage/metrics-spool.js';
import { METRIC_DESCRIPTION, tokenPoints } from '../../otlp/token-usage.js';
import { MCP_CALLS, mcpPoints } from '../../otlp/mcp-usage.js';
import type { PrometheusExporterConfig } from './config.js';

export const PROMETHEUS_NAME = 'claude_code_token_usage_tokens_total';
export const PROMETHEUS_MCP_CALLS = 'agent_mcp_calls_total';
export const PROMETHEUS_MCP_DURATION = 'agent_mcp_duration_milliseconds_total';
const MCP_LABELS = ['session_id', 'mcp_server_name', 'mcp_tool_name', 'outcome', 'query_source'] as const;
type McpLabel = (typeof MCP_LABELS)[number];

export class PrometheusExporter implements Component, SpoolReader {
  readonly registry = new Registry();
  private readonly counter: Counter<'session_id' | 'model' | 'query_source' | 'type'>;
  private readonly mcpCalls: Counter<McpLabel>;
  private readonly mcpDuration: Counter<McpLabel>;
  private readonly read = new Set<string>();
  private server: Server | undefined;
  private bound = '';

  constructor(
    private readonly cfg: PrometheusExporterConfig,
    private readonly s: ComponentSettings,
  ) {
    this.counter = new Counter({
      name: PROMETHEUS_NAME,
      help: METRIC_DESCRIPTION,
      labelNames: ['session_id', 'model', 'query_source', 'type'],
      registers: [this.registry],
    });
    this.mcpCalls = new Counter({ name: PROMETHEUS_MCP_CALLS, help: 'Calls to MCP server tools', labelNames: MCP_LABELS, registers: [this.registry] });
    this.mcpDuration = new Counter({
      name: PROMETHEUS_MCP_DURATION,
      help: 'Milliseconds from the request of an MCP tool call to its result, summed over the calls',
      labelNames: MCP_LABELS,
      registers: [this.registry],
    });
  }

  async start(): Promise<void> {
    const app = express();
    app.disable('x-powered-by');
    app.get(this.cfg.path, (_req, res, next) => {
      this.registry.metrics().then((text) => res.type(this.registry.contentType).send(text), next);
    });
    this.server = await listen(app, this.cfg.endpoint.host, this.cfg.endpoint.port, {
      allowedHosts: this.cfg.allowedHosts,
      configPath: `exporters.${this.s.id}.allowed_hosts`,
    });
    const a = this.server.address() as AddressInfo;
    this.bound = formatEndpoint({ host: a.address, port: a.port });
  }

  addresses(): Record<string, string> {
    return { endpoint: this.bound };
  }

  spoolSource(): MetricsSource | undefined {
    return this.s.metricsSource;
  }

  hasRead(name: string): boolean {
    return this.read.has(name);
  }

  /** Adds the points of spooled requests not read yet. */
  async send(_ctx: PassContext): Promise<StageResult> {
    const source = this.spoolSource();
    if (!source) return {};
    const re = MetricsSpool.namePattern(source);
    const dir = new MetricsSpool(this.s.storageRoot).dir;
    let all: string[];
    try {
      all = readdirSync(dir);
    } catch {
      return {};
    }
    // A removed request of the receiver's is never spooled again under its name, so what was read
    // of it need not be remembered (a derived request's name comes back if it is derived again).
    const present = new Set(all);
    for (const n of this.read) if (!present.has(n) && RECEIVED_NAME.test(n)) this.read.delete(n);
    const names = all.filter((n) => re.test(n) && !this.read.has(n)).sort();
    const problems: string[] = [];
    let points = 0;
    for (const n of names) {
      try {
        const bytes = readFileSync(join(dir, n));
        for (const p of tokenPoints(bytes)) {
          this.counter.inc({ session_id: p.session, model: p.model, query_source: p.query_source, type: p.type }, p.value);
          points++;
        }
        for (const p of mcpPoints(bytes)) {
          const labels = { session_id: p.session, mcp_server_name: p.server, mcp_tool_name: p.tool, outcome: p.outcome, query_source: p.query_source };
          (p.metric === MCP_CALLS ? this.mcpCalls : this.mcpDuration).inc(labels, p.value);
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
