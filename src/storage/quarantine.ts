/**
 * The storage root's quarantine: records that were accepted but can never land where they
 * belong (their session's path is refused by the filesystem for good: a name too long, a path
 * component that is a file …) are parked in `<root>/_quarantine/`, one write-once file per parked
 * batch, so that they never block what comes after them and are never silently dropped.
 *
 * A file is JSON lines: first a header
 *
 *     {"t":"quarantine","schema":1,"reason":"ENOTDIR","session":"…","error":"…","at":"<RFC 3339>","records":3,"receiver":"…","path":"…"}
 *
 * then, per group of records, a `{"t":"group","kind":…,"src":…,"resource":…,"scope":…}` line
 * followed by the records as their Session Data lines would have been (without `ord`/`off`:
 * they never got a place in a stream). A person reads them, fixes the cause, and may re-send or
 * remove them; `aszcol verify` lists them and exits non-zero while any is there.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { compactStamp, rfc3339 } from '../util/time.js';
import { listDir } from './layout.js';
import { ensureDirDurable, writeOnce } from './write-once.js';

export const QUARANTINE_DIR = '_quarantine';
const QUARANTINE_NAME = /^q-\d{8}T\d{6}\.\d{9}Z-[0-9a-f]{8}\.jsonl$/;

export const quarantineDir = (root: string) => join(root, QUARANTINE_DIR);

export interface QuarantineHeader {
  /** A short machine word: the errno (`ENOTDIR`, `ENAMETOOLONG` …), `bad_session_id` (an id the names rule refuses, from an older journal) or `internal`. */
  reason: string;
  session: string;
  /** The error as the filesystem said it. */
  error: string;
  /** The path the records were to land at, when known. */
  path?: string;
  /** Who parked them (`claude_code_otlp/edge`). */
  receiver: string;
  records: number;
}

export interface QuarantineGroup {
  kind: string;
  src: string;
  resource: unknown;
  scope: unknown;
  /** Each record as one JSON object's text. */
  records: string[];
}

export interface QuarantinedFile extends QuarantineHeader {
  file: string;
  at: string;
}

/** Parks records durably (synced, then named) and returns the file's path. Throws when the root cannot take it either. */
export function quarantineRecords(root: string, header: QuarantineHeader, groups: QuarantineGroup[], atNs: bigint): string {
  const dir = quarantineDir(root);
  ensureDirDurable(dir);
  const file = join(dir, `q-${compactStamp(atNs)}-${randomBytes(4).toString('hex')}.jsonl`);
  const lines = [JSON.stringify({ t: 'quarantine', schema: 1, ...header, at: rfc3339(atNs) })];
  for (const g of groups) {
    lines.push(JSON.stringify({ t: 'group', kind: g.kind, src: g.src, resource: g.resource, scope: g.scope }));
    for (const r of g.records) lines.push(r);
  }
  writeOnce(file, lines.join('\n') + '\n');
  return file;
}

/** The quarantine's files (names only, no reading): cheap enough for every health probe. */
export function quarantineFileCount(root: string): number {
  return listDir(quarantineDir(root)).filter((n) => QUARANTINE_NAME.test(n)).length;
}

/** Every parked batch with its header; a file whose header cannot be read is listed with reason `unreadable`. */
export function listQuarantine(root: string): QuarantinedFile[] {
  const dir = quarantineDir(root);
  const out: QuarantinedFile[] = [];
  for (const name of listDir(dir).sort()) {
    if (!QUARANTINE_NAME.test(name)) continue;
    const file = join(dir, name);
    try {
      const first = readFileSync(file, 'utf8').split('\n', 1)[0]!;
      const h = JSON.parse(first) as Partial<QuarantinedFile> & { t?: string };
      if (h.t !== 'quarantine') throw new Error('no quarantine header');
      out.push({
        file,
        at: String(h.at ?? ''),
        reason: String(h.reason ?? 'unknown'),
        session: String(h.session ?? ''),
        error: String(h.error ?? ''),
        receiver: String(h.receiver ?? ''),
        records: Number(h.records ?? 0),
        ...(h.path ? { path: String(h.path) } : {}),
      });
    } catch (err) {
      out.push({ file, at: '', reason: 'unreadable', session: '', error: (err as Error).message, receiver: '', records: 0 });
    }
  }
  return out;
}
