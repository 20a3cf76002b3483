/**
 * A long-running collector's memory of the sessions it last found quiet, by the stat of each of
 * their sources (size, mtime, inode). While every source stats the same, a session is still quiet
 * and is not judged again: a whole pass over a history costs a stat per source, not the reads of
 * cursors, indexes and directories per session. Any change of a source's stat, and every
 * `REFRESH_PASSES`-th pass, sends a session back to the full judgement; nothing is landed on the
 * memo's word, it only passes over what has nothing new.
 */
import { statSync } from 'node:fs';
import type { DiscoveredSession } from '../../adapters/claude-code/discovery.js';

/** Every this many passes the memo is dropped and every session judged in full again. */
const REFRESH_PASSES = 60;

/** The sources' stats, one string; undefined when one cannot be read (the full path says why). */
function signature(s: DiscoveredSession): string | undefined {
  let sig = '';
  for (const src of s.sources) {
    try {
      const st = statSync(src.path, { bigint: true });
      sig += `${src.path}\0${st.size}\0${st.mtimeNs}\0${st.ino}\n`;
    } catch {
      return undefined;
    }
  }
  return sig;
}

export class QuietMemo {
  private readonly quiet = new Map<string, string>();
  private passes = 0;

  /**
   * Splits a pass's sessions: those whose sources stat as when they were last found quiet, and the
   * rest with the signature taken now (kept once they are judged quiet).
   */
  split(sessions: DiscoveredSession[]): { unchanged: DiscoveredSession[]; judge: { session: DiscoveredSession; sig: string | undefined }[] } {
    if (++this.passes % REFRESH_PASSES === 0) this.quiet.clear();
    const unchanged: DiscoveredSession[] = [];
    const judge: { session: DiscoveredSession; sig: string | undefined }[] = [];
    for (const s of sessions) {
      const sig = signature(s);
      if (sig !== undefined && this.quiet.get(s.id) === sig) unchanged.push(s);
      else {
        this.quiet.delete(s.id);
        judge.push({ session: s, sig });
      }
    }
    return { unchanged, judge };
  }

  /** A session judged quiet in full, with the signature taken before that judgement. */
  keep(session: string, sig: string | undefined): void {
    if (sig !== undefined) this.quiet.set(session, sig);
  }

  /** A session that had work: judged in full next time. */
  forget(session: string): void {
    this.quiet.delete(session);
  }
}
