import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { discover, type DiscoveryResult } from '../../adapters/claude-code/discovery.js';
import { SessionPool } from './session-pool.js';
import { FileLock } from '../../storage/lock.js';
import { isSessionEntryName, listDir, sessionLockPath } from '../../storage/layout.js';

import { ProviderBodyCollector } from './provider-bodies.js';
import { landHookObservations } from './hook-observations.js';
import { sessionsWithWork } from './quiet-session.js';
import {
  collectSession,
  countConflicts,
  emptyReport,
  markPruned,
  mergeReport,
  type LocalCollectOptions,
  type PassPhases,
  type PassReport,
} from './session-collect.js';

export type { LocalCollectOptions, PassReport } from './session-collect.js';

export class LocalCollector {
  /** Sessions no longer discovered that were already checked for pruned sources (checked again once rediscovered). */
  private readonly checkedUndiscovered = new Set<string>();
  private pool: SessionPool | undefined;
  /** Each hook spool's size once all of it was landed: a later pass with nothing new reads no cursor. */
  private readonly settledSpools = new Map<string, number>();
  /** The runtime's raw API body dump, collected after the sessions' transcripts (asz 0.6's order). */
  private readonly bodies: ProviderBodyCollector | undefined;

  constructor(readonly opts: LocalCollectOptions & { workers?: number }) {
    if (opts.providerBodies)
      this.bodies = new ProviderBodyCollector({
        root: opts.root,
        dir: opts.providerBodies,
        maxDeltaBytes: opts.maxDeltaBytes,
        settleMs: opts.bodySettleMs,
        clock: opts.clock,
        afterFile: opts.afterBodyFile,
      });
  }

  /** One pass on this thread. */
  pass(): PassReport {
    const started = Date.now();
    const { report, found } = this.begin();
    for (const s of found.sessions) collectSession(s, this.opts, report);
    return this.finish(report, found, started);
  }

  /**
   * One pass with sessions spread over worker threads. Sessions are independent (each has its
   * own lock and sequence), so this scales with cores and keeps the caller's event loop free.
   */
  async passAsync(): Promise<PassReport> {
    const workers = this.opts.workers ?? 1;
    if (workers <= 1 || this.opts.clock) return this.pass(); // a clock function cannot cross to a worker
    const started = Date.now();
    const { report, found } = this.begin();
    const phases = report.phases!;
    // Before the threads exist, quiet sessions are judged here so a pass with nothing new starts none (a one-shot
    // `collect`); once they run (the service), they judge them, and this thread's event loop stays free.
    let mark = performance.now();
    const work = this.pool ? found.sessions : sessionsWithWork(this.opts.root, found.sessions, report);
    phases.judgeMs = performance.now() - mark;
    mark = performance.now();
    if (work.length < 2) {
      for (const s of work) collectSession(s, this.opts, report);
      phases.collectMs = performance.now() - mark;
      return this.finish(report, found, started);
    }
    this.pool ??= new SessionPool(workers);
    const { afterLand: _hook, afterBodyFile: _bodyHook, afterHookLand: _hookLand, ...plain } = this.opts;
    const done = await this.pool.run(work, plain);
    for (const r of done) mergeReport(report, r);
    phases.collectMs = performance.now() - mark;
    return this.finish(report, found, started);
  }

  /** Stops the worker threads; a later pass starts them again. */
  async close(): Promise<void> {
    await this.pool?.close();
    this.pool = undefined;
  }

  private begin(): { report: PassReport; found: DiscoveryResult } {
    const report = emptyReport();
    const mark = performance.now();
    const found = discover(this.opts.sourceRoot, this.opts.filter);
    report.phases = { discoverMs: performance.now() - mark, judgeMs: 0, collectMs: 0, finishMs: 0, buildMs: 0, stallMs: 0 };
    for (const e of found.errors) report.errors.push({ where: e.path, message: `cannot read project directory: ${e.message}` });
    report.filteredOut = found.filteredOut.length;
    return { report, found };
  }

  private finish(report: PassReport, found: DiscoveryResult, started: number): PassReport {
    const o = this.opts;
    const mark = performance.now();
    const discovered = new Set<string>([...found.sessions.map((s) => s.id), ...found.filteredOut]);
    for (const id of discovered) this.checkedUndiscovered.delete(id);
    // Sessions with landed data that discovery no longer finds: their sources were pruned.
    // Skipped when a project directory could not be read, since that hides files the way pruning does.
    if (found.errors.length === 0) {
      for (const id of listDir(o.root)) {
        if (!isSessionEntryName(id) || discovered.has(id) || this.checkedUndiscovered.has(id)) continue;
        if (!existsSync(join(o.root, id, 'streams')) && !existsSync(join(o.root, id, 'runs'))) continue;
        const lock = new FileLock(sessionLockPath(o.root, id));
        if (!lock.tryAcquire()) {
          report.busy++;
          continue;
        }
        try {
          markPruned(o.root, o.sourceRoot, id, new Set(), report);
          report.conflicts += countConflicts(o.root, id);
          this.checkedUndiscovered.add(id);
        } catch (err) {
          report.errors.push({ where: join(o.root, id), message: (err as Error).message });
        } finally {
          lock.release();
        }
      }
    }
    if (this.bodies) {
      const b = this.bodies.pass();
      // A body the cut writer wrote whole is named with why; a pass with none says nothing more.
      report.bodies = { landed: b.landed, waiting: b.waiting, unreadable: b.unreadable, ...(b.writtenWhole.length ? { writtenWhole: b.writtenWhole } : {}) };
      report.landedFiles += b.landedFiles;
      report.landedRecords += b.landed;
      report.landedBytes += b.landedBytes;
      report.busy += b.busy;
      report.errors.push(...b.errors);
    }
    // The plugin's spooled observations, once the transcripts they sit beside have landed.
    const h = landHookObservations({ root: o.root, maxDeltaBytes: o.maxDeltaBytes, clock: o.clock, afterLand: o.afterHookLand, settled: this.settledSpools });
    if (h.landed || h.skipped || h.waiting.length) report.hooks = { landed: h.landed, skipped: h.skipped, waiting: h.waiting };
    report.landedFiles += h.landedFiles;
    report.landedRecords += h.landed;
    report.busy += h.busy;
    report.pending += h.pending;
    report.errors.push(...h.errors);
    report.durationMs = Date.now() - started;
    const phases = report.phases!;
    phases.finishMs = performance.now() - mark;
    for (const k of Object.keys(phases) as (keyof PassPhases)[]) phases[k] = Math.round(phases[k]);
    return report;
  }
}
