/**
 * Reading `_conversations/settled.stamps` (written by settled-stamps.ts): the stamps a parse left and
 * whether one still holds. Apart from the writing side so that a parse with nothing new, which only
 * reads them, loads nothing else (no hashing, no chain decoding).
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT_NAMES } from './entry-names.js';
import type { ConversationSummary } from './parse-summary.js';

/** What a settled conversation's parse reports, and its watched directories with their times when it was found settled. */
export interface SettledStamp {
  head: number;
  head_digest: string;
  through_seq: number;
  summary: ConversationSummary;
  /** Relative to the session directory (`''` is the directory itself), each with its time in ms. */
  dirs: [string, number][];
}

export interface SettledStamps {
  /** The parser and policy that found them settled: another version parses again. */
  parser: string;
  policy: string;
  sessions: Record<string, SettledStamp>;
  /**
   * The root's landing epoch and boot when the parse that wrote these found every session settled
   * with no writer landing from its start to its end (landing-epoch.ts): while they are unchanged
   * and no writer is landing, every stamp holds without a look at its session.
   */
  landed?: { epoch: string; boot: string };
}

export const stampsPath = (root: string) => join(root, ROOT_NAMES.conversations, 'settled.stamps');

/** Whether every directory of a stamp still has the time it had when the stamp was made. */
export function stampHolds(root: string, session: string, stamp: SettledStamp): boolean {
  if (!Array.isArray(stamp.dirs) || stamp.dirs.length === 0) return false;
  const base = join(root, session);
  for (const [d, ms] of stamp.dirs) {
    const st = statSync(d ? `${base}/${d}` : base, { throwIfNoEntry: false });
    if (st?.mtimeMs !== ms) return false;
  }
  return true;
}

/** The session's index directory as the stamps name it (index.ts's `indexDir`, not imported: this side loads nothing else). */
export const INDEX_DIR = 'index';

/**
 * The one look a parse answered from the landing epoch still takes per session: the index
 * directory's time, so an index removed or rebuilt by hand is parsed again though no writer landed.
 * A stamp without the index (a session with none) checks the session directory itself instead.
 */
export function indexHolds(root: string, session: string, stamp: SettledStamp): boolean {
  if (!Array.isArray(stamp.dirs)) return false;
  const watched = stamp.dirs.find(([d]) => d === INDEX_DIR) ?? stamp.dirs.find(([d]) => d === '');
  if (!watched) return false;
  const [d, ms] = watched;
  return statSync(d ? `${root}/${session}/${d}` : `${root}/${session}`, { throwIfNoEntry: false })?.mtimeMs === ms;
}

/** The stamps a parse left, when they were made by this parser and policy; undefined otherwise or when the file does not read. */
export function loadSettledStamps(root: string, parser: string, policy: string): SettledStamps | undefined {
  try {
    const o = JSON.parse(readFileSync(stampsPath(root), 'utf8')) as Partial<SettledStamps>;
    if (o.parser !== parser || o.policy !== policy || typeof o.sessions !== 'object' || o.sessions === null) return undefined;
    return o as SettledStamps;
  } catch {
    return undefined;
  }
}
