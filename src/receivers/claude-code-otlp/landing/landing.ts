/**
 * The landing thread's work, in rounds. A round takes every entry journaled so far (up to a
 * bound) and lands it together: one file per session, kind and header however many requests it
 * spans, every file written under a temporary name, then all synced, then linked under their
 * final names, then their directories synced (round.ts); only then does `landed.state` move past
 * those entries. A crash at any point re-lands from `landed.state` at the next start: at least
 * once, never lost.
 *
 * A session whose lock another collector holds keeps its records here, in order, and is tried
 * again each round; the journal is kept from its first waiting entry on. A session whose records
 * fail to land for a reason that will not pass (its path is refused for good) has them parked in
 * the quarantine (parking.ts) and is forgotten, so they never hold the journal; one that fails for
 * a reason that may pass (a full or read-only disk) keeps them here and is retried, backing off. The state files are
 * written when things have been quiet for a moment and at shutdown, not per round.
 *
 * Everything here is synchronous but the syncs of a round's files. While a round waits for its
 * syncs, messages that arrive are kept and handled after it, so nothing else (a state-file flush,
 * a spool count) runs in the middle of a round.
 */
import { sessionLockPath } from '../../../storage/layout.js';
import { JournalReader } from './journal-reader.js';
import type { LandLog, LandWorkerInit, WorkerMessage, WorkerRequest } from './messages.js';
import { PACE_POLL_MS, Pacing } from './pacing.js';
import { Parking } from './parking.js';
import { Round } from './round.js';
import { SessionWriter } from './session-writer.js';
import { SpoolWriter } from './spool-writer.js';
import { WaitingWork, type SpoolWork } from './waiting-work.js';

/** State files are written when nothing has arrived for this long. */
export const QUIET_MS = 250;

export interface LandingClock {
  /** The process's monotonic clock in ms (land-pace.ts), shared with the request thread. */
  monotonicMs(): number;
  /** Wall-clock ms (how long a session has waited for its lock). */
  wallMs(): number;
}

export interface LandingDeps {
  post: (m: WorkerMessage) => void;
  /** A message already queued for this thread, taken without waiting (receiveMessageOnPort); undefined when none. */
  nextMessage: () => WorkerRequest | undefined;
  clock: LandingClock;
}

export class Landing {
  readonly log: LandLog;
  private readonly work = new WaitingWork();
  private readonly reader: JournalReader;
  private readonly sessions: SessionWriter;
  private readonly spool: SpoolWriter;
  private readonly pacing: Pacing;
  private readonly parking: Parking;
  private landedFiles = 0;
  private landedRecords = 0;
  private landedSpoolFiles = 0;
  private quietTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private retryDelay = 10;
  private roundTimer: NodeJS.Timeout | undefined;
  /** A round is under way (waiting for its syncs): messages wait for it, and no second one starts. */
  private running = false;
  private readonly deferred: WorkerRequest[] = [];

  constructor(
    private readonly init: LandWorkerInit,
    private readonly deps: LandingDeps,
  ) {
    this.log = (level, msg, fields) => deps.post({ op: 'log', level, msg, fields });
    this.reader = new JournalReader(init.journalDir, init.from, init.to, this.log);
    this.sessions = new SessionWriter(init.root, this.log);
    this.spool = new SpoolWriter(init.root, this.log);
    this.pacing = new Pacing(init.pace, init.paceBelowBytes);
    this.parking = new Parking(init.root, init.journalDir, this.log);
  }

  /** Opens the spool, says ready (or failed), and lands what the journal held at start. */
  start(): void {
    try {
      this.spool.open(this.init.lockWaitMs);
      this.reader.listSegments();
      this.deps.post({ op: 'ready', spoolBytes: this.spool.bytes });
      // What the journal held at start (acknowledged before a crash or a stop) lands first.
      if (this.reader.hasMore()) this.startRounds();
    } catch (err) {
      this.deps.post({ op: 'failed', message: (err as Error).message });
    }
  }

  /** A message from the request thread. */
  onMessage(m: WorkerRequest): void {
    if (this.running) {
      this.deferred.push(m);
      return;
    }
    this.handle(m);
    // A round already scheduled takes this with it; otherwise one starts (or is scheduled) now.
    if (!this.roundTimer && (!this.retryTimer || m.op === 'durable')) this.startRounds();
  }

  private handle(m: WorkerRequest): void {
    if (m.op === 'durable') {
      this.reader.durableTo(m.end);
      // Nothing new to read means no round will report: answer the notice now, so the next can come.
      if (!this.reader.hasMore()) this.progress();
    } else if (m.op === 'rescan-spool') {
      try {
        this.spool.scan();
      } catch {
        /* counted again next time */
      }
      this.progress();
      this.deps.post({ op: 'reply', id: m.id, ok: true });
    } else {
      try {
        this.sessions.flush();
        this.spool.flush();
        this.deps.post({ op: 'reply', id: m.id, ok: true });
      } catch (err) {
        this.deps.post({ op: 'reply', id: m.id, ok: false, message: (err as Error).message });
      }
    }
  }

  private startRounds(): void {
    if (this.running) return;
    clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    clearTimeout(this.roundTimer);
    this.roundTimer = undefined;
    this.running = true;
    void this.rounds().finally(() => {
      this.running = false;
    });
  }

