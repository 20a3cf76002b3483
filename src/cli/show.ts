import { join } from 'node:path';
import { readRecord } from '../formats/session-data/decode.js';
import { landedDirs, listDir, parseLandedName } from '../storage/layout.js';
import { configFor, EXIT, type Io } from './context.js';

export function findLanded(root: string, session: string, seq: number): string | undefined {
  for (const { dir } of landedDirs(root, session)) {
    for (const name of listDir(dir)) if (parseLandedName(name)?.seq === seq) return join(dir, name);
  }
  return undefined;
}

export function runShow(seqText: string, rowText: string, opts: { config?: string; session?: string; pretty?: boolean }, io: Io): number {
  const cfg = configFor(opts.config, io);
  if (!cfg) return EXIT.config;
  const seq = Number(seqText),
    row = Number(rowText);
  if (!opts.session) {
    io.err('aszcol show: --session is required');
    return EXIT.config;
  }
  if (!Number.isInteger(seq) || seq < 1 || !Number.isInteger(row) || row < 1) {
    io.err('aszcol show: SEQ and ROW are positive integers (ROW counts records from 1 after the header)');
    return EXIT.config;
  }
  const path = findLanded(cfg.storageRoot, opts.session, seq);
  if (!path) {
    io.err(`aszcol show: session ${opts.session} has no landed file with sequence ${seq}`);
    return EXIT.problem;
  }
  try {
    const { header, record } = readRecord(path, row);
    io.out(JSON.stringify({ file: path, header, record }, null, opts.pretty ? 2 : undefined));
    return EXIT.ok;
  } catch (err) {
    io.err(`aszcol show: ${(err as Error).message}`);
    return EXIT.problem;
  }
}
