/**
 * The `otlp` exporter inside the service: the send stage of every pass is one push pass. Logs
 * (landed files and rounds) go when the exporter is in a sessions pipeline, spooled metrics when
 * it is in a metrics pipeline, each only when switched on. After its pass, an exporter that sends
 * metrics removes the spool files every consumer of the spool has taken (spool-retention.ts);
 * who those are, it asks the host: every running `otlp` exporter and spool reader.
 */
import type { Component, ComponentSettings, Host, PassContext, StageResult } from '../../component/component.js';
import { asSpoolReader, type MetricsSource } from '../../storage/metrics-spool.js';
import { PushState } from '../../storage/push-state.js';
import { removeSentScenarioSessions } from '../../storage/scenario-removal.js';
import { markedSessions } from '../../storage/scenario-marker.js';
import type { OtlpExporterConfig } from './config.js';
import { Pusher, type PushReport } from './pusher.js';
import { rejectedCounter } from './rejected-metrics.js';
import { formatSweep, SpoolRetention, type MetricsConsumer, type ReaderRef, type RetentionScope } from './spool-retention.js';

const pipelineType = (id: string) => id.split('/')[0];

export function formatPush(r: PushReport): string {
  const when = r.retryAt ? ` retry_at=${new Date(r.retryAt).toISOString()}` : '';
  const spool = r.spool ? formatSweep(r.spool) : '';
  if (r.skipped) return `push ${r.endpoint}: skipped (${r.skipped})${when}${spool ? `; ${spool}` : ''}`;
  return (
    `push ${r.endpoint}: logs ${r.logs.files} file(s) ${r.logs.bytes} byte(s) in ${r.logs.requests} request(s), metrics ${r.metrics.files} file(s) in ${r.metrics.requests} request(s),` +
    ` wire ${r.wireBytes} byte(s)${r.withheld.files ? `, withheld ${r.withheld.records} record(s) in ${r.withheld.files} file(s)` : ''}${r.rejected.files ? `, rejected ${r.rejected.items} item(s) in ${r.rejected.files} file(s) (taken, not resent)` : ''}${r.splits ? `, split ${r.splits} request(s) the receiver found too large` : ''}, pending ${r.pending}, paused=${(r.pausedMs / 1000).toFixed(3)}s${r.stoppedBy ? ` stopped_by=${r.stoppedBy}` : ''}${when}, problems ${r.problems.length} (${r.durationMs} ms)` +
    (spool ? `; ${spool}` : '')
  );
}

/** Who consumes the spool in this service: every exporter, asked through the host. */
function scopeFromHost(host: Host): RetentionScope {
  const consumers: MetricsConsumer[] = [];
  const readers: ReaderRef[] = [];
  let blocked: string | undefined;
  for (const s of host.status().components) {
    if (s.kind !== 'exporter') continue;
    const c = host.component(s.id);
    if (!c) {
      // Stopped or failed: what it has taken cannot be asked, and it may be a consumer.
      blocked ??= `exporters/${s.id} is ${s.state}, so what it has taken from the spool cannot be known`;
      continue;
    }
    if (c instanceof OtlpExporterComponent) {
      const m = c.metricsConsumer();
      if (m) consumers.push(m);
      continue;
    }
    const reader = asSpoolReader(c);
    if (reader) readers.push({ id: s.id, source: reader.spoolSource(), reader });
  }
  return { consumers, readers, blocked };
}

export class OtlpExporterComponent implements Component {
  private pusher: Pusher | undefined;
  private retention: SpoolRetention | undefined;
  /** What the last attempted pass could not do, repeated while backing off so health stays honest. */
  private lastProblems: string[] = [];
  /** The last reasons the spool was kept whole, logged when they change. */
  private lastHeld = '';
  private inMetrics = false;
  private sendsLogs = false;
  private keptSaid = new Set<string>();

  constructor(
    private readonly cfg: OtlpExporterConfig,
    private readonly s: ComponentSettings,
  ) {}

  async start(): Promise<void> {
    const logs = this.cfg.logs && this.s.pipelines.some((p) => pipelineType(p) === 'sessions');
    const inMetrics = this.cfg.metrics && this.s.pipelines.some((p) => pipelineType(p) === 'metrics');
    const source = inMetrics ? this.s.metricsSource : undefined;
    this.pusher = new Pusher({
      root: this.s.storageRoot,
      cfg: this.cfg,
      logs,
      metrics: undefined,
      log: (level, msg, fields) => this.s.log[level](msg, fields),
      onSent: (sig, n) => this.s.telemetry.sent(sig === 'logs' ? 'log_records' : 'metric_points', n),
      onFailed: (sig, n, reason) => this.s.telemetry.sendFailed(sig === 'logs' ? 'log_records' : 'metric_points', n, reason),
      onRejected: rejectedCounter(this.s.telemetry.registry, this.s.id),
    });
    this.metricsSource = source;
    this.inMetrics = inMetrics;
    this.sendsLogs = logs;
    if (inMetrics) this.retention = new SpoolRetention(this.s.storageRoot);
    this.s.log.info('exporting', {
      endpoint: this.pusher.endpoint,
      protocol: this.cfg.protocol,
      logs,
      metrics: inMetrics,
      batch_bytes: this.cfg.batchBytes,
      max_bytes_per_minute: this.cfg.maxBytesPerMinute,
      hide: this.cfg.hide?.length ? { categories: this.cfg.hide, from: this.cfg.hideFrom ?? 'this exporter' } : 'nothing',
      ...(inMetrics
        ? {
            spool_retention: this.cfg.spoolRetention.enabled
              ? { keep_ms: this.cfg.spoolRetention.keepMs, ignore_receivers: this.cfg.spoolRetention.ignoreReceivers }
              : 'off',
          }
        : {}),
    });
  }

