import { existsSync, statSync, readdirSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { discover, type DiscoveredSession, type DiscoveryResult, type SessionFilter, type SourceFile } from '../../adapters/claude-code/discovery.js';
import { SessionPool } from './session-pool.js';
import { ADAPTER, DIALECT, convertJournalLine, convertManifest, convertScript, convertSidecar, convertTranscriptLine } from '../../adapters/claude-code/dialect.js';
import { collectAppendSource, type SourceOutcome } from '../../storage/append-source.js';
import { collectSnapshotSource } from '../../storage/snapshot-source.js';
import { loadCursor, saveCursor } from '../../storage/cursor.js';
import { FileLock } from '../../storage/lock.js';
import { readIndexState, updateIndex } from '../../storage/index.js';
import { isSessionEntryName, landedDirs, listDir, sessionLockPath } from '../../storage/layout.js';
import { SequenceCounter, saveSessionState, loadSessionState } from '../../storage/session-state.js';
import type { LandingTarget } from '../../storage/landing.js';
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
}

function target(root: string, s: SourceFile, stamp: string, at: string, adapter = ADAPTER): LandingTarget {
  const header: LandingTarget['header'] = { kind: s.kind, adapter, dialect: DIALECT, src: s.rel, session: s.session };
  if (s.area === 'streams') header.stream = s.stream;
  if (s.batch) header.batch = s.batch;
  return { dir: join(root, s.session, s.area, s.areaName), prefix: s.prefix, stamp, at, header };
}

function converterFor(s: SourceFile): (b: Buffer) => ReturnType<typeof convertTranscriptLine> {
  switch (s.kind) {
    case 'transcript': return convertTranscriptLine;
    case 'journal': return (b) => convertJournalLine(b, s.batch!);
    case 'agent_meta': return (b) => convertSidecar(b, s.stream!);
    case 'workflow_manifest': return (b) => convertManifest(b, s.batch!);
    case 'workflow_script': return (b) => convertScript(b, s.batch!, s.label);
    default: throw new Error(`no converter for ${s.kind}`);
  }
}

/** Removes temporary files a crashed writer left; safe only under the session's lock. */
function sweepTemporaries(root: string, session: string): void {
  for (const { dir } of landedDirs(root, session)) {
    for (const name of listDir(dir)) if (name.startsWith('.tmp-')) try { unlinkSync(join(dir, name)); } catch { /* ignore */ }
  }
}

/**
 * The cursors of a session whose files discovery no longer lists: each `active` one whose file
 * is gone becomes `source_gone`. A permission error is not a missing file, so it leaves the cursor.
 */
function markPruned(root: string, sourceRoot: string, session: string, listed: Set<string>, report: PassReport): void {
  // The OTLP receiver's cursors name no source file of this adapter's: they are left alone.
  for (const { dir, otlp } of landedDirs(root, session)) {
    if (otlp) continue;
    for (const name of listDir(dir)) {
      if (!name.endsWith('.cursor')) continue;
      const path = join(dir, name);
      const c = loadCursor(path);
      if (!c || c.state !== 'active' || listed.has(c.source)) continue;
      try {
        statSync(join(sourceRoot, c.source));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
          saveCursor(path, { ...c, state: 'source_gone', updated_at: rfc3339(nowNs()) });
          report.sourceGone++;
        }
      }
    }
  }
}

function countConflicts(root: string, session: string): number {
  let n = 0;
  for (const { dir } of landedDirs(root, session)) {
    for (const name of listDir(dir)) if (name.endsWith('.cursor') && loadCursor(join(dir, name))?.state === 'conflict') n++;
  }
  return n;
}

