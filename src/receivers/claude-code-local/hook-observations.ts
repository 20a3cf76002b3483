/**
 * Landing the plugin's spooled observations, after the transcripts of a pass: each session's new
 * spool lines become `changes` and `execution` Session Data files under the session's lock, with
 * the session's sequence and into its index, like every landed file, so rounds bind them, `verify`
 * checks them and `push` sends them (storage/hook-landing.ts keeps the cursors). A session with no
 * conversation landed yet, and observations that name no usable session, wait with the reason.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { HOOK_ADAPTER, HOOK_DIALECT, placeHookLine } from '../../adapters/claude-code/hook-records.js';
import { entryNameProblem } from '../../storage/entry-names.js';
import { extendIndex, FreshIndex } from '../../storage/fresh-index.js';
import { landHookSpool, spoolPath, spoolProgress } from '../../storage/hook-landing.js';
import { DEFAULT_TRIM_BYTES, hasRetiredSpool, spoolToRead, trimSpool, type TrimOptions, type TrimStep } from '../../storage/hook-spool-trim.js';
import { UNPLACED_SPOOL, readSpool, spoolDir } from '../../storage/hook-spool.js';
import { landedDirs, listDir } from '../../storage/layout.js';
import { SessionLock } from '../../storage/session-lock.js';
import { SequenceCounter, loadSessionState, saveSessionState } from '../../storage/session-state.js';
import { SyncBatch } from '../../storage/sync-batch.js';
import { sweepSessionTemporaries } from '../../storage/session-temporaries.js';
import { compactStamp, nowNs, rfc3339 } from '../../util/time.js';

export interface HookLandingOptions {
  root: string;
  maxDeltaBytes: number;
  clock?: () => bigint;
  /** Test hook: called once a session's observation files are installed and before any cursor moves (the crash test kills there). */
  afterLand?: () => void;
  /**
   * A collector's memory across passes: each session's spool size once all of it was landed, so a
   * pass with nothing new costs one stat per spool and reads no cursor.
   */
  settled?: Map<string, number>;
  /** A spool is rotated away once it holds this many bytes, all landed (hook-spool-trim.ts); 0 trims at every landing. */
  trimAtBytes?: number;
  /** Test hook: called after each durable step of a trim (the crash test kills there). */
  afterTrimStep?: (step: TrimStep) => void;
}

export interface HookPassReport {
  /** Observations landed this pass, and the files they landed in. */
  landed: number;
  landedFiles: number;
  landedBytes: number;
  /** Spool lines a killed pass had landed already, found and not landed again. */
  skipped: number;
  /** Spool files whose lines wait, each with why. */
  waiting: { spool: string; reason: string }[];
  busy: number;
  /** Spools with complete lines left past what one pass lands. */
  pending: number;
  errors: { where: string; message: string }[];
}

/** Every session with spooled observations past its hook cursor, landed; what cannot land yet said. */
export function landHookObservations(o: HookLandingOptions): HookPassReport {
  const report: HookPassReport = { landed: 0, landedFiles: 0, landedBytes: 0, skipped: 0, waiting: [], busy: 0, pending: 0, errors: [] };
  // A session whose spool was renamed aside and not yet finished with is one to look at, live spool or not.
  const sessions = new Set(
    listDir(spoolDir(o.root)).flatMap((n) => (n.endsWith('.jsonl') ? [n.slice(0, -6)] : n.endsWith('.jsonl.retired') ? [n.slice(0, -14)] : [])),
  );
  for (const session of [...sessions].sort()) {
    const name = `${session}.jsonl`;
    if (session === UNPLACED_SPOOL) {
      const n = readSpool(o.root, UNPLACED_SPOOL).length;
      if (n) report.waiting.push({ spool: name, reason: `${n} observation(s) name no usable session id: kept in the spool, landed nowhere` });
      continue;
    }
    if (entryNameProblem(session) !== undefined) continue;
    if (o.settled?.has(session) && sizeOf(spoolPath(o.root, session)) === o.settled.get(session)) continue;
    const retired = hasRetiredSpool(o.root, session);
    const progress = spoolProgress(o.root, session);
    if (!retired) {
      if (!progress) continue;
      // All landed: passed over from now on, unless it is big enough to be trimmed away.
      if (progress.size <= progress.landed && (progress.size === 0 || progress.size < (o.trimAtBytes ?? DEFAULT_TRIM_BYTES))) {
        o.settled?.set(session, progress.size);
        continue;
      }
    }
    o.settled?.delete(session);
    if (landedDirs(o.root, session).length === 0 || !loadSessionState(o.root, session)) {
      report.waiting.push({ spool: name, reason: 'the session has no conversation landed yet: its observations land once its transcript does' });
      continue;
    }
    landSession(o, session, report);
  }
  return report;
}

