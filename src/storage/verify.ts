import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { CONVERSATIONS } from './chain.js';
import { readSessionData } from '../formats/session-data/decode.js';
import type { Header, SdRecord } from '../formats/session-data/types.js';
import { loadCursor } from './cursor.js';
import { SessionCursors } from './session-cursors.js';
import { processAlive } from '../util/process-alive.js';
import { tempWriterPid } from './write-once.js';
import { landedDirs, listDir, parseLandedName, isSessionEntryName } from './layout.js';
import { listQuarantine, quarantineDir } from './quarantine.js';
import { verifyProviderBodies } from './verify-provider-bodies.js';

export interface QuarantineReport {
  dir: string;
  /** Parked batches (files) and the records in them. */
  files: number;
  records: number;
  /** Records by reason (errno). */
  reasons: Record<string, number>;
  entries: { file: string; session: string; reason: string; records: number; at: string; error: string }[];
}

export interface VerifyReport {
  sessions: number;
  streams: number;
  files: number;
  records: number;
  /**
   * Records landed again by an interrupted pass (a kill between landing a file and committing its
   * cursor); counted, not failed: a line of an append source at the byte it landed at before, or a
   * document version identical to the version before it (same source, same content).
   */
  relanded: number;
  /** Records parked in `_quarantine/` (they can never land where they belong): each is a problem too. */
  quarantine: QuarantineReport;
  problems: string[];
  /** Temporary files found: a live writer's are a warning; a gone writer's (a killed run's leftovers) are also a problem. */
  temporaries: Temporary[];
}

export interface Temporary {
  path: string;
  /** The writer's pid the name carries, when it carries one. */
  pid?: number;
  writer: 'alive' | 'gone' | 'unknown';
}

/** Kinds whose files continue one another line after line; the rest are whole documents, one record a version. */
const APPEND_PREFIXES = new Set(['transcript', 'journal', 'changes', 'execution', 'otlp_log', 'otlp_span']);
/** Each provider body record is a whole body file of its own (byte 0), numbered by its place in the pass that landed it. */
const BODY_PREFIX = 'provider_body';

type DocumentVersion = { src: string; sha: string; bytes: number };

/** The one record of a document version, to compare with the next version of the same kind in the same place. */
function documentVersion(header: Header, records: SdRecord[]): DocumentVersion | undefined {
  return records.length === 1 ? { src: header.src, sha: records[0]!.sha, bytes: records[0]!.bytes } : undefined;
}

/** A version that repeats the one before it byte for byte was landed again, not changed: a source only gets a new version when its content changes. */
function sameDocumentAgain(before: DocumentVersion | undefined, now: DocumentVersion | undefined): boolean {
  return before !== undefined && now !== undefined && before.src === now.src && before.sha === now.sha && before.bytes === now.bytes;
}

/**
 * Checks what landed without the source: every file's header, count and closing digest; in
 * each stream or run, per kind, `ord` running 1, 2, 3 and each record starting at the byte after
 * the previous one's line; and, where an append cursor says how far the source was read, that
 * the records reach it (an `end gap` otherwise).
 */
