/**
 * Where a usage report reads the usage of each call's record: from the session's index when it
 * holds it (kept as the record landed, so no landed file is read), else from the landed file itself
 * — an index written before usage was kept, or one deleted. Each miss falls back on its own.
 */
import { join } from 'node:path';
import type { Usage } from '../../formats/session-data/types.js';
import { readUsageFigures } from '../../storage/index-figures.js';
import type { IndexEntry, SessionIndex } from '../../storage/index.js';
import { LandedRows } from '../../storage/landed-rows.js';
import { projectOfLanded, projectOfSource, sourceInHeader } from '../../storage/session-project.js';

/** What a report counts of one landed record. */
export interface UsageRow {
  usage: Usage;
  model?: string;
  /** Milliseconds since the epoch. */
  time?: number;
}

export interface UsageRows {
  /** The usage landed record `row` of file `seq` states; undefined when it states none or cannot be read. */
  usageAt(seq: number, row: number): UsageRow | undefined;
  /** The project the session ran in, as the runtime filed it: the first directory of its first transcript's source path. */
  project(): string | undefined;
  /** Drops what was read, so a report over many sessions holds one session's files at a time. */
  release(): void;
}

const ms = (iso: string | undefined) => {
  const t = iso ? Date.parse(iso) : NaN;
  return Number.isNaN(t) ? undefined : t;
};

/** Usage read from the landed files: each file a usage row is in is read once. */
export function landedUsageRows(root: string, session: string): UsageRows {
  const rows = new LandedRows(root, session);
  return {
    usageAt(seq, row) {
      const rec = rows.record(seq, row);
      if (!rec) return undefined;
      const out: UsageRow = { usage: rec.usage ?? {} };
      if (rec.model) out.model = rec.model;
      const time = ms(rec.time);
      if (time !== undefined) out.time = time;
      return out;
    },
    project: () => projectOfLanded(rows.landed),
    release: () => rows.release(),
  };
}

/**
 * Usage read from the session's index, each record the index holds no usage for (or does not
 * reach) read from its landed file instead; the project from the first indexed transcript's header
 * line alone.
 */
export function indexedUsageRows(root: string, session: string, index: SessionIndex): UsageRows {
  let landed: UsageRows | undefined;
  const fallback = () => (landed ??= landedUsageRows(root, session));
  // Where each file's entries start: entries are in landed order, a file's rows numbered from 1.
  const startOf = new Map<number, number>();
  index.entries.forEach((e, i) => {
    if (!startOf.has(e.seq)) startOf.set(e.seq, i);
  });
  const entryAt = (seq: number, row: number): IndexEntry | undefined => {
    const start = startOf.get(seq);
    const e = start === undefined ? undefined : index.entries[start + row - 1];
    return e && e.seq === seq && e.row === row ? e : undefined;
  };
  return {
    usageAt(seq, row) {
      const e = entryAt(seq, row);
      const figures = e?.fileKind === 'transcript' ? e.figures : undefined;
      const kept = figures ? readUsageFigures(figures) : undefined;
      if (!kept) return fallback().usageAt(seq, row);
      const out: UsageRow = kept;
      if (e!.time !== undefined) out.time = e!.time;
      return out;
    },
    project() {
      for (const f of index.files) {
        if (f.kind !== 'transcript') continue;
        const project = projectOfSource(f.src ?? sourceInHeader(join(root, f.rel)));
        if (project) return project;
      }
      return fallback().project();
    },
    release: () => landed?.release(),
  };
}
