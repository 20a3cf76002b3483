import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { discover, type DiscoveredSession, type DiscoveryResult } from '../../adapters/claude-code/discovery.js';
import { SessionPool } from './session-pool.js';
import { SessionLock } from '../../storage/session-lock.js';
import { sweepDeadWriters } from '../../storage/landing-epoch.js';
import { isSessionEntryName, listDir } from '../../storage/layout.js';
import { SessionCursors } from '../../storage/session-cursors.js';

import { ProviderBodyCollector } from './provider-bodies.js';
import { landHookObservations } from './hook-observations.js';
import { sessionsWithWork } from './quiet-session.js';
import { QuietMemo } from './quiet-memo.js';
import { RememberedQuiet } from './remembered-quiet.js';
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
  /** Sessions last found quiet, by their sources' stats. */
  private readonly memo = new QuietMemo();
  /** What the last whole pass discovered: a nudged pass collects its sessions as found then. */
  private found: DiscoveryResult | undefined;

  constructor(
    readonly opts: LocalCollectOptions & {
      workers?: number;
      /** A one-shot collector's build: each pass starts from what the last one left quiet and remembers its own in the root (remembered-quiet.ts). */
      remember?: string;
    },
  ) {
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
    const remembered =
      this.opts.remember === undefined
        ? undefined
        : new RememberedQuiet(this.opts.root, this.opts.sourceRoot, this.opts.filter ?? { include: [], exclude: [] }, this.opts.remember);
    const { report, found } = this.begin(remembered);
    const phases = report.phases!;
    // Quiet sessions are judged here, so a pass with nothing new starts no worker (a one-shot `collect`). A
    // collector that keeps running (the service) remembers them by their sources' stats and judges only what moved.
    let mark = performance.now();
    const memo = remembered ?? this.memo;
    const { unchanged, judge } = memo.split(found.sessions);
    for (const s of unchanged) {
      report.sessions++;
      report.sources += s.sources.length;
    }
    const work = sessionsWithWork(
      this.opts.root,
      judge.map((j) => j.session),
      report,
    );
    const busy = new Set(work.map((s) => s.id));
    for (const j of judge) if (!busy.has(j.session.id)) memo.keep(j.session.id, j.sig);
    const remember = remembered && { memory: remembered, collected: judge.filter((j) => busy.has(j.session.id)) };
    phases.judgeMs = performance.now() - mark;
    mark = performance.now();
    if (work.length < 2) {
      for (const s of work) collectSession(s, this.opts, report);
      phases.collectMs = performance.now() - mark;
      return this.finish(report, found, started, remember);
    }
    this.pool ??= new SessionPool(workers);
    const done = await this.pool.run(work, this.workerOptions());
    for (const r of done) mergeReport(report, r);
    phases.collectMs = performance.now() - mark;
    return this.finish(report, found, started, remember);
  }

  /** What the last whole pass discovered, if one ran. */
  get lastDiscovery(): DiscoveryResult | undefined {
    return this.found;
  }

  /**
   * A pass over `sessions` alone, as the last whole pass discovered them: the sources a watch saw
   * move. A session that pass did not find (new since) sends it down a whole pass. What a whole
   * pass does beyond its sessions (pruned sources, the body dump) waits for the next one.
   */
  async passFor(sessions: ReadonlySet<string>): Promise<PassReport> {
    const known = this.found?.sessions.filter((s) => sessions.has(s.id)) ?? [];
    if (known.length < sessions.size) return this.passAsync();
    const started = Date.now();
    const report = emptyReport();
    report.phases = { discoverMs: 0, judgeMs: 0, collectMs: 0, finishMs: 0, buildMs: 0, stallMs: 0 };
    const mark = performance.now();
    if (known.length < 2 || !this.pool) for (const s of known) collectSession(s, this.opts, report);
    else for (const r of await this.pool.run(known, this.workerOptions())) mergeReport(report, r);
    report.phases.collectMs = Math.round(performance.now() - mark);
    report.durationMs = Date.now() - started;
    return report;
  }

  /** Stops the worker threads; a later pass starts them again. */
  async close(): Promise<void> {
    await this.pool?.close();
    this.pool = undefined;
  }

  /** The options a worker thread is sent: the test hooks are functions, which cannot cross to it (they fire on this thread only). */
  private workerOptions(): LocalCollectOptions {
    const { afterLand: _hook, afterBodyFile: _bodyHook, afterHookLand: _hookLand, afterHookTrim: _trimHook, ...plain } = this.opts;
    return plain;
  }

  private begin(remembered?: RememberedQuiet): { report: PassReport; found: DiscoveryResult } {
    const report = emptyReport();
    const mark = performance.now();
    // A writer killed mid-landing left its mark (and maybe an epoch temporary): gone before this pass lands.
    sweepDeadWriters(this.opts.root);
    const found = remembered ? remembered.discover() : discover(this.opts.sourceRoot, this.opts.filter);
    this.found = found;
    report.phases = { discoverMs: performance.now() - mark, judgeMs: 0, collectMs: 0, finishMs: 0, buildMs: 0, stallMs: 0 };
    for (const e of found.errors) report.errors.push({ where: e.path, message: `cannot read project directory: ${e.message}` });
    report.filteredOut = found.filteredOut.length;
    return { report, found };
  }

  private finish(
    report: PassReport,
    found: DiscoveryResult,
    started: number,
    remember?: { memory: RememberedQuiet; collected: { session: DiscoveredSession; sig: string | undefined }[] },
  ): PassReport {
    const o = this.opts;
    if (remember) for (const [spool, size] of remember.memory.spools()) this.settledSpools.set(spool, size);
    const mark = performance.now();
    const discovered = new Set<string>([...found.sessions.map((s) => s.id), ...found.filteredOut]);
    for (const id of discovered) this.checkedUndiscovered.delete(id);
    // Sessions with landed data that discovery no longer finds: their sources were pruned.
    // Skipped when a project directory could not be read, since that hides files the way pruning does.
    if (found.errors.length === 0) {
      for (const id of listDir(o.root)) {
        if (!isSessionEntryName(id) || discovered.has(id) || this.checkedUndiscovered.has(id)) continue;
        if (!existsSync(join(o.root, id, 'streams')) && !existsSync(join(o.root, id, 'runs'))) continue;
        const lock = new SessionLock(o.root, id);
        if (!lock.tryAcquire()) {
          report.busy++;
          continue;
        }
        try {
          const cursors = SessionCursors.read(o.root, id);
          markPruned(o.sourceRoot, cursors, new Set(), report);
          report.conflicts += countConflicts(cursors);
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
    const h = landHookObservations({
      root: o.root,
      maxDeltaBytes: o.maxDeltaBytes,
      clock: o.clock,
      afterLand: o.afterHookLand,
      settled: this.settledSpools,
      trimAtBytes: o.hookTrimBytes,
      afterTrimStep: o.afterHookTrim,
    });
    if (h.landed || h.skipped || h.waiting.length) report.hooks = { landed: h.landed, skipped: h.skipped, waiting: h.waiting };
    report.landedFiles += h.landedFiles;
    report.landedRecords += h.landed;
    report.busy += h.busy;
    report.pending += h.pending;
    report.errors.push(...h.errors);
    if (remember) {
      // Only a pass that left nothing undone vouches for what it collected.
      if (report.errors.length === 0 && report.pending === 0 && report.conflicts === 0 && report.busy === 0) remember.memory.landed(remember.collected);
      remember.memory.save(this.settledSpools);
    }
    report.durationMs = Date.now() - started;
    const phases = report.phases!;
    phases.finishMs = performance.now() - mark;
    for (const k of Object.keys(phases) as (keyof PassPhases)[]) phases[k] = Math.round(phases[k]);
    return report;
  }
}
