/**
 * Single records of a session's landed files, read by position without parsing the rest: a
 * report that needs a few rows of a file (the usage of each call's last fragment) finds the line
 * breaks and parses only those lines. Digests are not checked here; `aszcol verify` and the view do.
 */
import { readFileSync } from 'node:fs';
import type { SdRecord } from '../formats/session-data/types.js';
import { listLanded, type LandedFileRef } from './landed-files.js';

interface OpenFile {
  bytes: Buffer;
  /** Byte offset where each line starts; line 0 is the header. */
  starts: number[];
}

export class LandedRows {
  private readonly files = new Map<number, LandedFileRef>();
  private readonly open = new Map<number, OpenFile | null>();

  constructor(root: string, session: string) {
    for (const f of listLanded(root, session)) if (!this.files.has(f.seq)) this.files.set(f.seq, f);
  }

  /** The files landed for the session, by sequence. */
  get landed(): LandedFileRef[] {
    return [...this.files.values()];
  }

  private file(seq: number): OpenFile | undefined {
    if (this.open.has(seq)) return this.open.get(seq) ?? undefined;
    const ref = this.files.get(seq);
    let opened: OpenFile | null = null;
    if (ref) {
      try {
        const bytes = readFileSync(ref.path);
        const starts = [0];
        for (let i = bytes.indexOf(10); i !== -1 && i < bytes.length - 1; i = bytes.indexOf(10, i + 1)) starts.push(i + 1);
        opened = { bytes, starts };
      } catch {
        opened = null; // unreadable: every row of it is missing, and the caller says which
      }
    }
    this.open.set(seq, opened);
    return opened ?? undefined;
  }

  private line(seq: number, index: number): unknown {
    const f = this.file(seq);
    if (!f || index >= f.starts.length) return undefined;
    const end = index + 1 < f.starts.length ? f.starts[index + 1]! - 1 : f.bytes.length - (f.bytes[f.bytes.length - 1] === 10 ? 1 : 0);
    try {
      return JSON.parse(f.bytes.toString('utf8', f.starts[index], end));
    } catch {
      return undefined;
    }
  }

  /** Row `row` (1-based, after the header) of the file with sequence `seq`. */
  record(seq: number, row: number): SdRecord | undefined {
    const r = this.line(seq, row) as SdRecord | undefined;
    return r && typeof r === 'object' && typeof r.ord === 'number' ? r : undefined;
  }

  /** Drops the bytes read so far, so a report over many sessions holds one session's files at a time. */
  release(): void {
    this.open.clear();
  }
}
