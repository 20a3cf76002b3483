import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SESSION_STATE, isRootOwnName } from './entry-names.js';

/**
 * Where things live under the storage root. Child streams are flat siblings of `main`, and
 * workflow runs flat under `runs/`: a path never encodes a relationship assembly derives.
 */
export const MAIN_STREAM = 'main';

/** Landed file names: `<kind>-<collected-at>-<seq>.sd`, the stamp like 20260831T091204.481523000Z. */
export const LANDED_NAME = /^([a-z_]+)-(\d{8}T\d{6}\.\d{9}Z)-(\d{6,})\.sd$/;

export interface LandedName {
  prefix: string;
  stamp: string;
  seq: number;
}

export function parseLandedName(name: string): LandedName | undefined {
  const m = LANDED_NAME.exec(name);
  return m ? { prefix: m[1]!, stamp: m[2]!, seq: Number(m[3]) } : undefined;
}

export function landedName(prefix: string, stamp: string, seq: number): string {
  return `${prefix}-${stamp}-${String(seq).padStart(6, '0')}.sd`;
}

export const sessionDir = (root: string, session: string) => join(root, session);
export const streamDir = (root: string, session: string, stream: string) => join(root, session, 'streams', stream);
export const runDir = (root: string, session: string, run: string) => join(root, session, 'runs', run);
export const sessionStatePath = (root: string, session: string) => join(root, session, SESSION_STATE);
export const sessionLockPath = (root: string, session: string) => join(root, session, '.lock');

/** Names at the top of the root that are not sessions: everything that starts with `_`, dot files and the root's own files (entry-names.ts). */
export function isSessionEntryName(name: string): boolean {
  return !isRootOwnName(name);
}

export function listDir(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return [];
    throw err;
  }
}

/** Where a push receiver (OTLP) lands a session's records: one flat directory, since they name no stream. */
export const otlpDir = (root: string, session: string) => join(root, session, 'otlp');

/** Where a session's provider request and response bodies land (asz 0.6's `<session>/provider_body/`): they name no stream either. */
export const providerBodyDir = (root: string, session: string) => join(root, session, 'provider_body');

/** Every directory that holds landed files of a session: `streams/<s>/`, `runs/<r>/`, `otlp/` and `provider_body/`. */
export function landedDirs(root: string, session: string): { dir: string; stream?: string; run?: string; otlp?: true; provider?: true }[] {
  const out: { dir: string; stream?: string; run?: string; otlp?: true; provider?: true }[] = [];
  // An area is listed only when the session holds it: a missing directory costs an exception, and most sessions have no `runs/`.
  const top = listDir(join(root, session));
  if (top.includes('streams')) for (const s of listDir(join(root, session, 'streams')).sort()) out.push({ dir: streamDir(root, session, s), stream: s });
  if (top.includes('runs')) for (const r of listDir(join(root, session, 'runs')).sort()) out.push({ dir: runDir(root, session, r), run: r });
  if (top.includes('otlp')) out.push({ dir: otlpDir(root, session), otlp: true });
  if (top.includes('provider_body')) out.push({ dir: providerBodyDir(root, session), provider: true });
  return out;
}

/** The highest sequence of any landed file in a session: the filesystem is the authority on the counter. */
export function highestSeqOnDisk(root: string, session: string): number {
  let max = 0;
  for (const { dir } of landedDirs(root, session)) {
    for (const name of listDir(dir)) {
      const p = parseLandedName(name);
      if (p && p.seq > max) max = p.seq;
    }
  }
  return max;
}
