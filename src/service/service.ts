import type { AszConfig, ComponentConfig } from './config.js';
import { rfc3339, nowNs } from '../util/time.js';
import type { Component, ComponentKind, ComponentState, ComponentStatus, Host, PassStatus, ServiceDescription, ServiceStatus } from '../component/component.js';
import type { Logger } from '../component/log.js';
import { runFinalPass } from './final-pass.js';
import { PassScheduler, type Scheduled } from './scheduler.js';
import { ServiceTelemetry } from './telemetry.js';
import { metricsSourceOf, pipelinesOf, receivedSpoolConsumers, tokenMetricsMode } from './pipelines.js';
import { asMetricsSpoolFactsSource } from '../component/metrics-spool-facts.js';
import { describeService } from './description.js';

interface Instance extends Scheduled {
  state: ComponentState;
  error?: string;
  addresses?: Record<string, string>;
}

/** Start order; shutdown is the reverse. Receivers start last so nothing arrives before its consumers are up. */
const START_ORDER: ComponentKind[] = ['extension', 'exporter', 'processor', 'receiver'];
/** Order within one pass stage: the way data flows. */
const FLOW_ORDER: ComponentKind[] = ['receiver', 'processor', 'exporter', 'extension'];
const DEFAULT_INTERVAL_MS = 5000;

/**
 * The component host: creates the components the pipelines (and `service.extensions`) use,
 * starts them in dependency order, runs the pass scheduler, and shuts everything down in reverse.
 */
export class Service implements Host {
  readonly telemetry = new ServiceTelemetry();
  private readonly instances: Instance[] = [];
  private scheduler: PassScheduler | undefined;
  private lastPass: PassStatus | undefined;
  private startedAt: string | undefined;
  private telemetryAddress: string | undefined;
  private shutdownPromise: Promise<void> | undefined;

  constructor(
    readonly cfg: AszConfig,
    private readonly log: Logger,
  ) {}

  /** The components to run, in start order. */
  private plan(): ComponentConfig[] {
    const byKind = (kind: ComponentKind, ids: string[]) => ids.map((id) => this.cfg.components.find((c) => c.kind === kind && c.id === id)!).filter(Boolean);
    const inPipelines = (kind: 'receiver' | 'processor' | 'exporter') => [...new Set(this.cfg.service.pipelines.flatMap((p) => p[`${kind}s`]))];
    return START_ORDER.flatMap((k) => (k === 'extension' ? byKind(k, this.cfg.service.extensions) : byKind(k, inPipelines(k))));
  }

  async start(): Promise<void> {
    this.log.info('service starting', { config: this.cfg.source, storage_root: this.cfg.storageRoot, pipelines: this.cfg.service.pipelines.map((p) => p.id) });
    for (const path of this.cfg.unused) this.log.warn('configured but used by no pipeline; not started', { component: path });
    if (this.cfg.service.impliedPipelines) {
      this.log.info('service.pipelines not given: running one sessions pipeline', { receivers: this.cfg.service.pipelines[0]?.receivers ?? [] });
    }
    const addr = this.cfg.service.telemetry.metrics.address;
    if (addr) {
      try {
        this.telemetryAddress = await this.telemetry.serve(addr, this.cfg.service.telemetry.metrics.allowedHosts);
      } catch (err) {
        throw new Error(`service.telemetry.metrics.address: ${(err as Error).message}`, { cause: err });
      }
      this.log.info('self-telemetry served', { address: this.telemetryAddress, path: '/metrics' });
    }
    for (const c of this.plan()) {
      const pipelines = pipelinesOf(this.cfg, c).map((p) => p.id);
      const metricsSource =
        c.kind === 'exporter'
          ? metricsSourceOf(this.cfg, c.id)
          : c.kind === 'processor' && c.type === 'token_metrics'
            ? tokenMetricsMode(this.cfg, c.id)
            : undefined;
      const name = `${c.kind}s/${c.id}`;
      const log = this.log.child({ component: name });
      let component: Component;
      try {
        component = await c.factory.create(c.config, {
          id: c.id,
          kind: c.kind,
          storageRoot: this.cfg.storageRoot,
          pipelines,
          log,
          ...(metricsSource ? { metricsSource } : {}),
          ...(c.kind === 'receiver' && c.type === 'claude_code_otlp' ? { spoolConsumers: receivedSpoolConsumers(this.cfg) } : {}),
          telemetry: this.telemetry.forComponent(c.id, c.kind),
          host: this,
          shutdownTimeoutMs: this.cfg.service.shutdownTimeoutMs,
        });
      } catch (err) {
        throw new Error(`${name} could not be created: ${(err as Error).message}`, { cause: err });
      }
      this.instances.push({ id: c.id, kind: c.kind, component, log, state: 'created' });
    }
    for (const inst of this.instances) {
      inst.state = 'starting';
      try {
        await inst.component.start();
      } catch (err) {
        inst.state = 'failed';
        inst.error = (err as Error).message;
        inst.log.error('component failed to start', { error: err });
        throw new Error(`${inst.kind}s/${inst.id} failed to start: ${inst.error}`, { cause: err });
      }
      inst.state = 'started';
      inst.addresses = inst.component.addresses?.();
      this.telemetry.componentState(inst.id, inst.kind, true);
      inst.log.info('component started', inst.addresses ? { addresses: inst.addresses } : undefined);
    }
    this.startedAt = rfc3339(nowNs());
    this.scheduler = new PassScheduler(this.flowOrder(), {
      intervalMs: this.passInterval(),
      log: this.log.child({ component: 'service' }),
      onPass: (s) => {
        this.lastPass = s;
        this.telemetry.passFinished(s.durationMs / 1000, s.ok);
      },
    });
    this.log.info('service started', { addresses: this.addresses(), pass_interval_ms: this.passInterval() });
    this.scheduler.start();
  }

