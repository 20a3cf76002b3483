import { Counter, Gauge, type Registry } from 'prom-client';
import type { OtlpReceiverConfig } from './config.js';
import type { OtlpReceiver, OtlpReceiverStats } from './index.js';
import type { Component, ComponentHealth, ComponentSettings, StageResult, TelemetrySignal } from '../../component/component.js';
import { quarantineDir, quarantineFileCount } from '../../storage/quarantine.js';
import type { MetricsSpoolFacts } from '../../component/metrics-spool-facts.js';
import { METRICS_DIR, MetricsSpool, RECEIVED_NAME } from '../../storage/metrics-spool.js';
import { capSpool } from '../../storage/spool-cap.js';
import { join } from 'node:path';

const SIGNALS: TelemetrySignal[] = ['log_records', 'metric_points', 'spans'];

/**
 * The journal's own metrics, one set per registry (every OTLP receiver instance is a label). The
 * registry owns them: the first receiver registers them there, the others find them by name.
 */
class JournalMetrics {
  readonly bytes: Gauge<'receiver'>;
  readonly waiting: Gauge<'receiver'>;
  readonly damaged: Counter<'receiver'>;
  readonly unkept: Counter<'receiver'>;
  readonly droppedFiles: Counter<'receiver'>;
  readonly droppedBytes: Counter<'receiver'>;

  constructor(registry: Registry) {
    const registers = [registry];
    const known = <M>(name: string) => registry.getSingleMetric(name) as M | undefined;
    const bytes = 'aszcol_receiver_journal_bytes',
      waiting = 'aszcol_receiver_waiting_sessions',
      damaged = 'aszcol_receiver_journal_damaged_total',
      unkept = 'aszcol_receiver_unkept_metric_points_total',
      droppedFiles = 'aszcol_receiver_unconsumed_spool_removed_files_total',
      droppedBytes = 'aszcol_receiver_unconsumed_spool_removed_bytes_total';
    this.bytes =
      known<Gauge<'receiver'>>(bytes) ??
      new Gauge({ name: bytes, help: 'Bytes a receiver accepted into its journal and has not landed yet.', labelNames: ['receiver'], registers });
    this.waiting =
      known<Gauge<'receiver'>>(waiting) ??
      new Gauge({ name: waiting, help: 'Sessions whose records wait for a lock another collector holds.', labelNames: ['receiver'], registers });
    this.damaged =
      known<Counter<'receiver'>>(damaged) ??
      new Counter({ name: damaged, help: 'Journal stretches that could not be landed (damage on disk), kept aside.', labelNames: ['receiver'], registers });
    this.unkept =
      known<Counter<'receiver'>>(unkept) ??
      new Counter({
        name: unkept,
        help: 'Metric points answered but not kept: no metrics pipeline includes the receiver, so nothing would read them.',
        labelNames: ['receiver'],
        registers,
      });
    const counter = (name: string, help: string) => known<Counter<'receiver'>>(name) ?? new Counter({ name, help, labelNames: ['receiver'], registers });
    this.droppedFiles = counter(droppedFiles, 'Spool files removed by unconsumed_spool: kept metrics that no exporter sends or reads.');
    this.droppedBytes = counter(droppedBytes, 'Bytes of the spool files removed by unconsumed_spool.');
  }
}

/** How long a pass's land stage waits for the journal to be landed. */
const LAND_WAIT_MS = 10_000;

/**
 * The OTLP receiver inside the service. It takes requests as they come and lands them from its
 * journal on its own thread, not in a pass; the pass's land stage waits (boundedly) until what
 * was answered before the pass began has landed, so the parse stage that follows sees it, and
 * carries the receiver's counters into the service's metrics (as deltas of its totals).
 */
export class OtlpReceiverComponent implements Component {
  private receiver: OtlpReceiver | undefined;
  private last: OtlpReceiverStats | undefined;
  private journal: JournalMetrics | undefined;
  private keepMetrics = false;
  /** Set when the spool is kept and nothing consumes it: the receiver bounds it itself. */
  private unconsumedBound: OtlpReceiverConfig['unconsumedSpool'] | undefined;
  private dropped = { files: 0, bytes: 0 };