  private metricsSource: MetricsSource | undefined;

  /** This exporter as a consumer of the spool: what it sends, to which receiver, and its retention. */
  metricsConsumer(): MetricsConsumer | undefined {
    const source = this.inMetrics ? this.metricsSource : undefined;
    if (!source || !this.pusher) return undefined;
    return { id: this.s.id, endpoint: this.pusher.endpoint, source, retention: this.cfg.spoolRetention };
  }

  async send(ctx: PassContext): Promise<StageResult> {
    const p = this.pusher!;
    p.setMetrics(this.metricsSource);
    const r = await p.pass({ signal: ctx.signal });
    // The spool is swept even when this exporter backs off: the others may have sent, and `keep` runs out.
    if (this.retention && !ctx.signal.aborted) {
      r.spool = await this.retention.sweep(scopeFromHost(this.s.host), ctx.signal);
      const held = r.spool.held.join('; ');
      if (held !== this.lastHeld) {
        if (held) ctx.log.warn('spool files kept', { reasons: r.spool.held });
        else if (this.lastHeld) ctx.log.info('spool files are removed again once sent');
        this.lastHeld = held;
      }
      if (r.spool.removed) ctx.log.info('sent spool files removed', { files: r.spool.removed, bytes: r.spool.removedBytes, forgotten: r.spool.forgotten });
    }
    const spoolCounts: Record<string, number> = r.spool
      ? { spool_removed: r.spool.removed, spool_removed_bytes: r.spool.removedBytes, spool_unsent: r.spool.unsent }
      : {};
    const spoolProblems = (r.spool?.problems ?? []).map((x) => `${this.s.id}: spool: ${x}`);
    if (r.skipped === 'backoff') {
      return {
        changed: (r.spool?.removed ?? 0) > 0,
        problems: [...this.lastProblems.map((x) => `${this.s.id}: ${x} (next attempt ${new Date(r.retryAt!).toISOString()})`), ...spoolProblems],
        counts: { skipped_backoff: 1, ...spoolCounts },
      };
    }
    this.lastProblems = r.problems;
    if (this.sendsLogs && !ctx.signal.aborted) this.removeSentScenarios(p.endpoint, ctx);
    const changed = r.logs.files + r.metrics.files > 0 || r.problems.length > 0;
    if (changed) ctx.log[r.problems.length || r.rejected.files ? 'warn' : 'info'](formatPush(r));
    return {
      changed: changed || (r.spool?.removed ?? 0) > 0,
      problems: [...r.problems.map((x) => `${this.s.id}: ${x}`), ...spoolProblems],
      counts: {
        log_files: r.logs.files,
        log_bytes: r.logs.bytes,
        metric_files: r.metrics.files,
        requests: r.logs.requests + r.metrics.requests,
        wire_bytes: r.wireBytes,
        rejected_files: r.rejected.files,
        rejected_items: r.rejected.items,
        withheld_files: r.withheld.files,
        withheld_records: r.withheld.records,
        pending: r.pending,
        paused_ms: Math.round(r.pausedMs),
        ...spoolCounts,
      },
    };
  }

  /** A scenario build's sessions go once all of them is sent here (storage/scenario-removal.ts); a real session is never touched. */
  private removeSentScenarios(endpoint: string, ctx: PassContext): void {
    // A session's metrics go to the receiver too; an exporter that does not send them cannot prove a session wholly sent.
    const r = this.inMetrics
      ? removeSentScenarioSessions({ root: this.s.storageRoot, state: new PushState(this.s.storageRoot), endpoint, nowMs: Date.now(), waitForMetrics: true })
      : {
          removed: [],
          kept: [],
          held: markedSessions(this.s.storageRoot).length ? `exporters/${this.s.id} does not send metrics, so no session can be wholly sent` : undefined,
        };
    // Said once, not every pass: a kept line waits for a person.
    const kept = [...(r.held ? [`kept: every marked session: ${r.held}`] : []), ...r.kept.map((k) => `kept: ${k.session}: ${k.reason}`)];
    for (const line of kept) if (!this.keptSaid.has(line)) ctx.log.warn(line);
    this.keptSaid = new Set(kept);
    if (r.removed.length) ctx.log.info('scenario sessions removed once sent', { sessions: r.removed });
  }

  async shutdown(): Promise<void> {
    this.pusher?.close();
  }
}
