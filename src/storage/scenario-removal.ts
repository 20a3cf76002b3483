/**
 * Removing a scenario session once all of it is sent. Only over a root a `claude-code` scenario
 * build wrote (it holds `_scenario/` and the build's markers, scenario-marker.ts), only a marked
 * session, and only what a pipeline can prove sent: every landed file and every round of it
 * recorded in push.state for the receiver this pipeline sends to, none rejected, every file the
 * build wrote unchanged, and the policy's time reached. A real session has no marker and is never
 * touched.
 *
 * The order keeps every crash point safe: the build's source files first (its transcripts and its
 * raw API bodies, and its lines of the body dump's shared index, so nothing lands again), then the
 * landed files and the session's state, then the chain and the plugin's observations, then
 * push.state's lines for them (only once they are gone, as push-state.ts asks), and the marker
 * last, so a pass that stops midway finds the marker and finishes the job. Derived metrics are
 * left to spool retention, which alone knows every consumer of the spool.
 */
import { existsSync, readFileSync, readdirSync, rmSync, rmdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { chainDir, listRounds } from './chain.js';
import { listLanded } from './landed-files.js';
import { listDir, sessionDir } from './layout.js';
import { DERIVED_NAME, METRICS_DIR, metricsStateDir } from './metrics-spool.js';
import { markedFileProblem, markedSessions, markerPath, readMarker, SOURCE_DIR } from './scenario-marker.js';
import type { PushState } from './push-state.js';
import { spoolDir, spoolName } from './hook-spool.js';
import { replaceAtomically } from './write-once.js';

export interface RemovalOptions {
  root: string;
  /** The push.state the pipeline's exporter records into. */
  state: PushState;
  /** The receiver this pipeline sends to, as push.state names it. */
  endpoint: string;
  nowMs: number;
  /**
   * The pipeline derives and sends the session's metrics too: wait until every landed transcript
   * file is derived (`<session>/metrics/derive.state`) and every derived spool file of it is sent.
   */
  waitForMetrics: boolean;
}

export interface RemovalReport {
  removed: string[];
  /** A session that needs a person, with why; a session only not sent yet or not old enough is not listed. */
  kept: { session: string; reason: string }[];
  /** Why every marked session was kept this pass, when something about the root forbids any removal. */
  held?: string;
}

const rel = (root: string, p: string) => relative(root, p).split('\\').join('/');

/** Removes empty directories from `dir` up to, not including, `stop`. */
function pruneEmptyDirs(dir: string, stop: string): void {
  for (let d = dir; d.startsWith(stop + '/') && existsSync(d) && readdirSync(d).length === 0; d = dirname(d)) rmdirSync(d);
}

/** What of a session push.state does not hold as sent to `endpoint`, or a reason it must be kept. */
function sentState(o: RemovalOptions, session: string): { unsent: number; rejected?: string; files: string[] } {
  const files = [...listLanded(o.root, session).map((l) => l.rel), ...listRounds(o.root, session).map((r) => rel(o.root, r.path))];
  const sent = o.state.sent(o.endpoint);
  const rejected = o.state.rejected(o.endpoint);
  const refused = files.find((f) => rejected.has(f));
  return {
    files,
    unsent: files.filter((f) => !sent.has(f)).length,
    rejected: refused && `the receiver rejected records of ${refused}: ${rejected.get(refused)}`,
  };
}

/** The landed sequences token_metrics has derived, from its `derive.state` (`1-4,7`); none when it has not run. */
function derivedSequences(root: string, session: string): Set<number> {
  const out = new Set<number>();
  let text: string;
  try {
    text = readFileSync(join(metricsStateDir(root, session), 'derive.state'), 'utf8');
  } catch {
    return out;
  }
  const ranges = (JSON.parse(text) as { derived?: unknown }).derived;
  for (const part of String(ranges ?? '').split(',')) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part);
    if (m) for (let n = Number(m[1]); n <= Number(m[2] ?? m[1]); n++) out.add(n);
  }
  return out;
}

/** Whether the session's metrics are all derived and sent; a derivation still waiting for a call's end keeps it. */
function metricsSent(o: RemovalOptions, session: string): boolean {
  const derived = derivedSequences(o.root, session);
  if (listLanded(o.root, session).some((l) => l.prefix === 'transcript' && !derived.has(l.seq))) return false;
  const sent = o.state.sent(o.endpoint);
  return listDir(join(o.root, METRICS_DIR))
    .filter((n) => DERIVED_NAME.exec(n)?.[3] === session)
    .every((n) => sent.has(`${METRICS_DIR}/${n}`));
}

/** Takes exactly these lines out of a file others share, atomically; the file goes when nothing is left in it. */
function removeLines(path: string, lines: readonly string[]): void {
  if (!existsSync(path)) return;
  const drop = new Set(lines);
  const kept = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => l !== '' && !drop.has(l));
  if (kept.length === 0) rmSync(path, { force: true });
  else replaceAtomically(path, kept.map((l) => l + '\n').join(''));
}

/** One pass of removal over a scenario root; a no-op over any other root. */
export function removeSentScenarioSessions(o: RemovalOptions): RemovalReport {
  const report: RemovalReport = { removed: [], kept: [] };
  const sessions = markedSessions(o.root);
  if (sessions.length === 0) return report;
  const others = o.state.endpoints().filter((e) => e !== o.endpoint);
  if (others.length) {
    report.held = `push.state records files sent to another receiver (${others.join(', ')})`;
    return report;
  }
  for (const session of sessions) {
    let marker;
    try {
      marker = readMarker(markerPath(o.root, session));
    } catch (err) {
      report.kept.push({ session, reason: (err as Error).message });
      continue;
    }
    const changed = marker.files.map((f) => markedFileProblem(o.root, f)).find((p) => p !== undefined);
    if (changed) {
      report.kept.push({ session, reason: changed });
      continue;
    }
    const s = sentState(o, session);
    if (s.rejected) {
      report.kept.push({ session, reason: s.rejected });
      continue;
    }
    // Nothing landed or parsed yet, or something not sent yet: kept without a word, it is only early.
    if (s.files.length === 0 || listRounds(o.root, session).length === 0 || s.unsent > 0) continue;
    if (o.waitForMetrics && !metricsSent(o, session)) continue;
    if (marker.policy !== 'immediately' && o.nowMs < Date.parse(marker.last_record) + marker.policy.afterMs) continue;
    const source = join(o.root, SOURCE_DIR);
    for (const f of marker.files) {
      rmSync(join(source, f.path), { force: true });
      // The directories the build made go when empty; the source root itself (`_source/projects`) stays for the collector.
      pruneEmptyDirs(dirname(join(source, f.path)), join(source, f.path.split('/')[0]!));
    }
    for (const shared of marker.shared_lines ?? []) removeLines(join(source, shared.path), shared.lines);
    rmSync(sessionDir(o.root, session), { recursive: true, force: true });
    rmSync(chainDir(o.root, session), { recursive: true, force: true });
    rmSync(join(spoolDir(o.root), `${spoolName(session)}.jsonl`), { force: true });
    rmSync(join(spoolDir(o.root), `${spoolName(session)}.jsonl.retired`), { force: true });
    // Its derived metrics stay for spool retention, which alone knows every consumer of the spool
    // (a prometheus exporter may not have read them yet); their push.state lines stay with them.
    o.state.forgetFiles(new Set(s.files));
    rmSync(markerPath(o.root, session), { force: true });
    report.removed.push(session);
  }
  return report;
}