  constructor(
    private readonly cfg: OtlpReceiverConfig,
    private readonly s: ComponentSettings,
  ) {}

  async start(): Promise<void> {
    const { OtlpReceiver } = await import('./receiver.js');
    const log = this.s.log;
    // Only a metrics pipeline reads the spool: without one, received metrics are answered and counted, not kept.
    const keepMetrics = this.s.pipelines.some((p) => p.split('/')[0] === 'metrics');
    this.keepMetrics = keepMetrics;
    const bound = this.cfg.unconsumedSpool;
    if (keepMetrics && this.s.spoolConsumers?.length === 0) {
      if (bound.maxAgeMs > 0 || bound.maxBytes > 0) this.unconsumedBound = bound;
      log.info(
        this.unconsumedBound
          ? 'received metrics are spooled, and no exporter sends or reads them: the spool is bounded by unconsumed_spool (older files, then the oldest past the size, are removed and counted)'
          : 'received metrics are spooled, and no exporter sends or reads them; unconsumed_spool sets no bound, so the spool grows until max_spool_bytes refuses metrics',
        { spool: join(this.s.storageRoot, METRICS_DIR), max_age_ms: bound.maxAgeMs, max_bytes: bound.maxBytes },
      );
    }
    this.receiver = new OtlpReceiver(this.cfg, {
      storageRoot: this.s.storageRoot,
      name: this.s.id,
      keepMetrics,
      log: (level, msg, fields) => log[level](msg, fields),
    });
    await this.receiver.start();
    this.sync();
  }

  addresses(): Record<string, string> {
    const a = this.receiver?.addresses() ?? {};
    return Object.fromEntries(Object.entries(a).filter((e): e is [string, string] => typeof e[1] === 'string'));
  }

  async land(): Promise<StageResult> {
    const d0: Record<string, number> = {};
    // A session whose lock another collector holds can keep records waiting; the pass does not wait for it.
    if (this.receiver) await this.receiver.landed(LAND_WAIT_MS);
    const capProblems = await this.boundUnconsumedSpool(d0);
    const d = { ...this.sync(), ...d0 };
    // A journal or landing thread that failed refuses every request: the pass fails, so health says so.
    const problems = [...(this.receiver?.problems() ?? []), ...capProblems].map((p) => `${this.s.id}: ${p}`);
    return { counts: d, changed: Object.values(d).some((n) => n > 0), ...(problems.length ? { problems } : {}) };
  }

