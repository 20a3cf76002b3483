import { join } from 'node:path';
import { readRecord } from '../formats/session-data/decode.js';
import { landedDirs, listDir, parseLandedName } from '../storage/layout.js';
import { loadIndex, type IndexEntry } from '../storage/index.js';
import { configFor, EXIT, type Io } from './context.js';

export function findLanded(root: string, session: string, seq: number): string | undefined {
  for (const { dir } of landedDirs(root, session)) {
    for (const name of listDir(dir)) if (parseLandedName(name)?.seq === seq) return join(dir, name);
  }
  return undefined;
}

export interface ShowOptions {
  config?: string;
  session?: string;
  pretty?: boolean;
  /** A record's own id (a transcript line's uuid). */
  record?: string;
  /** A tool-use id: the record that calls it, and every record carrying its result. */
  toolUse?: string;
}

/** Where a record sits, found through the session's index: by position, by its id, or by a tool-use id. */
function locate(root: string, session: string, o: ShowOptions, seqText?: string, rowText?: string): { seq: number; row: number; role?: string }[] | string {
  if (o.record === undefined && o.toolUse === undefined) {
    const seq = Number(seqText),
      row = Number(rowText);
    if (!Number.isInteger(seq) || seq < 1 || !Number.isInteger(row) || row < 1)
      return 'SEQ and ROW are positive integers (ROW counts records from 1 after the header), or name --record ID or --tool-use ID';
    return [{ seq, row }];
  }
  if (seqText !== undefined) return 'give SEQ ROW, --record or --tool-use, one of them';
  if (o.record !== undefined && o.toolUse !== undefined) return 'give --record or --tool-use, not both';
  const index = loadIndex(root, session);
  if (!index) return `session ${session} has no index yet (run aszcol parse, or aszcol index ${session} --rebuild)`;
  const at = (e: IndexEntry, role?: string) => ({ seq: e.seq, row: e.row, ...(role ? { role } : {}) });
  if (o.record !== undefined) {
    const hits = index.entries.filter((e) => e.id === o.record).map((e) => at(e));
    return hits.length ? hits : `session ${session} has no record with id ${o.record}`;
  }
  const hits = [
    ...index.entries.filter((e) => e.parts.some((p) => p.k === 'call' && p.id === o.toolUse)).map((e) => at(e, 'call')),
    ...index.entries.filter((e) => e.parts.some((p) => p.k === 'result' && p.of === o.toolUse)).map((e) => at(e, 'result')),
  ];
  return hits.length ? hits : `session ${session} has no record calling or answering tool use ${o.toolUse}`;
}

export function runShow(seqText: string | undefined, rowText: string | undefined, opts: ShowOptions, io: Io): number {
  const cfg = configFor(opts.config, io);
  if (!cfg) return EXIT.config;
  if (!opts.session) {
    io.err('aszcol show: --session is required');
    return EXIT.config;
  }
  const where = locate(cfg.storageRoot, opts.session, opts, seqText, rowText);
  if (typeof where === 'string') {
    io.err(`aszcol show: ${where}`);
    return /^SEQ and ROW|^give /.test(where) ? EXIT.config : EXIT.problem;
  }
  for (const w of where) {
    const path = findLanded(cfg.storageRoot, opts.session, w.seq);
    if (!path) {
      io.err(`aszcol show: session ${opts.session} has no landed file with sequence ${w.seq}`);
      return EXIT.problem;
    }
    try {
      const { header, record } = readRecord(path, w.row);
      io.out(JSON.stringify({ ...(w.role ? { role: w.role } : {}), file: path, seq: w.seq, row: w.row, header, record }, null, opts.pretty ? 2 : undefined));
    } catch (err) {
      io.err(`aszcol show: ${(err as Error).message}`);
      return EXIT.problem;
    }
  }
  return EXIT.ok;
}
