/** Collecting one discovered session: its sources landed under its lock, and the report of a pass. */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { DiscoveredSession, SessionFilter, SourceFile } from '../../adapters/claude-code/discovery.js';
import {
  ADAPTER,
  DIALECT,
  convertJournalLine,
  convertManifest,
  convertScript,
  convertSidecar,
  convertTranscriptLine,
} from '../../adapters/claude-code/dialect.js';
import { collectAppendSource, type SourceOutcome } from '../../storage/append-source.js';
import { collectSnapshotSource } from '../../storage/snapshot-source.js';
import { SessionCursors, cursorKey } from '../../storage/session-cursors.js';
import type { FileLock } from '../../storage/lock.js';
import { SessionLock } from '../../storage/session-lock.js';
import type { BatchLandingMark } from '../../storage/batch-landing-mark.js';
import { readIndexState } from '../../storage/index.js';
import { extendIndex, FreshIndex } from '../../storage/fresh-index.js';
import { indexNewSession, sessionIsNew } from '../../storage/new-session.js';
import { sweepSessionTemporaries } from '../../storage/session-temporaries.js';
import { SequenceCounter, loadSessionState } from '../../storage/session-state.js';
import type { LandingTarget } from '../../storage/landing.js';
import { SyncBatch } from '../../storage/sync-batch.js';
import type { DurabilityMode } from '../../storage/filesystem-sync.js';
import { quietSession } from './quiet-session.js';
import { compactStamp, nowNs, rfc3339 } from '../../util/time.js';

export interface LocalCollectOptions {
  root: string;
  sourceRoot: string;
  filter: SessionFilter;
  maxDeltaBytes: number;
  maxWindows?: number;
  /** Test hook, see `AppendSourceSpec.afterLand`. */
  afterLand?: () => void;
  /** The header's `adapter` (a scenario `sd` build lands under its own name). */
  adapter?: string;
  /** The clock stamps come from (a scenario build with a fixed time lands byte-identical files). */
  clock?: () => bigint;
  /** The directory Claude Code writes its raw API bodies to (`OTEL_LOG_RAW_API_BODIES=file:DIR`); none collects no bodies. */
  providerBodies?: string;
  /** How long a body that is not JSON yet may still be being written (tests shorten it). */
  bodySettleMs?: number;
  /** Test hook, called after each provider_body file is installed with how many this pass installed (the crash test kills there). */
  afterBodyFile?: (files: number) => void;
  /** Test hook, called once a session's plugin observation files are installed and before their cursors move. */
  afterHookLand?: () => void;
  /** The size at which a session's fully landed hook spool is rotated away (hook-spool-trim.ts; default 64 KiB). */
  hookTrimBytes?: number;
  /** Test hook, called after each durable step of a hook spool trim. */
  afterHookTrim?: (step: 'retired' | 'switched' | 'removed') => void;
  /** How worker threads make a batch durable: an fsync per file (the default), or two `syncfs` per batch. */
  batchSync?: DurabilityMode;
}

export interface PassReport {
  sessions: number;
  sources: number;
  landedFiles: number;
  landedRecords: number;
  /** Source bytes consumed this pass. */
  landedBytes: number;
  /** Sessions another process held the lock of. */
  busy: number;
  /** Sources with complete lines left after this pass's window limit. */
  pending: number;
  /** Cursors in conflict, counted over every source this pass looked at. */
  conflicts: number;
  /** Conflicts found this pass, named once; later passes only count them. */
  newConflicts: { source: string; reason: string }[];
  sourceGone: number;
  filteredOut: number;
  errors: { where: string; message: string }[];
  durationMs: number;
  /** Provider bodies this pass: landed, waiting for their session or their last write, landed whole as unreadable. */
  bodies?: { landed: number; waiting: number; unreadable: number; writtenWhole?: { src: string; why: string }[] };
  /** The plugin's spooled observations this pass: landed, found landed by a killed pass, and the spools that wait with why. */
  hooks?: { landed: number; skipped: number; waiting: { spool: string; reason: string }[] };
  /** Where the pass's time went, for the benchmarks (`PassPhases`). */
  phases?: PassPhases;
  /** What the pass has to say that is not an error (a durability fallback), each said once per collector thread. */
  notes?: string[];
}

/**
 * A pass's wall time by phase, in milliseconds. `collectMs` is the sessions' collection as the
 * caller waited for it; `buildMs` and `stallMs` are summed over the workers: the time they spent
 * collecting, and the time they stood waiting for an earlier batch's syncs to finish.
 */
export interface PassPhases {
  discoverMs: number;
  judgeMs: number;
  collectMs: number;
  finishMs: number;
  buildMs: number;
  stallMs: number;
}

function target(root: string, s: SourceFile, stamp: string, at: string, adapter = ADAPTER): LandingTarget {
  const header: LandingTarget['header'] = { kind: s.kind, adapter, dialect: DIALECT, src: s.rel, session: s.session };
  if (s.area === 'streams') header.stream = s.stream;
  if (s.batch) header.batch = s.batch;
  return { dir: join(root, s.session, s.area, s.areaName), prefix: s.prefix, stamp, at, header };
}