  private readonly later = () => this.startRounds();

  private async rounds(): Promise<void> {
    const { reader, pacing, work } = this;
    for (;;) {
      for (const m of this.deferred.splice(0)) this.handle(m);
      for (let more = this.deps.nextMessage(); more; more = this.deps.nextMessage()) this.handle(more);
      reader.durableTo(pacing.sharedDurableEnd());
      if (!reader.hasMore() && work.isEmpty()) break;
      const now = this.deps.clock.monotonicMs();
      const wait = pacing.waitBeforeRound(now, reader.landedThrough);
      if (wait > 0) {
        this.roundTimer = setTimeout(this.later, Math.min(wait, PACE_POLL_MS));
        return;
      }
      pacing.roundStarted(now);
      const before = reader.readPos;
      let stillWaiting: boolean;
      let read = false;
      try {
        pacing.lastRoundFull = reader.read(work);
        read = reader.readPos !== before;
        stillWaiting = await this.landWaiting();
        reader.checkpoint(work.firstWaitingAt(reader.readPos));
      } catch (err) {
        this.log('error', `the receiver's landing round failed; what it held stays in the journal: ${(err as Error).message}`);
        this.parking.transient(`a landing round failed: ${(err as Error).message}`);
        stillWaiting = true;
      }
      pacing.roundEnded(this.deps.clock.monotonicMs());
      this.parking.roundEnded(this.deps.clock.wallMs());
      this.progress();
      if (stillWaiting && !read) {
        // Only waiting work left (a lock held elsewhere, a failing disk), and nothing more can be
        // read (the end, or as much waiting in memory as may): try again later, backing off.
        this.retryTimer = setTimeout(this.later, this.retryDelay);
        this.retryDelay = Math.min(this.retryDelay * 2, 1000);
        break;
      }
      if (!stillWaiting) this.retryDelay = 10;
    }
    for (const m of this.deferred.splice(0)) this.handle(m);
    clearTimeout(this.quietTimer);
    this.quietTimer = setTimeout(() => {
      if (this.running) return; // the round under way sets this timer again when it ends
      try {
        this.sessions.flush();
        this.spool.flush();
      } catch {
        /* the next flush tries again */
      }
    }, QUIET_MS);
  }

  /** Lands everything waiting; returns whether anything is still waiting (a lock held elsewhere, a failed write). */
  private async landWaiting(): Promise<boolean> {
    const round = new Round(this.log);
    const finishers: (() => void)[] = [];
    const now = this.deps.clock.wallMs();
    const work = this.work;
    for (const [session, sw] of work.sessions) {
      if (sw.refusedName !== undefined) {
        if (this.parking.refusedName(session, sw, sw.refusedName)) work.sessionParked(session, sw);
        continue;
      }
      let finish: (() => Error | undefined) | undefined;
      try {
        finish = this.sessions.prepare(round, session, sw);
      } catch (err) {
        if (this.parking.failed(session, sw, err)) work.sessionParked(session, sw);
        continue;
      }
      if (!finish) {
        if (!sw.waitingSince) sw.waitingSince = now;
        if (!sw.warned && now - sw.waitingSince >= this.init.lockWaitMs) {
          sw.warned = true;
          this.log(
            'warn',
            `session ${session} is locked by another collector (${sessionLockPath(this.init.root, session)}); its ${sw.records} records wait in the journal until it is free`,
            { session, records: sw.records },
          );
        }
        continue;
      }
      finishers.push(() => {
        const err = finish();
        if (err) {
          if (this.parking.failed(session, sw, err)) work.sessionParked(session, sw);
          return;
        }
        work.sessionLanded(session, sw);
        this.landedFiles += sw.drafts.size;
        this.landedRecords += sw.records;
      });
    }
    if (work.spool.length) {
      const taken = work.spool;
      let finish: (() => SpoolWork[]) | undefined;
      try {
        finish = this.spool.prepare(round, taken);
      } catch (err) {
        this.log('error', `could not land metrics requests in ${this.spool.dir}; they stay in the journal and are tried again: ${(err as Error).message}`);
        this.parking.transient(`could not land metrics requests in ${this.spool.dir}: ${(err as Error).message}`);
      }
      if (finish) {
        work.spool = [];
        finishers.push(() => {
          const failed = finish();
          if (failed.length) this.parking.transient(`could not land ${failed.length} metrics requests in ${this.spool.dir}`);
          work.spool = failed.concat(work.spool);
          for (const w of taken)
            if (!failed.includes(w)) {
              work.bytes -= w.body.length;
              this.landedSpoolFiles++;
            }
        });
      }
    }
    await round.land();
    for (const f of finishers) f();
    return !work.isEmpty();
  }

  private progress(): void {
    const r = this.reader;
    this.deps.post({
      op: 'progress',
      landedThrough: r.landedThrough,
      readThrough: r.durableEnd,
      spoolBytes: this.spool.bytes,
      files: this.landedFiles,
      records: this.landedRecords,
      spoolFiles: this.landedSpoolFiles,
      damaged: r.takeDamaged(),
      waitingSessions: this.work.sessions.size,
      quarantined: this.parking.takeParked(),
      failing: this.parking.failing(),
    });
    this.landedFiles = this.landedRecords = this.landedSpoolFiles = 0;
  }
}
