import type { IndexEntry } from '../storage/index.js';

/**
 * Stage 1. The first copy of a record id in landed order wins (lower sequence, then lower row),
 * and nothing is taken from a later copy: it is the worse one (rewritten cycle, blanked output).
 * A record with no id is never a copy. Copies stay in the index as evidence and leave every lookup.
 */
export function removeDuplicates(entries: IndexEntry[]): { live: IndexEntry[]; byId: Map<string, IndexEntry>; duplicates: number } {
  const byId = new Map<string, IndexEntry>();
  const live: IndexEntry[] = [];
  let duplicates = 0;
  for (const e of entries) {
    if (e.id !== undefined) {
      if (byId.has(e.id)) {
        duplicates++;
        continue;
      }
      byId.set(e.id, e);
    }
    live.push(e);
  }
  return { live, byId, duplicates };
}