export function verifyRoot(root: string, only?: string): VerifyReport {
  const r: VerifyReport = {
    sessions: 0,
    streams: 0,
    files: 0,
    records: 0,
    relanded: 0,
    quarantine: quarantineReport(root, only),
    problems: [],
    temporaries: [],
  };
  for (const q of r.quarantine.entries)
    r.problems.push(`${q.file}: ${q.records} record(s) of session ${JSON.stringify(q.session)} are quarantined (${q.reason}: ${q.error}), landed nowhere else`);
  reportTemporaries(r, root, only);
  const sessions = only ? [only] : listDir(root).filter(isSessionEntryName).sort();
  for (const session of sessions) {
    const dirs = landedDirs(root, session);
    if (dirs.length === 0) {
      if (only) r.problems.push(`${session}: no landed files`);
      continue;
    }
    r.sessions++;
    let cursors: SessionCursors | undefined;
    try {
      cursors = SessionCursors.read(root, session);
    } catch (err) {
      r.problems.push((err as Error).message);
    }
    const seqs = new Map<number, string>();
    for (const { dir, otlp } of dirs) {
      r.streams++;
      // The source cursors name their stream or run directory under the session (session-cursors.ts); the OTLP receiver's are files.
      const place = relative(join(root, session), dir).split(sep).join('/');
      const cursorOf = (prefix: string) => (otlp ? loadCursor(join(dir, `${prefix}.cursor`)) : cursors?.get(`${place}/${prefix}`));
      const byPrefix = new Map<string, { seq: number; name: string }[]>();
      for (const name of listDir(dir)) {
        const p = parseLandedName(name);
        if (!p) continue;
        const other = seqs.get(p.seq);
        if (other) r.problems.push(`${join(dir, name)}: sequence ${p.seq} was issued twice (also ${other})`);
        seqs.set(p.seq, join(dir, name));
        (byPrefix.get(p.prefix) ?? byPrefix.set(p.prefix, []).get(p.prefix)!).push({ seq: p.seq, name });
      }
      // A stream whose every file of a kind is gone still has that kind's cursor: its end gap is checked too.
      const cursorPrefixes = listDir(dir).map((name) => (name.endsWith('.cursor') ? name.slice(0, -'.cursor'.length) : ''));
      if (!otlp) for (const key of cursors?.keys({ oldLayout: false }) ?? []) if (key.startsWith(`${place}/`)) cursorPrefixes.push(key.slice(place.length + 1));
      for (const prefix of cursorPrefixes) if (APPEND_PREFIXES.has(prefix) && !byPrefix.has(prefix)) byPrefix.set(prefix, []);
      for (const [prefix, files] of byPrefix) {
        files.sort((a, b) => a.seq - b.seq);
        let maxOrd = 0;
        let end = 0;
        const seenOff = new Map<number, number>();
        let lastDocument: DocumentVersion | undefined;
        for (const f of files) {
          const path = join(dir, f.name);
          r.files++;
          let header: Header;
          let records;
          try {
            ({ header, records } = readSessionData(path));
          } catch (err) {
            r.problems.push((err as Error).message);
            continue;
          }
          if (header.seq !== f.seq) r.problems.push(`${path}: header seq ${header.seq} differs from the name's ${f.seq}`);
          if (header.session !== session) r.problems.push(`${path}: header session ${header.session} is not ${session}`);
          r.records += records.length;
          if (!APPEND_PREFIXES.has(prefix)) {
            for (const rec of records)
              if (prefix === BODY_PREFIX ? rec.off !== 0 || rec.ord < 1 : rec.ord !== 1 || rec.off !== 0)
                r.problems.push(
                  `${path}: a document record must be ord ${prefix === BODY_PREFIX ? '1 or more' : '1'} at byte 0, got ord ${rec.ord} at ${rec.off}`,
                );
            const version = documentVersion(header, records);
            if (sameDocumentAgain(lastDocument, version)) r.relanded += records.length;
            lastDocument = version;
            continue;
          }
          for (const [i, rec] of records.entries()) {
            const where = `${path} row ${i + 1}`;
            if (rec.ord <= maxOrd) {
              if (seenOff.get(rec.ord) !== rec.off)
                r.problems.push(`${where}: ord ${rec.ord} landed again at byte ${rec.off}, first at ${seenOff.get(rec.ord)}`);
              else r.relanded++;
              continue;
            }
            // Each is its own problem: lost records leave both (asz's guide: "an ord gap and a byte gap").
            if (rec.ord !== maxOrd + 1) r.problems.push(`${where}: ord gap: expected ${maxOrd + 1}, got ${rec.ord}`);
            if (rec.off !== end) r.problems.push(`${where}: byte gap: expected offset ${end}, got ${rec.off}`);
            maxOrd = rec.ord;
            end = rec.off + rec.bytes + 1;
            seenOff.set(rec.ord, rec.off);
          }
        }
        const cursor = cursorOf(prefix);
        if (cursor?.kind === 'append' && APPEND_PREFIXES.has(prefix) && (cursor.offset > end || cursor.ord > maxOrd)) {
          r.problems.push(
            `${dir}: end gap in ${prefix}: the records reach byte ${end} (ord ${maxOrd}), the cursor has read to ${cursor.offset} (ord ${cursor.ord})`,
          );
        }
      }
    }
    if (dirs.some((d) => d.provider)) r.problems.push(...verifyProviderBodies(root, session).problems);
  }
  return r;
}

/** Every temporary file (`.tmp-…`) under `dir`, found without following links. */
function findTemporaries(dir: string, out: Temporary[]): void {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) findTemporaries(path, out);
    else if (e.name.startsWith('.tmp-')) {
      const pid = tempWriterPid(e.name);
      out.push(pid === undefined ? { path, writer: 'unknown' } : { path, pid, writer: processAlive(pid) ? 'alive' : 'gone' });
    }
  }
}

/**
 * Lists the temporary files under the root (or one session). One whose writer is gone was left by
 * a killed run: inside a session or a conversation chain it is a problem, since the next collect
 * or parse there removes it and until then it is unfinished work; elsewhere (`_journal/`,
 * `_metrics/`, the root's own state files) it is a warning, safe to delete.
 */
function reportTemporaries(r: VerifyReport, root: string, only: string | undefined): void {
  findTemporaries(only ? join(root, only) : root, r.temporaries);
  for (const t of r.temporaries) {
    if (t.writer !== 'gone') continue;
    const top = relative(root, t.path).split(sep)[0]!;
    const swept = top === CONVERSATIONS || (isSessionEntryName(top) && top !== relative(root, t.path));
    if (swept) r.problems.push(`${t.path}: a temporary file left by a writer that is gone (pid ${t.pid}); the next collect or parse of its session removes it`);
  }
}

/** What `_quarantine/` holds (of one session, when given). */
export function quarantineReport(root: string, only?: string): QuarantineReport {
  const entries = listQuarantine(root).filter((q) => !only || q.session === only);
  const reasons: Record<string, number> = {};
  for (const q of entries) reasons[q.reason] = (reasons[q.reason] ?? 0) + q.records;
  return {
    dir: quarantineDir(root),
    files: entries.length,
    records: entries.reduce((n, q) => n + q.records, 0),
    reasons,
    entries: entries.map(({ file, session, reason, records, at, error }) => ({ file, session, reason, records, at, error })),
  };
}
