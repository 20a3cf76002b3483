import { PASS_STAGES, type Component, type ComponentKind, type PassStatus, type StageResult } from '../component/component.js';
import type { Logger } from '../component/log.js';
import { rfc3339, nowNs } from '../util/time.js';

export interface Scheduled {
  id: string;
  kind: ComponentKind;
  component: Component;
  log: Logger;
}

export interface SchedulerOptions {
  intervalMs: number;
  /** The least time between the end of a pass and a nudged pass after it (default: a quarter of the interval, at most 1 s). */
  nudgeGapMs?: number;
  log: Logger;
  /** Called once per finished pass (health, metrics). */
  onPass: (status: PassStatus) => void;
}

/** How a final pass ended: `cut` when the shutdown deadline aborted it (some stage may have stopped early). */
export interface FinalPass {
  status: PassStatus;
  cut: boolean;
}

/**
 * One pass per interval: every component's `land`, then every `parse`, `derive`, `send`, in
 * data-flow order (receivers, processors, exporters, extensions). The next whole pass starts an
 * interval after the previous whole one ended, so passes never overlap. A stage that throws or
 * reports problems fails the pass but not the stages after it: what landed is on disk either way.
 * Between whole passes a component may nudge (`nudge`): a pass confined to the sessions it names
 * runs as soon as the gap after the last pass allows, so a line reaches the page without waiting
 * for the interval, and an active session gets at most one round per gap.
 * Once stopped, one final pass may run (the shutdown's), under the same abort signal.
 */
