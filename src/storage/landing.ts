import { join } from 'node:path';
import { SessionDataWriter, shortSha } from '../formats/session-data/encode.js';
import { unknownPart } from '../formats/session-data/parts.js';
import type { Header, SdRecord } from '../formats/session-data/types.js';
import { landedName } from './layout.js';
import { WriteOnceFile } from './write-once.js';
import type { SyncBatch } from './sync-batch.js';
import { carriesChanges } from './index.js';
import type { FreshIndex } from './fresh-index.js';

/** Everything constant for the files one source lands in one pass. */
export interface LandingTarget {
  dir: string;
  prefix: string;
  stamp: string;
  at: string;
  header: Omit<Header, 'h' | 'schema' | 'seq' | 'at'>;
}

export interface SourceLine {
  line: Buffer;
  off: number;
  ord: number;
}

export interface Landed {
  seq: number;
  path: string;
  records: number;
  digest: string;
}

/** A converted record made a Session Data record: the collector's provenance set on it (a converter's own keys of those names do not win). */
function withProvenance(r: Omit<SdRecord, 'ord' | 'off' | 'sha' | 'bytes'>, ord: number, off: number, sha: string, bytes: number): SdRecord {
  const out = r as SdRecord;
  out.ord = ord;
  out.off = off;
  out.sha = sha;
  out.bytes = bytes;
  return out;
}

/**
 * Converts source lines and lands them as one Session Data file under the next sequence.
 * Provenance (`ord`, `off`, `sha`, `bytes`) is the collector's; the parts are the dialect's.
 * With a `batch`, the file is handed to it unsynced, under its temporary name; with `fresh`, its
 * index entries are kept for `extendIndex`.
 */
export function landLines(
  target: LandingTarget,
  seq: number,
  lines: Iterable<SourceLine>,
  convert: (line: Buffer) => Omit<SdRecord, 'ord' | 'off' | 'sha' | 'bytes'>,
  batch?: SyncBatch,
  fresh?: FreshIndex,
): Landed {
  const path = join(target.dir, landedName(target.prefix, target.stamp, seq));
  const file = new WriteOnceFile(path);
  const h = target.header;
  let changes = 0;
  const entryFile = { kind: h.kind, stream: h.stream, batch: h.batch };
  const add = (w: SessionDataWriter, r: SdRecord) => {
    const row = w.records + 1;
    w.add(r); // first: a record that cannot be written is replaced by one that can, and only that one is indexed
    if (fresh) {
      fresh.add(r, row, entryFile);
      if (carriesChanges(r)) changes++;
    }
  };
  fresh?.begin(seq);
  try {
    const w = new SessionDataWriter(file, { ...h, seq, at: target.at });
    for (const { line, off, ord } of lines) {
      const sha = shortSha(line);
      try {
        // The converted record takes its provenance in place: no copy of every record (the writer orders the keys).
        add(w, withProvenance(convert(line), ord, off, sha, line.length));
      } catch (err) {
        // JSON nested thousands deep parses but overflows the stack when converted or written: the
        // line still lands, whole, as an unknown part with the reason, and the source goes on.
        if (!(err instanceof RangeError)) throw err;
        add(w, { ord, off, sha, bytes: line.length, parts: [unknownPart(line, `the record could not be converted or written: ${err.message}`)] });
      }
    }
    const { digest, records, fileDigest } = w.close();
    // The index learns the file from what was written, without reading it back.
    fresh?.landed({
      seq,
      path,
      kind: h.kind,
      stream: h.stream,
      batch: h.batch,
      digest: fileDigest,
      records,
      changes,
      src: h.kind === 'transcript' ? h.src : undefined,
    });
    // In a batch the file is synced and installed with the others, before any cursor moves.
    if (batch) {
      const r = file.release();
      batch.stageFile(r.fd, r.tmp, r.final);
    } else file.commit();
    return { seq, path, records, digest };
  } catch (err) {
    fresh?.abandoned();
    file.abort();
    throw err;
  }
}