  /**
   * Before the service's last pass: stop taking requests, then wait until what was taken has
   * landed (or the service's deadline nears), so the last pass parses and sends it.
   */
  async stopIntake(signal: AbortSignal): Promise<void> {
    const r = this.receiver;
    if (!r) return;
    await r.stopIntake(Math.max(100, Math.floor(this.s.shutdownTimeoutMs * 0.3)));
    if (signal.aborted) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      signal.addEventListener('abort', done);
      void r.landed(this.s.shutdownTimeoutMs).then(done);
    });
  }

  async shutdown(): Promise<void> {
    // Its drain (requests in flight finish landing) must end well inside the service's.
    await this.receiver?.shutdown(Math.max(100, Math.floor(this.s.shutdownTimeoutMs * 0.6)));
    this.sync();
  }

  /**
   * Unavailable while the receiver cannot take or land requests (its journal failed, or landing
   * has been failing for more than a round: a full or read-only disk); degraded while the storage
   * root's quarantine holds anything (records that can never land where they belong wait for a
   * person; removing them clears it).
   */
  health(): ComponentHealth {
    const unavailable = this.receiver?.problems() ?? [];
    const files = quarantineFileCount(this.s.storageRoot);
    const thisRun = Object.entries(this.receiver?.stats().quarantined_records ?? {})
      .map(([reason, n]) => `${n} ${reason}`)
      .join(', ');
    const degraded = files
      ? [
          `${files} batch(es) of records that can never land where they belong are quarantined in ${quarantineDir(this.s.storageRoot)}${thisRun ? ` (records since start: ${thisRun})` : ''}; \`aszcol verify\` lists them`,
        ]
      : [];
    return { ...(unavailable.length ? { unavailable } : {}), ...(degraded.length ? { degraded } : {}) };
  }

  /** With no consumer, removes what the bound says must go, and counts it; returns problems. */
  private async boundUnconsumedSpool(counts: Record<string, number>): Promise<string[]> {
    const b = this.unconsumedBound;
    if (!b) return [];
    const r = await capSpool({
      dir: join(this.s.storageRoot, METRICS_DIR),
      names: RECEIVED_NAME,
      seqOf: MetricsSpool.receivedSeq,
      maxAgeMs: b.maxAgeMs,
      maxBytes: b.maxBytes,
    });
    if (r.removed) {
      this.dropped.files += r.removed;
      this.dropped.bytes += r.removedBytes;
      counts.unconsumed_spool_removed_files = r.removed;
      const g = (this.journal ??= new JournalMetrics(this.s.telemetry.registry));
      g.droppedFiles.inc({ receiver: this.s.id }, r.removed);
      g.droppedBytes.inc({ receiver: this.s.id }, r.removedBytes);
      this.s.log.debug('unconsumed spool files removed', {
        files: r.removed,
        bytes: r.removedBytes,
        by_age: r.byAge,
        by_size: r.bySize,
        kept_bytes: r.keptBytes,
      });
    }
    return r.problems.map((p) => `unconsumed_spool: ${p}`);
  }

  metricsSpoolFacts(): MetricsSpoolFacts {
    const b = this.unconsumedBound;
    return {
      receiver: this.s.id,
      kept: this.keepMetrics,
      consumers: this.s.spoolConsumers ?? [],
      ...(b ? { retention: { max_age_ms: b.maxAgeMs, max_bytes: b.maxBytes } } : {}),
      unkept_metric_points: this.receiver?.stats().unkept_metric_points ?? 0,
      dropped_files: this.dropped.files,
      dropped_bytes: this.dropped.bytes,
    };
  }

  /** Adds what changed since the last call to the service's counters; returns the deltas. */
  private sync(): Record<string, number> {
    if (!this.receiver) return {};
    const now = this.receiver.stats();
    const prev = this.last;
    this.last = now;
    const t = this.s.telemetry;
    const delta = (a: number, b: number | undefined) => Math.max(0, a - (b ?? 0));
    const out: Record<string, number> = {};
    for (const sig of SIGNALS) {
      const acc = delta(now.accepted[sig], prev?.accepted[sig]);
      const ref = delta(now.refused[sig], prev?.refused[sig]);
      t.accepted(sig, acc);
      if (ref || !prev) t.refused(sig, ref);
      out[`accepted_${sig}`] = acc;
      if (ref) out[`refused_${sig}`] = ref;
    }
    for (const [reason, n] of Object.entries(now.refused_requests)) {
      const d = delta(n ?? 0, prev?.refused_requests[reason as keyof OtlpReceiverStats['refused_requests']]);
      if (d) t.refusedRequests(d, reason);
    }
    for (const tr of ['grpc', 'http'] as const) t.requests(delta(now.requests[tr], prev?.requests[tr]), tr);
    const landed = delta(now.landed.records, prev?.landed.records);
    t.landed(landed);
    t.spoolBytes(now.spool_bytes);
    const g = (this.journal ??= new JournalMetrics(t.registry));
    g.bytes.set({ receiver: this.s.id }, now.journal_bytes);
    g.waiting.set({ receiver: this.s.id }, now.waiting_sessions);
    g.damaged.inc({ receiver: this.s.id }, delta(now.damaged_entries, prev?.damaged_entries));
    g.unkept.inc({ receiver: this.s.id }, delta(now.unkept_metric_points, prev?.unkept_metric_points));
    for (const [reason, n] of Object.entries(now.quarantined_records)) {
      const d = delta(n, prev?.quarantined_records[reason]);
      if (d) t.quarantined(d, reason);
      if (d) out[`quarantined_${reason}`] = d;
    }
    out.landed_records = landed;
    return out;
  }
}
