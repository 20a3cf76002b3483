/**
 * The `otlp` exporter inside the service: the send stage of every pass is one push pass. Logs
 * (landed files and rounds) go when the exporter is in a sessions pipeline, spooled metrics when
 * it is in a metrics pipeline, each only when switched on.
 */
import type { Component, ComponentSettings, PassContext, StageResult } from '../../service/component.js';
import type { OtlpExporterConfig } from './config.js';
import { Pusher, type PushReport } from './pusher.js';
import { metricsSourceOfRunning } from './source.js';

const pipelineType = (id: string) => id.split('/')[0];

export function formatPush(r: PushReport): string {
  const when = r.retryAt ? ` retry_at=${new Date(r.retryAt).toISOString()}` : '';
  if (r.skipped) return `push ${r.endpoint}: skipped (${r.skipped})${when}`;
  return `push ${r.endpoint}: logs ${r.logs.files} file(s) ${r.logs.bytes} byte(s) in ${r.logs.requests} request(s), metrics ${r.metrics.files} file(s) in ${r.metrics.requests} request(s),` +
    ` wire ${r.wireBytes} byte(s), pending ${r.pending}, paused=${(r.pausedMs / 1000).toFixed(3)}s${r.stoppedBy ? ` stopped_by=${r.stoppedBy}` : ''}${when}, problems ${r.problems.length} (${r.durationMs} ms)`;
}

export class OtlpExporterComponent implements Component {
  private pusher: Pusher | undefined;
  /** What the last attempted pass could not do, repeated while backing off so health stays honest. */
  private lastProblems: string[] = [];

  constructor(private readonly cfg: OtlpExporterConfig, private readonly s: ComponentSettings) {}

  async start(): Promise<void> {
    const logs = this.cfg.logs && this.s.pipelines.some((p) => pipelineType(p) === 'sessions');
    const inMetrics = this.cfg.metrics && this.s.pipelines.some((p) => pipelineType(p) === 'metrics');
    // Components are created before any starts; which ones run is known once the host lists them.
    const source = inMetrics ? () => metricsSourceOfRunning(this.s.host.status().components) : undefined;
    this.pusher = new Pusher({
      root: this.s.storageRoot, cfg: this.cfg, logs, metrics: undefined,
      log: (level, msg, fields) => this.s.log[level](msg, fields),
      onSent: (sig, n) => this.s.telemetry.sent(sig === 'logs' ? 'log_records' : 'metric_points', n),
      onFailed: (sig, n, reason) => this.s.telemetry.sendFailed(sig === 'logs' ? 'log_records' : 'metric_points', n, reason),
    });
    this.metricsSource = source;
    this.s.log.info('exporting', { endpoint: this.pusher.endpoint, protocol: this.cfg.protocol, logs, metrics: inMetrics, batch_bytes: this.cfg.batchBytes, max_bytes_per_minute: this.cfg.maxBytesPerMinute });
  }

  private metricsSource: (() => ReturnType<typeof metricsSourceOfRunning>) | undefined;

  async send(ctx: PassContext): Promise<StageResult> {
    const p = this.pusher!;
    p.setMetrics(this.metricsSource?.());
    const r = await p.pass({ signal: ctx.signal });
    if (r.skipped === 'backoff') {
      return { problems: this.lastProblems.map((x) => `${this.s.id}: ${x} (next attempt ${new Date(r.retryAt!).toISOString()})`), counts: { skipped_backoff: 1 } };
    }
    this.lastProblems = r.problems;
    const changed = r.logs.files + r.metrics.files > 0 || r.problems.length > 0;
    if (changed) ctx.log[r.problems.length ? 'warn' : 'info'](formatPush(r));
    return {
      changed,
      problems: r.problems.map((x) => `${this.s.id}: ${x}`),
      counts: {
        log_files: r.logs.files, log_bytes: r.logs.bytes, metric_files: r.metrics.files, requests: r.logs.requests + r.metrics.requests,
        wire_bytes: r.wireBytes, pending: r.pending, paused_ms: Math.round(r.pausedMs),
      },
    };
  }

  async shutdown(): Promise<void> {
    this.pusher?.close();
  }
}