export function collectSession(s: DiscoveredSession, o: LocalCollectOptions, report: PassReport): void {
  report.sessions++;
  const lock = new FileLock(sessionLockPath(o.root, s.id));
  if (!lock.tryAcquire()) {
    report.busy++;
    return;
  }
  try {
    sweepTemporaries(o.root, s.id);
    const counter = new SequenceCounter(o.root, s.id);
    const firstSeq = counter.peek();
    const passNs = (o.clock ?? nowNs)();
    const stamp = compactStamp(passNs);
    const at = rfc3339(passNs);
    const now = () => rfc3339((o.clock ?? nowNs)());
    const claimed = new Map<string, string>();
    const listed = new Set<string>();
    // Main transcript first, then children, runs: the order files land in within a pass.
    const order = (x: SourceFile) => (x.area === 'streams' && x.stream === 'main' ? 0 : x.area === 'streams' ? 1 : 2);
    const sources = [...s.sources].sort((a, b) => order(a) - order(b) || (a.rel < b.rel ? -1 : a.rel > b.rel ? 1 : 0));
    for (const src of sources) {
      report.sources++;
      listed.add(src.rel);
      const t = target(o.root, src, stamp, at, o.adapter);
      const key = `${src.area}/${src.areaName}/${src.prefix}`;
      const owner = claimed.get(key);
      if (owner !== undefined) {
        // Two source files would share one stream or run directory: refuse the second rather than mix them behind one cursor.
        recordOutcome(report, src, { status: 'conflict', reason: `${src.rel} and ${owner} would both land in ${key}`, known: false });
        continue;
      }
      claimed.set(key, src.rel);
      const cursorPath = join(t.dir, `${src.prefix}.cursor`);
      let outcome: SourceOutcome;
      try {
        outcome = src.reading === 'append'
          ? collectAppendSource({ path: src.path, rel: src.rel, target: t, maxDeltaBytes: o.maxDeltaBytes, maxWindows: o.maxWindows, nextSeq: () => counter.take(), convert: converterFor(src), now, afterLand: o.afterLand }, cursorPath)
          : collectSnapshotSource({ path: src.path, rel: src.rel, target: t, nextSeq: () => counter.take(), convert: converterFor(src), now }, cursorPath);
      } catch (err) {
        report.errors.push({ where: src.path, message: (err as Error).message });
        continue;
      }
      recordOutcome(report, src, outcome);
    }
    markPruned(o.root, o.sourceRoot, s.id, listed, report);
    // The index follows what landed; after a crash it catches up with every file above indexed_seq.
    if ((readIndexState(o.root, s.id)?.indexedSeq ?? 0) < counter.peek() - 1) {
      const { problems } = updateIndex(o.root, s.id);
      for (const p of problems) report.errors.push({ where: join(o.root, s.id, 'index'), message: p });
    }
    if (counter.peek() !== firstSeq || !loadSessionState(o.root, s.id)) {
      saveSessionState(o.root, s.id, { next_seq: counter.peek(), liveness: 'unknown', last_scan: at });
    }
  } catch (err) {
    report.errors.push({ where: join(o.root, s.id), message: (err as Error).message });
  } finally {
    lock.release();
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
  }
}
export function emptyReport(): PassReport {
  return {
    sessions: 0, sources: 0, landedFiles: 0, landedRecords: 0, landedBytes: 0, busy: 0, pending: 0, conflicts: 0,
    newConflicts: [], sourceGone: 0, filteredOut: 0, errors: [], durationMs: 0,
  };
}

/** Adds one session's counts into a pass report. */
export function mergeReport(into: PassReport, from: PassReport): void {
  for (const k of ['sessions', 'sources', 'landedFiles', 'landedRecords', 'landedBytes', 'busy', 'pending', 'conflicts', 'sourceGone'] as const) into[k] += from[k];
  into.newConflicts.push(...from.newConflicts);
  into.errors.push(...from.errors);
}

export class LocalCollector {
  /** Sessions no longer discovered that were already checked for pruned sources (checked again once rediscovered). */
  private readonly checkedUndiscovered = new Set<string>();
  private pool: SessionPool | undefined;

  constructor(readonly opts: LocalCollectOptions & { workers?: number }) {}

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
    if (found.sessions.length < 2) {
      for (const s of found.sessions) collectSession(s, this.opts, report);
      return this.finish(report, found, started);
    }
    this.pool ??= new SessionPool(workers);
    const { afterLand: _hook, ...plain } = this.opts;
    const done = await this.pool.run(found.sessions, plain);
    for (const r of done) mergeReport(report, r);
    return this.finish(report, found, started);
  }

  /** Stops the worker threads; a later pass starts them again. */
  async close(): Promise<void> {
    await this.pool?.close();
    this.pool = undefined;
  }

  private begin(): { report: PassReport; found: DiscoveryResult } {
    const report = emptyReport();
    const found = discover(this.opts.sourceRoot, this.opts.filter);
    for (const e of found.errors) report.errors.push({ where: e.path, message: `cannot read project directory: ${e.message}` });
    report.filteredOut = found.filteredOut.length;
    return { report, found };
  }

  private finish(report: PassReport, found: DiscoveryResult, started: number): PassReport {
    const o = this.opts;
    const discovered = new Set<string>([...found.sessions.map((s) => s.id), ...found.filteredOut]);
    for (const id of discovered) this.checkedUndiscovered.delete(id);
    // Sessions with landed data that discovery no longer finds: their sources were pruned.
    // Skipped when a project directory could not be read, since that hides files the way pruning does.
    if (found.errors.length === 0) {
      for (const id of listDir(o.root)) {
        if (!isSessionEntryName(id) || discovered.has(id) || this.checkedUndiscovered.has(id)) continue;
        if (!existsSync(join(o.root, id, 'streams')) && !existsSync(join(o.root, id, 'runs'))) continue;
        const lock = new FileLock(sessionLockPath(o.root, id));
        if (!lock.tryAcquire()) { report.busy++; continue; }
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
    report.durationMs = Date.now() - started;
    return report;
  }
}

/** Reads every session id in a storage root (for commands that list what landed). */
export function landedSessions(root: string): string[] {
  try {
    return readdirSync(root, { withFileTypes: true }).filter((e) => e.isDirectory() && isSessionEntryName(e.name)).map((e) => e.name).sort();
  } catch {
    return [];
  }
}
