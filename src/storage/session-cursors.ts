/**
 * The cursors of a session's local sources, kept in one file, `<session>/sources.cursor`: one entry
 * per source, named by where it lands (`streams/main/transcript`, `runs/<run>/journal`). One file
 * instead of one per source means one inode and one fsync per session, not per source, when a
 * session is landed. The file is replaced whole, atomically, at the same point of a batch as the
 * per-source files were: after every landed file it counts is durable.
 *
 * A root written before this layout keeps a cursor file per source beside its landed files
 * (`streams/main/transcript.cursor`). Those are read for as long as they exist; once an entry for
 * the same source is written here, the entry wins and the old file is only history. The plugin's
 * stream cursors (hook-landing.ts) and the OTLP receiver's (`otlp/`) keep their own files.
 *
 * The file's head also carries the session's sequence counter as the local receiver left it
 * (`next_seq`, `last_scan`: what `session.state` holds for the other writers), so a session the local
 * receiver lands makes no `session.state` of its own; session-state.ts reads both.
 */
import { readTextIfPresent } from './read-if-present.js';
import { join, sep } from 'node:path';
import { formatCursor, loadCursor, parseCursor, type Cursor, type CursorSlot } from './cursor.js';
import { formatKv, parseKv } from './kv-text.js';
import { isHookCursorName } from './hook-landing.js';
import { landedDirs, listDir } from './layout.js';
import { replaceAtomically } from './write-once.js';
import type { SyncBatch } from './sync-batch.js';

export const SESSION_CURSORS = 'sources.cursor';
const SCHEMA = 1;
const OLD_SUFFIX = '.cursor';

export const sessionCursorsPath = (root: string, session: string) => join(root, session, SESSION_CURSORS);

/** The session's counter as the file's head carries it; both absent in a file written before the head held them. */
export interface CursorsHead {
  nextSeq?: number;
  lastScan?: string;
}

/** A source's name among its session's cursors: its landing directory under the session, and its file prefix. */
export const cursorKey = (area: string, areaName: string, prefix: string) => `${area}/${areaName}/${prefix}`;

/** Where the old layout kept the cursor of `key`. */
const oldCursorPath = (root: string, session: string, key: string) => join(root, session, `${key}${OLD_SUFFIX}`);

export class SessionCursors {
  private constructor(
    private readonly root: string,
    private readonly session: string,
    private readonly entries: Map<string, Cursor>,
    private head: CursorsHead,
    /** False for a session this process created under its lock: no old-layout file can exist, so none is looked for. */
    private readonly oldLayout: boolean,
  ) {}

  /** A session whose directory held only its lock when taken: no cursor anywhere yet. */
  static fresh(root: string, session: string): SessionCursors {
    return new SessionCursors(root, session, new Map(), {}, false);
  }

  /**
   * The session's cursors as on disk. `present` says whether `sources.cursor` exists when the caller
   * has listed the session's directory anyway (no open is tried when it does not). A file that does
   * not read is an error naming it, never an empty set: that would land every source again.
   */
  static read(root: string, session: string, present?: boolean): SessionCursors {
    const path = sessionCursorsPath(root, session);
    if (present === false) return new SessionCursors(root, session, new Map(), {}, true);
    const text = readTextIfPresent(path);
    if (text === undefined) return new SessionCursors(root, session, new Map(), {}, true);
    return new SessionCursors(root, session, parseSessionCursors(text, path), parseCursorsHead(text, path), true);
  }

  /** The cursor of one source: its entry, else (an older root) its own file. */
  get(key: string): Cursor | undefined {
    return this.entries.get(key) ?? (this.oldLayout ? loadCursor(oldCursorPath(this.root, this.session, key)) : undefined);
  }

  /**
   * Records a source's cursor and writes the whole file: staged in `batch` (replaced when it commits,
   * after the files the batch lands) or, without one, replaced now.
   */
  set(key: string, c: Cursor, batch?: SyncBatch): void {
    this.entries.set(key, c);
    this.write(batch);
  }

  /** The session's counter as this file carries it (nothing for a file from before the head held it). */
  get counter(): CursorsHead {
    return this.head;
  }

  /** Records the session's counter in the head and writes the whole file, staged in `batch` as `set` does. */
  setCounter(head: CursorsHead, batch?: SyncBatch): void {
    this.head = head;
    this.write(batch);
  }

  private write(batch?: SyncBatch): void {
    const text = formatSessionCursors(this.entries, this.head);
    if (batch) batch.stageReplace(sessionCursorsPath(this.root, this.session), text);
    else replaceAtomically(sessionCursorsPath(this.root, this.session), text);
  }