function converterFor(s: SourceFile): (b: Buffer) => ReturnType<typeof convertTranscriptLine> {
  switch (s.kind) {
    case 'transcript':
      return convertTranscriptLine;
    case 'journal':
      return (b) => convertJournalLine(b, s.batch!);
    case 'agent_meta':
      return (b) => convertSidecar(b, s.stream!);
    case 'workflow_manifest':
      return (b) => convertManifest(b, s.batch!);
    case 'workflow_script':
      return (b) => convertScript(b, s.batch!, s.label);
    default:
      throw new Error(`no converter for ${s.kind}`);
  }
}

/**
 * The cursors of a session whose files discovery no longer lists: each `active` one whose file
 * is gone becomes `source_gone` (written now, or staged in `batch`). A permission error is not a
 * missing file, so it leaves the cursor. The OTLP receiver's cursors and the plugin's are not the
 * session's source cursors (session-cursors.ts) and are left alone.
 */
export function markPruned(sourceRoot: string, cursors: SessionCursors, listed: Set<string>, report: PassReport, batch?: SyncBatch): void {
  for (const { key, cursor: c } of cursors.all()) {
    if (c.state !== 'active' || listed.has(c.source)) continue;
    try {
      statSync(join(sourceRoot, c.source));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
        cursors.set(key, { ...c, state: 'source_gone', updated_at: rfc3339(nowNs()) }, batch);
        report.sourceGone++;
      }
    }
  }
}

export function countConflicts(cursors: SessionCursors): number {
  return cursors.all().filter(({ cursor }) => cursor.state === 'conflict').length;
}

/** A session collected into a batch and still held under its lock until the batch is durable. */
export interface HeldSession {
  id: string;
  lock: FileLock;
  counter: SequenceCounter;
  firstSeq: number;
  listed: Set<string>;
  at: string;
  /** What landed this pass, for the index without reading it back. */
  fresh: FreshIndex;
  /** The session's directory held only the lock when it was taken: nothing to sweep, prune or read back. */
  isNew: boolean;
  /** The session's source cursors as this pass left them. */
  cursors: SessionCursors;
}

/**
 * Collects one session's sources into `batch` under the session's lock, which stays held until
 * `finishSessions` (taken under `mark`, the batch's landing mark, when given). Undefined when another process holds the lock or the session failed (reported).
 */
