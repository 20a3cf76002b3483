import { mkdirSync } from 'node:fs';
import type { LocalReceiverConfig } from './config.js';
import { LocalCollector } from './pass.js';
import { defaultWorkers } from './session-pool.js';
import { HookIntake } from './hook-intake.js';
import { SourceWatch } from './source-watch.js';
import { parseEndpoint } from '../../config/reader.js';
import type { Component, ComponentSettings, PassContext, StageResult } from '../../component/component.js';

/**
 * The local receiver inside the service: one collection pass per service pass, in the land stage.
 * It has no `stopIntake`: it takes nothing in between passes, so on shutdown the final pass's
 * land stage is what collects the lines written since the last pass.
 */
export class LocalReceiverComponent implements Component {
  private readonly collector: LocalCollector;
  private hooks: HookIntake | undefined;
  private watch: SourceWatch | undefined;
  /** The discovery the watch was last set from. */
  private watched: object | undefined;

  constructor(
    private readonly cfg: LocalReceiverConfig,
    private readonly s: ComponentSettings,
  ) {
    this.collector = new LocalCollector({
      root: s.storageRoot,
      sourceRoot: cfg.sourceRoot,
      filter: { include: cfg.include, exclude: cfg.exclude },
      maxDeltaBytes: cfg.maxDeltaBytes,
      workers: cfg.workers || defaultWorkers(),
      providerBodies: cfg.providerBodies || undefined,
      batchSync: cfg.batchSync,
    });
  }

  async start(): Promise<void> {
    // The root must be writable before the first pass; failing here names the problem at start.
    mkdirSync(this.s.storageRoot, { recursive: true });
    this.s.log.info('watching source root', {
      source_root: this.cfg.sourceRoot,
      from: this.cfg.sourceRootFrom,
      interval_ms: this.cfg.intervalMs,
      watch: this.cfg.watch,
    });
    const host = this.s.host;
    if (this.cfg.watch && host.requestPass) {
      this.watch = new SourceWatch(
        this.cfg.sourceRoot,
        (sessions) => host.requestPass!(sessions),
        (msg) => this.s.log.warn(msg, { source_root: this.cfg.sourceRoot }),
      );
    }
    if (this.cfg.hookEndpoint) {
      const ep = parseEndpoint(this.cfg.hookEndpoint, 'hook_endpoint');
      this.hooks = new HookIntake(this.s.storageRoot, ep.host, ep.port, (msg, fields) => this.s.log.warn(msg, fields));
      this.s.log.info('taking plugin hook observations', { url: await this.hooks.start() });
    }
  }

  async land(ctx: PassContext): Promise<StageResult> {
    const r = ctx.sessions ? await this.collector.passFor(ctx.sessions) : await this.collector.passAsync();
    this.watchFound();
    this.s.telemetry.landed(r.landedRecords);
    this.s.telemetry.sourcesInConflict(r.conflicts);
    for (const c of r.newConflicts)
      ctx.log.warn('source in conflict; it stays stopped until a person clears its cursor', { source: c.source, reason: c.reason });
    for (const e of r.errors) ctx.log.error('collection error', { where: e.where, error: e.message });
    for (const n of r.notes ?? []) ctx.log.warn(n);
    return {
      changed: r.landedFiles > 0 || r.newConflicts.length > 0 || r.errors.length > 0,
      problems: r.errors.map((e) => `${this.s.id}: ${e.where}: ${e.message}`),
      counts: {
        sessions: r.sessions,
        sources: r.sources,
        landed_files: r.landedFiles,
        landed_records: r.landedRecords,
        landed_bytes: r.landedBytes,
        busy: r.busy,
        pending: r.pending,
        conflicts: r.conflicts,
        source_gone: r.sourceGone,
        filtered: r.filteredOut,
        // The pass's phases (ms), so a slow land stage can be read from the service's log line.
        ...(r.phases ? { discover_ms: r.phases.discoverMs, judge_ms: r.phases.judgeMs, collect_ms: r.phases.collectMs, finish_ms: r.phases.finishMs } : {}),
      },
    };
  }

  /** After a whole pass: the watch follows what it discovered (a nudged pass discovers nothing). */
  private watchFound(): void {
    const found = this.collector.lastDiscovery;
    if (this.watch && found && found !== this.watched) {
      this.watched = found;
      this.watch.update(found);
    }
  }

  async shutdown(): Promise<void> {
    this.watch?.close();
    await this.hooks?.stop();
    await this.collector.close();
  }
}