  /** One source's place for `collectAppendSource` / `collectSnapshotSource`. */
  slot(key: string, batch?: SyncBatch): CursorSlot {
    return { where: `${sessionCursorsPath(this.root, this.session)} (${key})`, load: () => this.get(key), save: (c) => this.set(key, c, batch) };
  }

  /**
   * The names of every cursor the session has: its entries and, in an older root, its per-source files
   * (left out with `oldLayout: false`, for a caller that lists the landed directories itself).
   */
  keys(o: { oldLayout?: boolean } = {}): Set<string> {
    const keys = new Set(this.entries.keys());
    if (this.oldLayout && o.oldLayout !== false) for (const key of oldCursorKeys(this.root, this.session)) keys.add(key);
    return keys;
  }

  /** Every cursor of the session with its name; an old file whose source has an entry is passed over. */
  all(): { key: string; cursor: Cursor }[] {
    const out: { key: string; cursor: Cursor }[] = [];
    for (const key of [...this.keys()].sort()) {
      const cursor = this.get(key);
      if (cursor) out.push({ key, cursor });
    }
    return out;
  }
}

/**
 * The key of an old layout's per-source cursor file, `name` in the landed directory `dir` of the
 * session whose directory is `sessionDir`; undefined for any other file there (the plugin's cursors included).
 */
export function oldCursorKey(sessionDir: string, dir: string, name: string): string | undefined {
  if (!name.endsWith(OLD_SUFFIX) || isHookCursorName(name)) return undefined;
  const place = dir
    .slice(sessionDir.length + 1)
    .split(sep)
    .join('/');
  return `${place}/${name.slice(0, -OLD_SUFFIX.length)}`;
}

/** The old layout's per-source cursor files of a session, by key (the OTLP receiver's and the plugin's left out). */
export function oldCursorKeys(root: string, session: string): string[] {
  const keys: string[] = [];
  for (const { dir, otlp } of landedDirs(root, session)) {
    if (otlp) continue;
    for (const name of listDir(dir)) {
      const key = oldCursorKey(join(root, session), dir, name);
      if (key) keys.push(key);
    }
  }
  return keys;
}

/**
 * The file's text: a head (`schema`, then the counter when known), then one block per source, its `at`
 * line first, blocks apart by a blank line.
 */
export function formatSessionCursors(entries: Map<string, Cursor>, head: CursorsHead = {}): string {
  const blocks = [
    formatKv([
      ['schema', SCHEMA],
      ['next_seq', head.nextSeq],
      ['last_scan', head.lastScan],
    ]),
  ];
  for (const key of [...entries.keys()].sort()) {
    const c = entries.get(key)!;
    // A blank line ends a block: a reason (free text) is kept on one line.
    const one = c.reason?.includes('\n') ? { ...c, reason: c.reason.replace(/\s*\n\s*/g, ' ') } : c;
    blocks.push(formatKv([['at', key]]) + formatCursor(one));
  }
  return blocks.join('\n');
}

/** The counter of a cursor file's head; a `next_seq` that is not a positive whole number is an error naming the file. */
export function parseCursorsHead(text: string, where = SESSION_CURSORS): CursorsHead {
  const end = text.indexOf('\n\n');
  const head = parseKv(end < 0 ? text : text.slice(0, end));
  const next = head.get('next_seq');
  const out: CursorsHead = {};
  if (next !== undefined) {
    const n = Number(next);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`${where}: next_seq ${JSON.stringify(next)} is not a sequence number`);
    out.nextSeq = n;
  }
  const lastScan = head.get('last_scan');
  if (lastScan) out.lastScan = lastScan;
  return out;
}

/** The counter carried by a session's cursor file, read alone (undefined when there is no file). */
export function readCursorsHead(root: string, session: string): CursorsHead | undefined {
  const path = sessionCursorsPath(root, session);
  const text = readTextIfPresent(path);
  return text === undefined ? undefined : parseCursorsHead(text, path);
}

export function parseSessionCursors(text: string, where: string): Map<string, Cursor> {
  const [head, ...blocks] = text.split('\n\n');
  const schema = parseKv(head ?? '').get('schema');
  if (schema !== String(SCHEMA)) throw new Error(`${where}: not a cursor file this build reads (schema ${schema ?? 'missing'}, expected ${SCHEMA})`);
  const out = new Map<string, Cursor>();
  for (const [i, block] of blocks.entries()) {
    const at = parseKv(block).get('at');
    if (!at) throw new Error(`${where}: cursor ${i + 1} names no source place (\`at\`)`);
    out.set(at, parseCursor(block));
  }
  return out;
}
