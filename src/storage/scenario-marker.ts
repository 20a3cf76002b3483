/**
 * The marker a `claude-code` scenario build leaves for each session it writes:
 * `DIR/_source/.asz-scenario/<session>.json`, written after every other file of the session. It
 * names when a pipeline may remove the session once all of it is sent (`policy`) and lists each
 * file the build wrote with its size and SHA-256, so a removal deletes only what the build wrote,
 * unchanged. A session with no marker (every real Claude Code session) is never removed.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { replaceAtomically } from './write-once.js';
import { AszError } from '../util/errors.js';

export const MARKER_SCHEMA = 'asz.scenario-marker/1';
/** The build's claim on a storage root: removal works only over a root holding this directory. */
export const SCENARIO_DIR = '_scenario';
export const SOURCE_DIR = '_source';
export const MARKER_DIR = '.asz-scenario';

/** `immediately`, or milliseconds after the session's last record. */
export type RemovalPolicy = 'immediately' | { afterMs: number };

export interface MarkedFile {
  /** Relative to `DIR/_source`, forward slashes. */
  path: string;
  size: number;
  sha256: string;
}

/** Lines the build appended to a file other sessions share (the runtime's body dump index): a removal takes out these lines only. */
export interface SharedLines {
  /** Relative to `DIR/_source`, forward slashes. */
  path: string;
  lines: string[];
}

export interface ScenarioMarker {
  schema: typeof MARKER_SCHEMA;
  session: string;
  policy: RemovalPolicy;
  /** The time of the session's last record, RFC 3339: a duration counts from here, never from landing. */
  last_record: string;
  files: MarkedFile[];
  shared_lines?: SharedLines[];
}

export class MarkerError extends AszError {}

export const markerDir = (root: string) => join(root, SOURCE_DIR, MARKER_DIR);
export const markerPath = (root: string, session: string) => join(markerDir(root), `${session}.json`);

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** Writes the marker for `files` (relative to `DIR/_source`, already on disk) and makes the root a scenario root. */
export function writeMarker(
  root: string,
  session: string,
  policy: RemovalPolicy,
  lastRecordMs: number,
  files: Iterable<string>,
  shared: SharedLines[] = [],
): ScenarioMarker {
  const marked: MarkedFile[] = [];
  for (const path of [...files].sort()) {
    const bytes = readFileSync(join(root, SOURCE_DIR, path));
    marked.push({ path, size: bytes.length, sha256: sha256(bytes) });
  }
  const marker: ScenarioMarker = { schema: MARKER_SCHEMA, session, policy, last_record: new Date(lastRecordMs).toISOString(), files: marked };
  if (shared.some((s) => s.lines.length)) marker.shared_lines = shared.filter((s) => s.lines.length);
  mkdirSync(join(root, SCENARIO_DIR), { recursive: true });
  mkdirSync(markerDir(root), { recursive: true });
  replaceAtomically(markerPath(root, session), JSON.stringify(marker, null, 1) + '\n');
  return marker;
}

/** One marker, checked field by field; a marker that does not read is an error naming its path. */
export function readMarker(path: string): ScenarioMarker {
  let m: Partial<ScenarioMarker>;
  try {
    m = JSON.parse(readFileSync(path, 'utf8')) as Partial<ScenarioMarker>;
  } catch (err) {
    throw new MarkerError(`not a scenario marker: ${(err as Error).message}`, path);
  }
  const policyOk = m.policy === 'immediately' || (typeof m.policy === 'object' && m.policy !== null && Number.isFinite(m.policy.afterMs));
  if (m.schema !== MARKER_SCHEMA || typeof m.session !== 'string' || !policyOk || typeof m.last_record !== 'string' || !Array.isArray(m.files))
    throw new MarkerError(`not a ${MARKER_SCHEMA} marker (schema, session, policy, last_record, files)`, path);
  if (m.shared_lines !== undefined && !(Array.isArray(m.shared_lines) && m.shared_lines.every((s) => typeof s?.path === 'string' && Array.isArray(s.lines))))
    throw new MarkerError('shared_lines is a list of {path, lines}', path);
  return m as ScenarioMarker;
}

/** The sessions marked under a scenario root, by id; none when the root is not one. */
export function markedSessions(root: string): string[] {
  if (!existsSync(join(root, SCENARIO_DIR)) || !existsSync(markerDir(root))) return [];
  return readdirSync(markerDir(root))
    .filter((n) => n.endsWith('.json'))
    .map((n) => n.slice(0, -'.json'.length))
    .sort();
}

/** Why a file the marker lists is no longer what the build wrote; undefined when it is. */
export function markedFileProblem(root: string, f: MarkedFile): string | undefined {
  const p = join(root, SOURCE_DIR, f.path);
  if (!existsSync(p)) return `${f.path}, which the build wrote, is missing`;
  if (statSync(p).size !== f.size) return `${f.path}, which the build wrote, has changed size`;
  if (sha256(readFileSync(p)) !== f.sha256) return `${f.path}, which the build wrote, has changed`;
  return undefined;
}

/** `immediately`, or a duration such as `30m`, `24h` or `7d`, as `--remove` takes it. */
export function parseRemovalPolicy(v: string, parse: (d: string) => number): RemovalPolicy {
  if (v === 'immediately') return v;
  const days = /^(\d+)d$/.exec(v);
  let ms: number;
  try {
    ms = days ? Number(days[1]) * 86_400_000 : parse(v);
  } catch {
    ms = NaN;
  }
  if (!(ms > 0)) throw new MarkerError(`--remove is immediately or a positive duration such as 24h or 7d, got "${v}"`);
  return { afterMs: ms };
}
