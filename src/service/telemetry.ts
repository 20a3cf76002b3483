import express from 'express';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { formatEndpoint, type Endpoint } from '../config/reader.js';
import type { ComponentKind, ComponentTelemetry, TelemetrySignal } from '../component/component.js';
import { closeServer, listen } from '../component/http.js';

const SIGNALS: TelemetrySignal[] = ['log_records', 'metric_points', 'spans'];

/**
 * The service's own metrics, named the way the OpenTelemetry Collector names its own
 * (`otelcol_receiver_accepted_spans` → `aszcol_receiver_accepted_spans_total`), plus the default
 * process and Node.js metrics. One registry per service, so tests can run several in a process.
 */
export class ServiceTelemetry {
  readonly registry = new Registry();
  private readonly accepted = new Map<TelemetrySignal, Counter<'receiver' | 'transport'>>();
  private readonly refused = new Map<TelemetrySignal, Counter<'receiver' | 'transport' | 'reason'>>();
  private readonly sentC = new Map<TelemetrySignal, Counter<'exporter'>>();
  private readonly failedC = new Map<TelemetrySignal, Counter<'exporter' | 'reason'>>();
  private readonly landedC: Counter<'receiver'>;
  private readonly quarantinedC: Counter<'receiver' | 'reason'>;
  private readonly requestsC: Counter<'receiver' | 'transport'>;
  private readonly refusedRequestsC: Counter<'receiver' | 'reason'>;
  private readonly spool: Gauge<'receiver'>;
  private readonly conflicts: Gauge<'receiver'>;
  private readonly passDuration: Histogram<'outcome'>;
  private readonly passes: Counter<'outcome'>;
  private readonly up: Gauge<'component' | 'kind'>;
  private server: Server | undefined;

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry });
    for (const s of SIGNALS) {
      const words = s.replace('_', ' ');
      this.accepted.set(
        s,
        new Counter({
          name: `aszcol_receiver_accepted_${s}_total`,
          help: `OTLP ${words} a receiver accepted.`,
          labelNames: ['receiver', 'transport'],
          registers,
        }),
      );
      this.refused.set(
        s,
        new Counter({
          name: `aszcol_receiver_refused_${s}_total`,
          help: `OTLP ${words} a receiver refused, by reason.`,
          labelNames: ['receiver', 'transport', 'reason'],
          registers,
        }),
      );
      this.sentC.set(
        s,
        new Counter({
          name: `aszcol_exporter_sent_${s}_total`,
          help: `${words[0]!.toUpperCase()}${words.slice(1)} an exporter sent and the backend accepted.`,
          labelNames: ['exporter'],
          registers,
        }),
      );
      this.failedC.set(
        s,
        new Counter({
          name: `aszcol_exporter_send_failed_${s}_total`,
          help: `${words[0]!.toUpperCase()}${words.slice(1)} an exporter could not send, by reason.`,
          labelNames: ['exporter', 'reason'],
          registers,
        }),
      );
    }
    this.landedC = new Counter({
      name: 'aszcol_landed_records_total',
      help: 'Records landed in the storage root as Session Data.',
      labelNames: ['receiver'],
      registers,
    });
    this.quarantinedC = new Counter({
      name: 'aszcol_receiver_quarantined_records_total',
      help: 'Records a receiver accepted that can never land where they belong, parked in the quarantine (_quarantine/), by reason.',
      labelNames: ['receiver', 'reason'],
      registers,
    });
    this.requestsC = new Counter({
      name: 'aszcol_receiver_requests_total',
      help: 'Requests a receiver took, by transport.',
      labelNames: ['receiver', 'transport'],
      registers,
    });
    this.refusedRequestsC = new Counter({
      name: 'aszcol_receiver_refused_requests_total',
      help: 'Whole requests a receiver refused, by reason.',
      labelNames: ['receiver', 'reason'],
      registers,
    });
    this.spool = new Gauge({
      name: 'aszcol_receiver_spool_bytes',
      help: "Bytes in a receiver's spool (the _metrics/ directory).",
      labelNames: ['receiver'],
      registers,
    });
    this.conflicts = new Gauge({
      name: 'aszcol_sources_in_conflict',
      help: 'Sources whose cursor is in conflict (stopped until a person clears it).',
      labelNames: ['receiver'],
      registers,
    });
    this.passDuration = new Histogram({
      name: 'aszcol_pass_duration_seconds',
      help: 'Duration of one pass (land, parse, derive, send).',
      labelNames: ['outcome'],
      registers,
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    });
    this.passes = new Counter({ name: 'aszcol_passes_total', help: 'Passes run, by outcome (ok, failed).', labelNames: ['outcome'], registers });
    this.up = new Gauge({ name: 'aszcol_component_started', help: '1 while a component is started, else 0.', labelNames: ['component', 'kind'], registers });
  }

  forComponent(id: string, kind: ComponentKind): ComponentTelemetry {
    if (kind === 'receiver') this.landedC.inc({ receiver: id }, 0);
    if (kind === 'exporter') for (const s of SIGNALS) this.sentC.get(s)!.inc({ exporter: id }, 0);
    const tr = (transport?: string) => (transport ? { transport } : {});
    return {
      registry: this.registry,
      accepted: (s, n, transport) => this.accepted.get(s)!.inc({ receiver: id, ...tr(transport) }, n),
      refused: (s, n, reason, transport) => this.refused.get(s)!.inc({ receiver: id, ...(reason ? { reason } : {}), ...tr(transport) }, n),
      requests: (n, transport) => this.requestsC.inc({ receiver: id, transport }, n),
      refusedRequests: (n, reason) => this.refusedRequestsC.inc({ receiver: id, reason }, n),
      spoolBytes: (n) => this.spool.set({ receiver: id }, n),
      landed: (n) => this.landedC.inc({ receiver: id }, n),
      quarantined: (n, reason) => this.quarantinedC.inc({ receiver: id, reason }, n),
      sourcesInConflict: (n) => this.conflicts.set({ receiver: id }, n),
      sent: (s, n) => this.sentC.get(s)!.inc({ exporter: id }, n),
      sendFailed: (s, n, reason) => this.failedC.get(s)!.inc({ exporter: id, reason }, n),
    };
  }

  componentState(id: string, kind: ComponentKind, started: boolean): void {
    this.up.set({ component: id, kind }, started ? 1 : 0);
  }

  passFinished(seconds: number, ok: boolean): void {
    const outcome = ok ? 'ok' : 'failed';
    this.passDuration.observe({ outcome }, seconds);
    this.passes.inc({ outcome });
  }

  /** Serves `/metrics`; returns the address it is bound to (port 0 picks a free one). */
  async serve(at: Endpoint, allowedHosts: readonly string[] = []): Promise<string> {
    const app = express();
    app.disable('x-powered-by');
    app.get('/metrics', async (_req, res) => {
      try {
        const body = await this.registry.metrics();
        res.set('Content-Type', this.registry.contentType).send(body);
      } catch (err) {
        res
          .status(500)
          .type('text/plain')
          .send(`cannot collect metrics: ${(err as Error).message}\n`);
      }
    });
    this.server = await listen(app, at.host, at.port, { allowedHosts, configPath: 'service.telemetry.metrics.allowed_hosts' });
    const a = this.server.address() as AddressInfo;
    return formatEndpoint({ host: a.address, port: a.port });
  }

  async close(): Promise<void> {
    await closeServer(this.server);
    this.server = undefined;
  }
}
