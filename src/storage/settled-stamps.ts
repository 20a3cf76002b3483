/**
 * `_conversations/settled.stamps`: the conversations `aszcol parse` found settled (the chain covers
 * every landed file), each with what the parse printed for it and the modification time of every
 * directory a change to its evidence or its chain would touch. A later parse stats those
 * directories and, when none moved, answers from here without listing or reading anything of
 * the session. A cache only: unsynced, rebuilt by the next parse when missing or unreadable.
 *
 * Why a directory's time is enough: landing a file, replacing a cursor, the index or the chain's
 * state, adding a round, a stream or a run all create or rename an entry in one of the watched
 * directories, which sets that directory's time to the kernel's clock at that moment. A time is
 * only trusted when it lies further in the past than the filesystem's clock grain at the moment
 * it was read (measured on a probe file there), so a change in the same clock tick as the read
 * cannot keep the old time.
 */
import { closeSync, fstatSync, openSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { join, relative } from 'node:path';
import { CONVERSATIONS, roundsDir } from './chain.js';
import { INDEX_DIR, stampsPath, type SettledStamps } from './settled-stamps-read.js';
import { replaceAtomically } from './write-once.js';

// The reading side is its own module, so a parse with nothing new loads only that (parse-quick.ts).
export { loadSettledStamps, stampHolds, type SettledStamp, type SettledStamps } from './settled-stamps-read.js';

/** A filesystem with sub-second times stamps at the kernel's tick (a few ms); 100 ms covers it with room. Others (FAT: 2 s) get the coarse grain. */
const FINE_GRAIN_MS = 100;
const COARSE_GRAIN_MS = 2500;

function listed(dir: string): string[] {
  try {
    return readdirSync(dir).sort();
  } catch {
    return [];
  }
}

/**
 * Every directory whose change could unsettle the conversation, relative to the session directory:
 * the session directory itself (a new `otlp/`, `runs/` or `provider_body/`), each landed area and
 * its streams and runs (a landed file), the index (one removed or rebuilt by hand is looked at
 * again, and it is what a parse answered from the landing epoch still checks: settled-stamps-read.ts),
 * and the chain's rounds (a round another parser wrote). The chain's own state follows from those.
 */
export function watchedDirs(root: string, session: string): string[] {
  const top = listed(join(root, session));
  const dirs = [''];
  for (const area of ['streams', 'runs'] as const) {
    if (!top.includes(area)) continue;
    dirs.push(area);
    for (const name of listed(join(root, session, area))) dirs.push(`${area}/${name}`);
  }
  for (const extra of ['otlp', 'provider_body', INDEX_DIR]) if (top.includes(extra)) dirs.push(extra);
  dirs.push(relative(join(root, session), roundsDir(root, session)));
  return dirs;
}

/** Each directory's modification time, or undefined when one of them cannot be stat'ed. */
export function dirTimes(root: string, session: string, dirs: string[]): [string, number][] | undefined {
  const out: [string, number][] = [];
  for (const d of dirs) {
    const st = statSync(join(root, session, d), { throwIfNoEntry: false });
    if (!st?.isDirectory()) return undefined;
    out.push([d, st.mtimeMs]);
  }
  return out;
}

/**
 * The filesystem's own clock now, minus its grain: a directory time below this cannot be the time
 * of a change still to come. Read from a probe file written and removed under `_conversations`, so
 * the figure is the clock of the filesystem that stamps the directories (a network one included).
 */
export function trustedBefore(root: string): number {
  const probe = join(root, CONVERSATIONS, `.tmp-settled-probe-${process.pid}`);
  const fd = openSync(probe, 'w');
  let ms: number;
  try {
    ms = fstatSync(fd).mtimeMs;
  } finally {
    closeSync(fd);
    unlinkSync(probe);
  }
  return ms - (ms % 1000 !== 0 ? FINE_GRAIN_MS : COARSE_GRAIN_MS);
}

/** Unsynced: stamps lost in a crash only cost the next parse its full look at each session. */
export function saveSettledStamps(root: string, stamps: SettledStamps): void {
  replaceAtomically(stampsPath(root), JSON.stringify(stamps) + '\n', { sync: false });
}