export function beginSession(
  s: DiscoveredSession,
  o: LocalCollectOptions,
  report: PassReport,
  batch: SyncBatch,
  mark?: BatchLandingMark,
): HeldSession | undefined {
  report.sessions++;
  if (quietSession(o.root, s)) {
    report.sources += s.sources.length; // each looked at, each unchanged
    return undefined;
  }
  const lock = new SessionLock(o.root, s.id, mark);
  if (!lock.tryAcquire()) {
    report.busy++;
    return undefined;
  }
  try {
    const isNew = sessionIsNew(o.root, s.id);
    if (!isNew) sweepSessionTemporaries(o.root, s.id);
    const cursors = isNew ? SessionCursors.fresh(o.root, s.id) : SessionCursors.read(o.root, s.id);
    const counter = new SequenceCounter(o.root, s.id, isNew, cursors.counter);
    const firstSeq = counter.peek();
    const passNs = (o.clock ?? nowNs)();
    const stamp = compactStamp(passNs);
    const at = rfc3339(passNs);
    const now = () => rfc3339((o.clock ?? nowNs)());
    const claimed = new Map<string, string>();
    const listed = new Set<string>();
    const fresh = new FreshIndex();
    // Main transcript first, then children, runs: the order files land in within a pass.
    const order = (x: SourceFile) => (x.area === 'streams' && x.stream === 'main' ? 0 : x.area === 'streams' ? 1 : 2);
    const sources = [...s.sources].sort((a, b) => order(a) - order(b) || (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
    for (const src of sources) {
      report.sources++;
      listed.add(src.rel);
      const t = target(o.root, src, stamp, at, o.adapter);
      const key = cursorKey(src.area, src.areaName, src.prefix);
      const owner = claimed.get(key);
      if (owner !== undefined) {
        // Two source files would share one stream or run directory: refuse the second rather than mix them behind one cursor.
        recordOutcome(report, src, { status: 'conflict', reason: `${src.rel} and ${owner} would both land in ${key}`, known: false });
        continue;
      }
      claimed.set(key, src.rel);
      let outcome: SourceOutcome;
      try {
        outcome =
          src.reading === 'append'
            ? collectAppendSource(
                {
                  path: src.path,
                  rel: src.rel,
                  target: t,
                  maxDeltaBytes: o.maxDeltaBytes,
                  maxWindows: o.maxWindows,
                  nextSeq: () => counter.take(),
                  convert: converterFor(src),
                  now,
                  batch,
                  fresh,
                },
                cursors.slot(key, batch),
              )
            : collectSnapshotSource(
                { path: src.path, rel: src.rel, target: t, nextSeq: () => counter.take(), convert: converterFor(src), now, batch, fresh },
                cursors.slot(key, batch),
              );
      } catch (err) {
        report.errors.push({ where: src.path, message: (err as Error).message });
        continue;
      }
      recordOutcome(report, src, outcome);
    }
    // The counter goes in the cursor file's head, moved with the cursors once what they count is durable.
    if (isNew || counter.peek() !== firstSeq || !loadSessionState(o.root, s.id, cursors.counter)) {
      cursors.setCounter({ nextSeq: counter.peek(), lastScan: at }, batch);
    }
    return { id: s.id, lock, counter, firstSeq, listed, at, fresh, isNew, cursors };
  } catch (err) {
    report.errors.push({ where: join(o.root, s.id), message: (err as Error).message });
    lock.release();
    return undefined;
  }
}

/**
 * After the batch that landed them is durable: each held session's pruned sources and its index,
 * written through a second batch (its counter moved with its cursors, in the first), then its lock
 * released. When the first batch failed (`landed` false), the sessions are only released: the next
 * pass lands what this one did not.
 */
export function finishSessions(held: HeldSession[], o: LocalCollectOptions, report: PassReport, state: SyncBatch): void {
  for (const h of held) {
    try {
      if (h.isNew) {
        // Every cursor and landed file in it is this pass's: none to prune, the index is what landed.
        indexNewSession(o.root, h.id, h.fresh, state);
      } else {
        markPruned(o.sourceRoot, h.cursors, h.listed, report, state);
        // The index follows what landed; after a crash it catches up with every file above indexed_seq.
        if ((readIndexState(o.root, h.id)?.indexedSeq ?? 0) < h.counter.peek() - 1) {
          const { problems } = extendIndex(o.root, h.id, h.fresh, state);
          for (const p of problems) report.errors.push({ where: join(o.root, h.id, 'index'), message: p });
        }
      }
    } catch (err) {
      report.errors.push({ where: join(o.root, h.id), message: (err as Error).message });
    }
  }
}

export function releaseAll(held: HeldSession[]): void {
  for (const h of held.splice(0)) h.lock.release();
}

export function batchFailed(held: HeldSession[], o: LocalCollectOptions, report: PassReport, err: unknown): void {
  for (const h of held) report.errors.push({ where: join(o.root, h.id), message: `landing not made durable: ${(err as Error).message}` });
}

/** Collects one session on this thread, its syncs one after another. */
export function collectSession(s: DiscoveredSession, o: LocalCollectOptions, report: PassReport): void {
  const batch = new SyncBatch();
  const h = beginSession(s, o, report, batch);
  if (!h) {
    batch.abort();
    return;
  }
  const held = [h];
  try {
    batch.commitSync(o.afterLand);
    finishSessions(held, o, report, batch);
    batch.commitSync();
  } catch (err) {
    batch.abort();
    batchFailed(held, o, report, err);
  } finally {
    releaseAll(held);
  }
}

function recordOutcome(report: PassReport, src: SourceFile, outcome: SourceOutcome): void {
  switch (outcome.status) {
    case 'landed':
      report.landedFiles += outcome.files;
      report.landedRecords += outcome.records;
      report.landedBytes += outcome.bytes;
      if (outcome.pending) report.pending++;
      break;
    case 'source_gone':
      report.sourceGone++;
      break;
    case 'conflict':
      report.conflicts++;
      if (!outcome.known) report.newConflicts.push({ source: src.rel, reason: outcome.reason });
      break;
    case 'unchanged':
    case 'waiting':
      break; // nothing landed and nothing to report
  }
}
export function emptyReport(): PassReport {
  return {
    sessions: 0,
    sources: 0,
    landedFiles: 0,
    landedRecords: 0,
    landedBytes: 0,
    busy: 0,
    pending: 0,
    conflicts: 0,
    newConflicts: [],
    sourceGone: 0,
    filteredOut: 0,
    errors: [],
    durationMs: 0,
  };
}

/** Adds one session's counts into a pass report. */
export function mergeReport(into: PassReport, from: PassReport): void {
  for (const k of ['sessions', 'sources', 'landedFiles', 'landedRecords', 'landedBytes', 'busy', 'pending', 'conflicts', 'sourceGone'] as const)
    into[k] += from[k];
  if (from.phases) {
    into.phases ??= { discoverMs: 0, judgeMs: 0, collectMs: 0, finishMs: 0, buildMs: 0, stallMs: 0 };
    into.phases.buildMs += from.phases.buildMs;
    into.phases.stallMs += from.phases.stallMs;
  }
  into.newConflicts.push(...from.newConflicts);
  into.errors.push(...from.errors);
  for (const n of from.notes ?? []) if (!into.notes?.includes(n)) (into.notes ??= []).push(n);
}
