/**
 * Re-cuts a session's landed files into another storage root so no file exceeds a byte budget:
 * every record keeps its bytes and its order, each file keeps its kind, stream, run and source,
 * and the sequence numbers are dealt out again from 1. Nothing derived comes along — the index
 * and the chain address records by file and line, so they are rebuilt over the new files.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readSessionData } from '../formats/session-data/decode.js';
import { encodeHeader } from '../formats/session-data/encode.js';
import type { Header } from '../formats/session-data/types.js';
import { AszError } from '../util/errors.js';
import { listLanded } from './landed-files.js';
import { landedName, parseLandedName } from './layout.js';
import { writeOnce } from './write-once.js';

export interface RepackedSession {
  session: string;
  filesIn: number;
  filesOut: number;
  records: number;
  bytes: number;
}

/** A destination with anything in it is refused: chains there would bind to other landed files. */
export function checkRepackDestination(dest: string): void {
  if (existsSync(dest) && readdirSync(dest).length) throw new AszError('the destination must be a new or empty directory', dest);
}

/** The closing line of a file whose header and record lines are `lines`. */
function closingFor(lines: string[]): string {
  const hash = createHash('sha256');
  for (const l of lines) hash.update(l + '\n');
  return JSON.stringify({ t: 'end', records: lines.length - 1, digest: hash.digest('hex') });
}

/**
 * Copies one session's landed files from `root` into `dest`, cut at `maxBytes` per file (a record
 * larger than that gets a file of its own). Reads each file whole and checks it first, so a damaged
 * landed file stops the repack before anything of it is written.
 */
export function repackSession(root: string, dest: string, session: string, maxBytes: number): RepackedSession {
  const out: RepackedSession = { session, filesIn: 0, filesOut: 0, records: 0, bytes: 0 };
  let seq = 0;
  for (const f of listLanded(root, session)) {
    const { header } = readSessionData(f.path);
    const name = parseLandedName(f.path.slice(dirname(f.path).length + 1))!;
    const raw = readFileSync(f.path, 'utf8').split('\n');
    const records = raw.slice(1, raw.length - 2); // the header first; the closing line and the empty tail last
    out.filesIn++;
    const relDir = dirname(f.rel);
    const rest: Partial<Header> = { ...header };
    delete rest.h;
    delete rest.schema;
    delete rest.seq;
    let i = 0;
    do {
      seq++;
      const head = encodeHeader({ ...rest, seq } as Omit<Header, 'h' | 'schema'>);
      const lines = [head];
      let size = head.length + 120; // the closing line is about this long
      while (i < records.length && (lines.length === 1 || size + Buffer.byteLength(records[i]!) + 1 <= maxBytes)) {
        size += Buffer.byteLength(records[i]!) + 1;
        lines.push(records[i++]!);
      }
      const bytes = lines.map((l) => l + '\n').join('') + closingFor(lines) + '\n';
      const target = join(dest, relDir, landedName(name.prefix, name.stamp, seq));
      mkdirSync(dirname(target), { recursive: true });
      writeOnce(target, bytes);
      out.filesOut++;
      out.records += lines.length - 1;
      out.bytes += Buffer.byteLength(bytes);
    } while (i < records.length);
  }
  return out;
}
