/**
 * The hook spool as an intake queue: a session's spooled plugin observations landed as Session
 * Data files under the session, one file per stream and kind per pass (`streams/<s>/changes-…sd`,
 * `streams/<s>/execution-…sd`), the way asz 0.6 lands its plugin's per-stream output files.
 *
 *   <session>/hooks.cursor                 how far the spool file was read, and where each stream's
 *                                          and kind's lines stood at that point
 *   <session>/streams/<s>/<kind>.cursor    how far that stream's lines of that kind are landed
 *
 * Each stream and kind is numbered as if its lines were a file of their own (`ord` from 1, `off`
 * the byte after the previous line), so `verify` checks them like any tailed source: a lost file
 * leaves an ord or byte gap, or an end gap against the stream's cursor. Files, then the stream
 * cursors, then the spool cursor are made durable in that order; a line is skipped when its
 * stream's cursor, or a file a killed pass installed past that cursor, already holds it, so a kill
 * at any point lands every line exactly once.
 */
import { closeSync, fstatSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { readSessionData } from '../formats/session-data/decode.js';
import type { FileKind, SdRecord } from '../formats/session-data/types.js';
import { formatCursor, loadCursor, type AppendCursor } from './cursor.js';
import { openSourceFile } from './append-source.js';
import type { FreshIndex } from './fresh-index.js';
import { HOOKS_DIR, spoolDir, spoolName } from './hook-spool.js';
import { formatKv, parseKv } from './kv-text.js';
import { landLines, type SourceLine } from './landing.js';
import { listDir, parseLandedName, streamDir } from './layout.js';
import type { SyncBatch } from './sync-batch.js';
import { ensureDirDurable } from './write-once.js';

/** The landed kinds the plugin's observations take. */
export const HOOK_PREFIXES: ReadonlySet<string> = new Set(['changes', 'execution']);
/** The most spool bytes one pass lands for a session; the rest waits for the next pass. */
const MAX_PASS_BYTES = 8 * 1024 * 1024;

/** Whether a cursor file in a stream directory is one of the plugin's (its source is the hook spool, not a file of the runtime's). */
export const isHookCursorName = (name: string) => name.endsWith('.cursor') && HOOK_PREFIXES.has(name.slice(0, -'.cursor'.length));

export const hookCursorPath = (root: string, session: string) => join(root, session, 'hooks.cursor');
export const spoolPath = (root: string, session: string) => join(spoolDir(root), `${spoolName(session)}.jsonl`);
/** A session's spool renamed aside by the trim (hook-spool-trim.ts): read to its end before the live spool. */
export const retiredSpoolPath = (root: string, session: string) => `${spoolPath(root, session)}.retired`;
const spoolRel = (session: string) => `${HOOKS_DIR}/spool/${spoolName(session)}.jsonl`;

interface Position {
  ord: number;
  off: number;
}

/** How far a session's spool was read, and where each `<stream>/<kind>` stood at that byte. */
export interface HookCursor {
  offset: number;
  ino: number;
  /** Set when `offset` has moved to the live spool: the inode of the retired spool, every line of which is landed (it may be deleted). */
  retired?: number;
  positions: Map<string, Position>;
  updated_at: string;
}

export function loadHookCursor(root: string, session: string): HookCursor | undefined {
  let text: string;
  try {
    text = readFileSync(hookCursorPath(root, session), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const m = parseKv(text);
  const positions = new Map<string, Position>();
  for (const [k, v] of m) {
    if (!k.startsWith('at.')) continue;
    const [ord, off] = v.split(':').map(Number);
    positions.set(k.slice(3), { ord: ord || 0, off: off || 0 });
  }
  const retired = Number(m.get('retired') ?? 0) || undefined;
  return {
    offset: Number(m.get('offset') ?? 0) || 0,
    ino: Number(m.get('ino') ?? 0) || 0,
    ...(retired ? { retired } : {}),
    positions,
    updated_at: m.get('updated_at') ?? '',
  };
}

export function formatHookCursor(session: string, c: HookCursor): string {
  return formatKv([
    ['schema', 1],
    ['source', spoolRel(session)],
    ['ino', c.ino],
    ['offset', c.offset],
    ...(c.retired ? [['retired', c.retired] as [string, number]] : []),
    ['updated_at', c.updated_at],
    ...[...c.positions].sort(([a], [b]) => (a < b ? -1 : 1)).map(([k, p]): [string, string] => [`at.${k}`, `${p.ord}:${p.off}`]),
  ]);
}

/** The session's spool size and how far its hook cursor says it was landed; undefined when there is no spool. */
export function spoolProgress(root: string, session: string): { size: number; landed: number } | undefined {
  let size: number;
  try {
    size = statSync(spoolPath(root, session)).size;
  } catch {
    return undefined;
  }
  return { size, landed: loadHookCursor(root, session)?.offset ?? 0 };
}

export interface HookLandingSpec {
  root: string;
  session: string;
  /** Where a line lands and as what (the adapter's `placeHookLine`). */
  place: (line: Buffer) => { stream: string; kind: string; record: Omit<SdRecord, 'ord' | 'off' | 'sha' | 'bytes'> };
  adapter: string;
  dialect: string;
  stamp: string;
  at: string;
  now: () => string;
  maxDeltaBytes: number;
  nextSeq: () => number;
  batch: SyncBatch;
  fresh: FreshIndex;
  /** The spool file to read past the cursor: the live spool unless a retired one is still being read. */
  path?: string;
}

export type HookLandingOutcome =
  | { status: 'unchanged' }
  | { status: 'landed'; files: number; records: number; bytes: number; skipped: number; pending: boolean }
  | { status: 'conflict'; reason: string };

/** The highest ord, and the byte after it, that a stream's files of `prefix` above sequence `after` hold: what a killed pass installed past its cursor. */
function landedBeyond(dir: string, prefix: string, after: number): Position {
  const out: Position = { ord: 0, off: 0 };
  for (const name of listDir(dir)) {
    const p = parseLandedName(name);
    if (!p || p.prefix !== prefix || p.seq <= after) continue;
    for (const r of readSessionData(join(dir, name)).records) if (r.ord > out.ord) Object.assign(out, { ord: r.ord, off: r.off + r.bytes + 1 });
  }
  return out;
}

/**
 * Lands the session's spooled lines past its hook cursor into `batch`, staging every cursor behind
 * the files. Call under the session's lock; the caller commits the batch and extends the index.
 */
export function landHookSpool(spec: HookLandingSpec): HookLandingOutcome {
  const { root, session } = spec;
  const prev = loadHookCursor(root, session);
  let fd: number;
  try {
    fd = openSourceFile(spec.path ?? spoolPath(root, session));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { status: 'unchanged' };
    throw err;
  }
  let window: Buffer;
  let size: number;
  let ino: number;
  let capped: boolean;
  try {
    const st = fstatSync(fd);
    size = st.size;
    ino = st.ino;
    const from = prev?.offset ?? 0;
    if (size < from) return { status: 'conflict', reason: `${spoolRel(session)} is ${size} bytes, shorter than the ${from} already landed: it was rewritten` };
    if (size === from) return { status: 'unchanged' };
    const want = Math.min(size - from, MAX_PASS_BYTES);
    capped = want < size - from;
    const buf = Buffer.allocUnsafe(want);
    let got = 0;
    while (got < want) {
      const n = readSync(fd, buf, got, want - got, from + got);
      if (n === 0) break;
      got += n;
    }
    window = buf.subarray(0, buf.lastIndexOf(10, got - 1) + 1);
  } finally {
    closeSync(fd);
  }
  if (window.length === 0) return { status: 'unchanged' }; // a line still being written
  const positions = new Map(prev?.positions ?? []);
  const groups = new Map<string, { stream: string; kind: string; lines: SourceLine[]; records: Omit<SdRecord, 'ord' | 'off' | 'sha' | 'bytes'>[] }>();
  for (let at = 0; at < window.length;) {
    const nl = window.indexOf(10, at);
    const line = window.subarray(at, nl);
    at = nl + 1;
    const placed = spec.place(line);
    const key = `${placed.stream}.${placed.kind}`;
    const pos = positions.get(key) ?? { ord: 0, off: 0 };
    const g = groups.get(key) ?? groups.set(key, { stream: placed.stream, kind: placed.kind, lines: [], records: [] }).get(key)!;
    g.lines.push({ line, off: pos.off, ord: pos.ord + 1 });
    g.records.push(placed.record);
    positions.set(key, { ord: pos.ord + 1, off: pos.off + line.length + 1 });
  }
  let files = 0;
  let records = 0;
  let skipped = 0;
  for (const g of groups.values()) {
    const dir = streamDir(root, session, g.stream);
    ensureDirDurable(dir);
    const cursorPath = join(dir, `${g.kind}.cursor`);
    const c = loadCursor(cursorPath);
    const held = c?.kind === 'append' ? c : undefined;
    // What is landed already: the stream cursor's count, or more when a killed pass installed files it never counted.
    const beyond = landedBeyond(dir, g.kind, held?.last_seq ?? 0);
    const through = Math.max(held?.ord ?? 0, beyond.ord);
    const cur: AppendCursor = held ?? {
      kind: 'append',
      source: spoolRel(session),
      dev: 0,
      ino,
      offset: 0,
      ord: 0,
      size: 0,
      mtime: 0,
      last_seq: 0,
      updated_at: '',
      state: 'active',
    };
    if (beyond.ord > cur.ord) Object.assign(cur, { ord: beyond.ord, offset: beyond.off });
    const todo = g.lines.map((l, i) => ({ l, r: g.records[i]! })).filter(({ l }) => l.ord > through);
    skipped += g.lines.length - todo.length;
    // One file per max_delta_bytes of lines, the same budget a transcript's windows keep.
    for (let i = 0; i < todo.length;) {
      let bytes = 0;
      let j = i;
      while (j < todo.length && (j === i || bytes + todo[j]!.l.line.length + 1 <= spec.maxDeltaBytes)) bytes += todo[j++]!.l.line.length + 1;
      const part = todo.slice(i, j);
      const seq = spec.nextSeq();
      let k = 0;
      const target = {
        dir,
        prefix: g.kind,
        stamp: spec.stamp,
        at: spec.at,
        header: { kind: g.kind as FileKind, adapter: spec.adapter, dialect: spec.dialect, src: spoolRel(session), session, stream: g.stream },
      };
      const landed = landLines(
        target,
        seq,
        part.map((x) => x.l),
        () => part[k++]!.r,
        spec.batch,
        spec.fresh,
      );
      const last = part[part.length - 1]!.l;
      Object.assign(cur, { ord: last.ord, offset: last.off + last.line.length + 1, last_seq: seq });
      files++;
      records += landed.records;
      i = j;
    }
    Object.assign(cur, { size, ino, updated_at: spec.now(), state: 'active' });
    spec.batch.stageReplace(cursorPath, formatCursor(cur));
  }
  const next: HookCursor = { offset: (prev?.offset ?? 0) + window.length, ino, positions, updated_at: spec.now() };
  spec.batch.stageReplace(hookCursorPath(root, session), formatHookCursor(session, next));
  return { status: 'landed', files, records, bytes: window.length, skipped, pending: capped };
}

/** An observation as the view and the checks read it: a landed record's data, or a spool line not landed yet. */
export interface ObservedLine {
  line: number;
  value?: unknown;
  problem?: string;
}

/**
 * The plugin's observations of a session: every landed `changes`/`execution` record (its data
 * part, or the reason it has none), then the spool's lines past the hook cursor, which no file
 * holds yet. `notLanded` says how many came from the spool.
 */
export function readObservations(root: string, session: string): { lines: ObservedLine[]; landed: number; notLanded: number } {
  const lines: ObservedLine[] = [];
  let n = 0;
  const streams = join(root, session, 'streams');
  const files: { seq: number; path: string }[] = [];
  for (const s of listDir(streams))
    for (const name of listDir(join(streams, s))) {
      const p = parseLandedName(name);
      if (p && HOOK_PREFIXES.has(p.prefix)) files.push({ seq: p.seq, path: join(streams, s, name) });
    }
  for (const f of files.sort((a, b) => a.seq - b.seq)) {
    let recs: SdRecord[];
    try {
      recs = readSessionData(f.path).records;
    } catch (err) {
      lines.push({ line: ++n, problem: (err as Error).message });
      continue;
    }
    for (const r of recs) {
      const data = r.parts.find((p) => p.k === 'data');
      lines.push(data ? { line: ++n, value: data.data } : { line: ++n, problem: r.parts[0]?.text ?? 'a landed record with no observation' });
    }
  }
  const landed = n;
  const rest = unlandedSpoolLines(root, session);
  for (const l of rest) {
    try {
      lines.push({ line: ++n, value: JSON.parse(l) as unknown });
    } catch (err) {
      lines.push({ line: ++n, problem: `not JSON: ${(err as Error).message}` });
    }
  }
  return { lines, landed, notLanded: n - landed };
}

function readFrom(path: string, offset: number): string {
  try {
    const text = readFileSync(path).subarray(offset).toString('utf8');
    return text.slice(0, text.lastIndexOf('\n') + 1);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    return '';
  }
}

/** The complete spool lines past the hook cursor: a retired spool's tail not landed yet, then the live spool's. */
export function unlandedSpoolLines(root: string, session: string): string[] {
  const cursor = loadHookCursor(root, session);
  let retiredIno: number | undefined;
  try {
    retiredIno = statSync(retiredSpoolPath(root, session)).ino;
  } catch {
    retiredIno = undefined;
  }
  const readingRetired = retiredIno !== undefined && cursor?.retired !== retiredIno;
  const text = readingRetired
    ? readFrom(retiredSpoolPath(root, session), cursor?.offset ?? 0) + readFrom(spoolPath(root, session), 0)
    : readFrom(spoolPath(root, session), cursor?.offset ?? 0);
  const lines = text.split('\n');
  lines.pop();
  return lines;
}
