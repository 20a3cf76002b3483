import { readTextIfPresent } from './read-if-present.js';
import { formatKv, parseKv } from './kv-text.js';
import { replaceAtomically } from './write-once.js';

export type CursorState = 'active' | 'source_gone' | 'conflict';

/** What every cursor records: its source, what was last seen of it (recorded, never compared), and its state. */
interface CursorBase {
  source: string;
  size: number;
  mtime: number;
  last_seq: number;
  updated_at: string;
  state: CursorState;
  /** Why a conflict was declared; kept so a person can see it without the log of that pass. */
  reason?: string;
}

/** Tracks a source that only grows, by position (transcripts, journals). */
export interface AppendCursor extends CursorBase {
  kind: 'append';
  dev: number;
  ino: number;
  offset: number;
  ord: number;
  last_uuid?: string;
  tail_sha256?: string;
}

/** Tracks a source rewritten whole, by content digest (sidecars, manifests, scripts). */
export interface SnapshotCursor extends CursorBase {
  kind: 'snapshot';
  content_sha256?: string;
}

export type Cursor = AppendCursor | SnapshotCursor;

export function formatCursor(c: Cursor): string {
  const common: [string, string | number | undefined][] = [
    ['schema', 1],
    ['kind', c.kind],
    ['source', c.source],
  ];
  if (c.kind === 'append') {
    return formatKv([
      ...common,
      ['dev', c.dev],
      ['ino', c.ino],
      ['offset', c.offset],
      ['ord', c.ord],
      ['last_uuid', c.last_uuid],
      ['tail_sha256', c.tail_sha256],
      ['size', c.size],
      ['mtime', c.mtime],
      ['last_seq', c.last_seq],
      ['updated_at', c.updated_at],
      ['state', c.state],
      ['reason', c.reason],
    ]);
  }
  return formatKv([
    ...common,
    ['content_sha256', c.content_sha256],
    ['size', c.size],
    ['mtime', c.mtime],
    ['last_seq', c.last_seq],
    ['updated_at', c.updated_at],
    ['state', c.state],
    ['reason', c.reason],
  ]);
}

const num = (m: Map<string, string>, k: string): number => Number(m.get(k) ?? 0) || 0;

export function parseCursor(text: string): Cursor {
  const m = parseKv(text);
  const state = (m.get('state') ?? 'active') as CursorState;
  const base = {
    source: m.get('source') ?? '',
    size: num(m, 'size'),
    mtime: num(m, 'mtime'),
    last_seq: num(m, 'last_seq'),
    updated_at: m.get('updated_at') ?? '',
    state,
    reason: m.get('reason'),
  };
  if (m.get('kind') === 'snapshot') return { kind: 'snapshot', ...base, content_sha256: m.get('content_sha256') };
  return {
    kind: 'append',
    ...base,
    dev: num(m, 'dev'),
    ino: num(m, 'ino'),
    offset: num(m, 'offset'),
    ord: num(m, 'ord'),
    last_uuid: m.get('last_uuid'),
    tail_sha256: m.get('tail_sha256'),
  };
}

export function loadCursor(path: string): Cursor | undefined {
  const text = readTextIfPresent(path);
  return text === undefined ? undefined : parseCursor(text);
}

export function saveCursor(path: string, c: Cursor): void {
  replaceAtomically(path, formatCursor(c));
}

/** Where one source's cursor is read and written: an entry of its session's cursor file (session-cursors.ts), or a file of its own. */
export interface CursorSlot {
  /** Named in a conflict's reason. */
  readonly where: string;
  load(): Cursor | undefined;
  save(c: Cursor): void;
}