function sizeOf(path: string): number | undefined {
  try {
    return statSync(path).size;
  } catch {
    return undefined;
  }
}

function landSession(o: HookLandingOptions, session: string, report: HookPassReport): void {
  const lock = new SessionLock(o.root, session);
  if (!lock.tryAcquire()) {
    report.busy++;
    return;
  }
  try {
    sweepSessionTemporaries(o.root, session);
    const trim: TrimOptions = {
      root: o.root,
      session,
      atBytes: o.trimAtBytes ?? DEFAULT_TRIM_BYTES,
      now: () => rfc3339((o.clock ?? nowNs)()),
      after: o.afterTrimStep,
    };
    // Bounded: a retired spool's tail, then what its last writers added, then the live spool after the switch.
    for (let round = 0; round < 3; round++) {
      const status = landOnce(o, session, spoolToRead(trim), report);
      if (status === 'conflict') return;
      const t = trimSpool(trim);
      if (t.state === 'switched' && t.torn)
        report.errors.push({
          where: join(o.root, session),
          message: `${t.torn} byte(s) of an unfinished spool line, left by a hook that died while appending, went with the retired spool`,
        });
      if (t.state === 'none' || (t.state === 'waiting' && status === 'unchanged')) return;
    }
  } catch (err) {
    report.errors.push({ where: join(o.root, session), message: (err as Error).message });
  } finally {
    lock.release();
  }
}

/** One landing of the spool file `path` past the hook cursor, committed with its index and the session's counter. */
function landOnce(o: HookLandingOptions, session: string, path: string, report: HookPassReport): 'landed' | 'unchanged' | 'conflict' {
  const batch = new SyncBatch();
  try {
    const counter = new SequenceCounter(o.root, session);
    const passNs = (o.clock ?? nowNs)();
    const fresh = new FreshIndex();
    const outcome = landHookSpool({
      root: o.root,
      session,
      path,
      place: (line) => placeHookLine(line, (s) => entryNameProblem(s) === undefined),
      adapter: HOOK_ADAPTER,
      dialect: HOOK_DIALECT,
      stamp: compactStamp(passNs),
      at: rfc3339(passNs),
      now: () => rfc3339((o.clock ?? nowNs)()),
      maxDeltaBytes: o.maxDeltaBytes,
      nextSeq: () => counter.take(),
      batch,
      fresh,
    });
    if (outcome.status === 'conflict') {
      batch.abort();
      report.errors.push({ where: join(o.root, session), message: outcome.reason });
      return 'conflict';
    }
    if (outcome.status === 'unchanged') {
      batch.abort();
      return 'unchanged';
    }
    batch.commitSync(o.afterLand);
    // The index and the session's counter follow what landed, as after a transcript's landing.
    const state = new SyncBatch();
    for (const p of extendIndex(o.root, session, fresh, state).problems) report.errors.push({ where: join(o.root, session, 'index'), message: p });
    saveSessionState(o.root, session, { ...(loadSessionState(o.root, session) ?? { liveness: 'unknown' }), next_seq: counter.peek() }, state);
    state.commitSync();
    report.landed += outcome.records;
    report.landedFiles += outcome.files;
    report.landedBytes += outcome.bytes;
    report.skipped += outcome.skipped;
    if (outcome.pending) report.pending++;
    return 'landed';
  } catch (err) {
    batch.abort();
    throw err;
  }
}
