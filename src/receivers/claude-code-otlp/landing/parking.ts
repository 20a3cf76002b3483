/**
 * What landing does with a session whose records failed to land: a permanent failure
 * (failure-kind.ts) parks them in the storage root's quarantine (storage/quarantine.ts), so they
 * leave the journal and never block what comes after them; a transient one leaves them in the
 * journal to be tried again. It also keeps the tally the landing thread reports: records parked
 * by reason, and whether landing is failing now (transient failures in consecutive rounds).
 */
import { basename } from 'node:path';
import { quarantineRecords, type QuarantineGroup } from '../../../storage/quarantine.js';
import { nowNs } from '../../../util/time.js';
import { failureKind, failurePath, failureReason } from './failure-kind.js';
import type { LandLog } from './messages.js';
import type { SessionWork } from './waiting-work.js';

/** Rounds in a row with a transient failure before landing counts as failing (one blip does not flap health). */
export const FAILING_AFTER_ROUNDS = 2;

export class Parking {
  /** Records parked since the last take, by reason. */
  private parked = new Map<string, number>();
  /** The first transient failure of the round under way, if any. */
  private roundFailure: string | undefined;
  private failingRounds = 0;
  private lastFailure = '';
  private failingSinceMs = 0;

  constructor(
    private readonly root: string,
    private readonly journalDir: string,
    private readonly log: LandLog,
    private readonly clockNs: () => bigint = nowNs,
  ) {}

  /**
   * A session's records failed to land with `err`. Returns true when they were parked in the
   * quarantine (the caller forgets them: they no longer hold the journal), false when they stay
   * to be tried again.
   */
  failed(session: string, work: SessionWork, err: unknown): boolean {
    const message = (err as Error)?.message ?? String(err);
    if (failureKind(err) === 'transient') {
      this.transient(`could not land the records of session ${session}: ${message}`);
      this.log('error', `could not land the records of session ${session}; they stay in the journal and are tried again: ${message}`, { session });
      return false;
    }
    const path = failurePath(err);
    return this.park(session, work, failureReason(err), message, path);
  }

  /**
   * A session's records from a journal entry written before the names rule refused its id (an
   * older version answered them as accepted): quarantined under `bad_session_id` with the rule's
   * reason. Returns false when the quarantine cannot take them now (they stay, and are tried again).
   */
  refusedName(session: string, work: SessionWork, problem: string): boolean {
    const message = `the session id is refused by the storage root's names rule (${problem}); these records were accepted by an earlier version of aszcol, before that rule refused it`;
    return this.park(session, work, 'bad_session_id', message);
  }

  private park(session: string, work: SessionWork, reason: string, message: string, path?: string): boolean {
    let file: string;
    try {
      file = quarantineRecords(
        this.root,
        { reason, session, error: message, ...(path ? { path } : {}), receiver: basename(this.journalDir), records: work.records },
        groupsOf(work),
        this.clockNs(),
      );
    } catch (qerr) {
      // The quarantine cannot take them either (a full disk, say): they stay in the journal.
      this.transient(`could not quarantine the records of session ${session}: ${(qerr as Error).message}`);
      this.log(
        'error',
        `the records of session ${session} cannot land (${message}) and could not be quarantined; they stay in the journal: ${(qerr as Error).message}`,
        {
          session,
        },
      );
      return false;
    }
    this.parked.set(reason, (this.parked.get(reason) ?? 0) + work.records);
    this.log(
      'error',
      `the ${work.records} records of session ${JSON.stringify(session)} can never land (${message}); they were quarantined in ${file} and landing goes on without them`,
      { session, reason, records: work.records, file },
    );
    return true;
  }

  /** Something other than a session's records failed for a reason that may pass (the spool, a whole round). */
  transient(what: string): void {
    this.roundFailure ??= what;
  }

  /** A round ended: a failure in it extends the failing streak, a clean one ends it. */
  roundEnded(wallMs: number): void {
    if (this.roundFailure) {
      if (this.failingRounds++ === 0) this.failingSinceMs = wallMs;
      this.lastFailure = this.roundFailure;
    } else this.failingRounds = 0;
    this.roundFailure = undefined;
  }

  /** Whether landing is failing now, and why: the last failure, and since when (wall-clock ms). */
  failing(): { message: string; sinceMs: number } | undefined {
    return this.failingRounds >= FAILING_AFTER_ROUNDS ? { message: this.lastFailure, sinceMs: this.failingSinceMs } : undefined;
  }

  /** Records parked since the last call, by reason. */
  takeParked(): Record<string, number> {
    const out = Object.fromEntries(this.parked);
    this.parked = new Map();
    return out;
  }
}

/** A session's waiting drafts as the quarantine's groups: each record as the JSON object its line would have held. */
function groupsOf(work: SessionWork): QuarantineGroup[] {
  return [...work.drafts.values()].map((d) => ({
    kind: d.kind,
    src: d.src,
    resource: JSON.parse(d.resourceJson) as unknown,
    scope: JSON.parse(d.scopeJson) as unknown,
    records: d.tails.map((t) => `{${t}`),
  }));
}
