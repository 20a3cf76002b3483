import { join } from 'node:path';
import { readSessionData } from '../formats/session-data/decode.js';
import type { Header } from '../formats/session-data/types.js';
import { loadCursor } from './cursor.js';
import { landedDirs, listDir, parseLandedName, isSessionEntryName } from './layout.js';
import { listQuarantine, quarantineDir } from './quarantine.js';

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
  /** Records whose source line had already landed (an interrupted pass); counted, not failed. */
  relanded: number;
  /** Records parked in `_quarantine/` (they can never land where they belong): each is a problem too. */
  quarantine: QuarantineReport;
  problems: string[];
}

/** Kinds whose files continue one another line after line; the rest are whole documents, one record a version. */
const APPEND_PREFIXES = new Set(['transcript', 'journal', 'changes', 'otlp_log', 'otlp_span']);

/**
 * Checks what landed without the source: every file's header, count and closing digest; in
 * each stream or run, per kind, `ord` running 1, 2, 3 and each record starting at the byte after
 * the previous one's line; and, where an append cursor says how far the source was read, that
 * the records reach it (an `end gap` otherwise).
 */
export function verifyRoot(root: string, only?: string): VerifyReport {
  const r: VerifyReport = { sessions: 0, streams: 0, files: 0, records: 0, relanded: 0, quarantine: quarantineReport(root, only), problems: [] };
  for (const q of r.quarantine.entries)
    r.problems.push(`${q.file}: ${q.records} record(s) of session ${JSON.stringify(q.session)} are quarantined (${q.reason}: ${q.error}), landed nowhere else`);
  const sessions = only ? [only] : listDir(root).filter(isSessionEntryName).sort();
  for (const session of sessions) {
    const dirs = landedDirs(root, session);
    if (dirs.length === 0) {
      if (only) r.problems.push(`${session}: no landed files`);
      continue;
    }
    r.sessions++;
    const seqs = new Map<number, string>();
    for (const { dir } of dirs) {
      r.streams++;
      const byPrefix = new Map<string, { seq: number; name: string }[]>();
      for (const name of listDir(dir)) {
        const p = parseLandedName(name);
        if (!p) continue;
        const other = seqs.get(p.seq);
        if (other) r.problems.push(`${join(dir, name)}: sequence ${p.seq} was issued twice (also ${other})`);
        seqs.set(p.seq, join(dir, name));
        (byPrefix.get(p.prefix) ?? byPrefix.set(p.prefix, []).get(p.prefix)!).push({ seq: p.seq, name });
      }
      for (const [prefix, files] of byPrefix) {
        files.sort((a, b) => a.seq - b.seq);
        let maxOrd = 0;
        let end = 0;
        const seenOff = new Map<number, number>();
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
              if (rec.ord !== 1 || rec.off !== 0) r.problems.push(`${path}: a document record must be ord 1 at byte 0, got ord ${rec.ord} at ${rec.off}`);
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
            if (rec.ord !== maxOrd + 1) r.problems.push(`${where}: ord gap: expected ${maxOrd + 1}, got ${rec.ord}`);
            else if (rec.off !== end) r.problems.push(`${where}: byte gap: expected offset ${end}, got ${rec.off}`);
            maxOrd = rec.ord;
            end = rec.off + rec.bytes + 1;
            seenOff.set(rec.ord, rec.off);
          }
        }
        const cursor = loadCursor(join(dir, `${prefix}.cursor`));
        if (cursor?.kind === 'append' && APPEND_PREFIXES.has(prefix) && (cursor.offset > end || cursor.ord > maxOrd)) {
          r.problems.push(
            `${dir}: end gap in ${prefix}: the records reach byte ${end} (ord ${maxOrd}), the cursor has read to ${cursor.offset} (ord ${cursor.ord})`,
          );
        }
      }
    }
  }
  return r;
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