export class PassScheduler {
  private stopping = false;
  private wake: (() => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  private loop: Promise<void> | undefined;
  private passNo = 0;
  private abort = new AbortController();
  /** Sessions nudged since the last pass; `whole` when a nudge asked for everything. */
  private nudged: Set<string> | 'whole' | undefined;
  private lastEnd = 0;
  private lastWholeEnd = 0;

  constructor(
    private readonly parts: Scheduled[],
    private readonly opts: SchedulerOptions,
  ) {}

  start(): void {
    this.loop ??= this.run();
  }

  get passes(): number {
    return this.passNo;
  }

  /** Lets the pass in flight finish, then resolves; no new pass starts. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.wake?.();
    await this.loop;
  }

  /** The shutdown deadline is near: tell the stage in flight to stop at its next safe point. */
  abortInFlight(): void {
    this.abort.abort(new Error('shutdown timeout'));
  }

  /** Aborted once the shutdown deadline is near; it stays aborted (no pass after that has time). */
  get signal(): AbortSignal {
    return this.abort.signal;
  }

  /**
   * After `stop`: one more pass, marked final. It shares the abort signal of every pass, so the
   * drain's deadline bounds it exactly as it bounds the pass in flight.
   */
  async runFinal(): Promise<FinalPass> {
    await this.stop(); // never alongside a regular pass
    const status = await this.runPass({ final: true });
    return { status, cut: this.abort.signal.aborted };
  }

  /**
   * Something moved in `sessions` (none given: somewhere a whole pass must look): run a pass for
   * them once the gap after the last pass has passed. Nudges while a pass runs wait for its end.
   */
  nudge(sessions?: readonly string[]): void {
    if (this.stopping) return;
    if (!sessions) this.nudged = 'whole';
    else if (this.nudged !== 'whole') {
      this.nudged ??= new Set();
      for (const s of sessions) this.nudged.add(s);
    }
    this.wake?.();
  }

  private get nudgeGapMs(): number {
    return this.opts.nudgeGapMs ?? Math.min(1000, this.opts.intervalMs / 4);
  }

  private async run(): Promise<void> {
    let whole = true;
    while (!this.stopping) {
      // A nudge due when the whole pass is too goes first (its few sessions are done in a moment), unless the whole
      // pass is already a gap late: then it runs, and takes the nudged sessions with the rest.
      const late = performance.now() >= this.lastWholeEnd + this.opts.intervalMs + this.nudgeGapMs;
      const nudged = whole && (late || !(this.nudged instanceof Set && this.nudged.size)) ? 'whole' : this.nudged;
      this.nudged = undefined;
      const wholePass = nudged === undefined || nudged === 'whole';
      await this.runPass(wholePass ? {} : { sessions: nudged });
      this.lastEnd = performance.now();
      if (wholePass) this.lastWholeEnd = this.lastEnd;
      whole = false;
      while (!this.stopping) {
        const now = performance.now();
        // A whole pass also waits the gap after a nudged one: the page that pass announced reads its document
        // before the whole pass's discovery takes this thread. It waits no longer than one gap past its time.
        const due = this.lastWholeEnd + this.opts.intervalMs;
        const wholeAt = Math.min(Math.max(due, this.lastEnd + this.nudgeGapMs), due + this.nudgeGapMs);
        const nudgeAt = this.nudged ? this.lastEnd + this.nudgeGapMs : Infinity;
        if (now >= wholeAt) whole = true;
        if (whole ? !this.nudged || this.nudged === 'whole' || now >= nudgeAt : now >= nudgeAt) break;
        await new Promise<void>((res) => {
          this.wake = res;
          // Kept referenced: signal handlers do not keep the process alive, so in a service with no
          // listener (telemetry off, no extension, only the local receiver) this timer is what
          // waits for SIGTERM. `stop` and `nudge` wake the loop, and the timer is cleared here.
          this.timer = setTimeout(res, Math.min(wholeAt, nudgeAt) - now);
        });
        clearTimeout(this.timer);
        this.timer = undefined;
        this.wake = undefined;
      }
    }
  }

  /** Runs one pass now (the loop's body; tests call it directly). */
  async runPass(opts: { final?: boolean; sessions?: ReadonlySet<string> } = {}): Promise<PassStatus> {
    const final = opts.final === true;
    const sessions = final ? undefined : opts.sessions;
    const pass = ++this.passNo;
    const started = process.hrtime.bigint();
    const problems: string[] = [];
    const counts: Record<string, Record<string, number>> = {};
    // Where a pass's time goes, per stage: wall and the process's CPU (all threads), for reading a slow pass from its log line.
    const stagesMs: Record<string, number> = {};
    const stagesCpuMs: Record<string, number> = {};
    let changed = false;
    for (const stage of PASS_STAGES) {
      const stageStart = performance.now();
      const stageCpu = process.cpuUsage();
      for (const part of this.parts) {
        const hook = part.component[stage];
        if (!hook) continue;
        const log = part.log.child({ pass, stage });
        let result: StageResult | void;
        try {
          result = await hook.call(part.component, { pass, stage, final, signal: this.abort.signal, log, ...(sessions ? { sessions } : {}) });
        } catch (err) {
          problems.push(`${part.kind}s/${part.id} ${stage}: ${(err as Error).message}`);
          log.error('stage failed', { error: err });
          continue;
        }
        if (result?.problems?.length) problems.push(...result.problems);
        if (result?.counts) counts[`${part.kind}s/${part.id}`] = result.counts;
        if (result?.changed) changed = true;
      }
      stagesMs[stage] = Math.round((performance.now() - stageStart) * 10) / 10;
      const cpu = process.cpuUsage(stageCpu);
      stagesCpuMs[stage] = Math.round((cpu.user + cpu.system) / 100) / 10;
    }
    const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
    const status: PassStatus = { pass, ok: problems.length === 0, at: rfc3339(nowNs()), durationMs: Math.round(durationMs * 1000) / 1000, problems };
    const fields = {
      pass,
      ...(final ? { final } : {}),
      ...(sessions ? { nudged_sessions: sessions.size } : {}),
      ok: status.ok,
      duration_ms: status.durationMs,
      stages_ms: stagesMs,
      stages_cpu_ms: stagesCpuMs,
      counts,
      ...(problems.length ? { problems } : {}),
    };
    if (!status.ok) this.opts.log.warn('pass finished with problems', fields);
    else if (changed || pass === 1 || final) this.opts.log.info('pass finished', fields);
    else this.opts.log.debug('pass finished', fields);
    this.opts.onPass(status);
    return status;
  }
}