  /** The components in the order data flows through a pass stage. */
  private flowOrder(): Instance[] {
    return FLOW_ORDER.flatMap((k) => this.instances.filter((i) => i.kind === k));
  }

  /** The smallest interval any running component asks for; 5 s when none asks. */
  passInterval(): number {
    const asked = this.cfg.components
      .filter((c) => this.instances.some((i) => i.kind === c.kind && i.id === c.id))
      .map((c) => c.factory.passInterval?.(c.config))
      .filter((v): v is number => typeof v === 'number' && v > 0);
    return asked.length ? Math.min(...asked) : DEFAULT_INTERVAL_MS;
  }

  describe(): ServiceDescription {
    const spool = this.instances.flatMap((i) => asMetricsSpoolFactsSource(i.component)?.metricsSpoolFacts() ?? []);
    return { ...describeService(this.cfg, this.addresses()), ...(spool.length ? { metricsSpool: spool } : {}) };
  }

  /** Every address the service listens on: `telemetry` and `<kind>s/<id>.<name>`. */
  addresses(): Record<string, string> {
    const out: Record<string, string> = {};
    if (this.telemetryAddress) out.telemetry = this.telemetryAddress;
    for (const i of this.instances) for (const [k, v] of Object.entries(i.addresses ?? {})) out[`${i.kind}s/${i.id}.${k}`] = v;
    return out;
  }

  /** Near the shutdown deadline: ask the stage in flight to stop at a safe point. */
  abortPass(): void {
    this.scheduler?.abortInFlight();
  }

  /**
   * Drains: the pass in flight finishes, no new one starts; then, with `service.final_pass` on,
   * receivers stop their intake and one final pass lands and sends what arrived since (final-pass.ts);
   * then components shut down in reverse start order (receivers stop accepting first, extensions
   * go last). Safe to call more than once.
   */
  shutdown(): Promise<void> {
    this.shutdownPromise ??= this.doShutdown();
    return this.shutdownPromise;
  }

  private async doShutdown(): Promise<void> {
    this.log.info('service stopping: finishing the pass in flight');
    await this.scheduler?.stop();
    // No scheduler: the start failed, and a pass over half-started components would prove nothing.
    if (this.scheduler) {
      if (this.cfg.service.finalPass) await runFinalPass(this.flowOrder(), this.scheduler, this.log);
      else this.log.info('final pass off (service.final_pass: false): what arrived since the last pass is landed and sent at the next start');
    }
    for (const inst of [...this.instances].reverse()) {
      if (inst.state === 'created') {
        inst.state = 'stopped';
        continue;
      }
      inst.state = 'stopping';
      try {
        await inst.component.shutdown();
        inst.state = 'stopped';
      } catch (err) {
        inst.state = 'failed';
        inst.error = (err as Error).message;
        inst.log.error('component failed to shut down', { error: err });
      }
      this.telemetry.componentState(inst.id, inst.kind, false);
    }
    await this.telemetry.close();
    this.log.info('service stopped', { passes: this.scheduler?.passes ?? 0 });
  }

  /** A component saw something arrive between passes; before the scheduler runs, the first pass takes it anyway. */
  requestPass(sessions?: readonly string[]): void {
    this.scheduler?.nudge(sessions);
  }

  component(id: string, kind?: ComponentKind): Component | undefined {
    return this.instances.find((i) => i.id === id && (!kind || i.kind === kind) && i.state === 'started')?.component;
  }

  status(): ServiceStatus {
    const components: ComponentStatus[] = this.instances.map((i) => ({
      id: i.id,
      kind: i.kind,
      state: i.state,
      ...(i.error ? { error: i.error } : {}),
      ...(i.addresses ? { addresses: i.addresses } : {}),
    }));
    const reasons: string[] = [];
    const degraded: string[] = [];
    for (const c of components) if (c.state !== 'started') reasons.push(`${c.kind}s/${c.id} is ${c.state}${c.error ? `: ${c.error}` : ''}`);
    for (const i of this.instances) {
      if (i.state !== 'started') continue;
      const h = i.component.health?.();
      for (const r of h?.unavailable ?? []) reasons.push(`${i.kind}s/${i.id}: ${r}`);
      for (const r of h?.degraded ?? []) degraded.push(`${i.kind}s/${i.id}: ${r}`);
    }
    if (!this.lastPass) reasons.push('no pass has finished yet');
    else if (!this.lastPass.ok) reasons.push(`pass ${this.lastPass.pass} failed: ${this.lastPass.problems.join('; ')}`);
    return {
      healthy: reasons.length === 0,
      reasons,
      degraded,
      startedAt: this.startedAt,
      components,
      lastPass: this.lastPass,
      passes: this.scheduler?.passes ?? 0,
    };
  }
}
