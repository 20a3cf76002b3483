/**
 * `aszcol repack DEST`: a copy of the storage root rebuilt from its landed files, cut so no file
 * exceeds max_delta_bytes, with every session's index and chain assembled again in DEST. It needs
 * no source files, and DEST must be new or empty.
 */
import { resolve } from 'node:path';
import { parseSession } from '../processors/assembler/parse.js';
import { landedSessions } from '../storage/landed-files.js';
import { checkRepackDestination, repackSession, type RepackedSession } from '../storage/repack.js';
import { parseBytes } from '../util/units.js';
import { configFor, EXIT, type Io } from './context.js';

const DEFAULT_MAX_DELTA_BYTES = 2 * 1024 * 1024;
const DEFAULT_MAX_ROUND_BYTES = 2 * 1024 * 1024;

export function runRepack(destArg: string, opts: { config?: string; session?: string; maxDeltaBytes?: string; json?: boolean }, io: Io): number {
  const cfg = configFor(opts.config, io);
  if (!cfg) return EXIT.config;
  const dest = resolve(destArg);
  const receivers = cfg.raw.receivers as Record<string, { max_delta_bytes?: unknown } | null> | undefined;
  let maxBytes = DEFAULT_MAX_DELTA_BYTES;
  try {
    const configured = receivers?.claude_code_local?.max_delta_bytes;
    if (opts.maxDeltaBytes !== undefined) maxBytes = parseBytes(opts.maxDeltaBytes);
    else if (configured !== undefined) maxBytes = parseBytes(configured);
  } catch (err) {
    io.err(`aszcol repack: max_delta_bytes: ${(err as Error).message}`);
    return EXIT.config;
  }
  if (dest === resolve(cfg.storageRoot)) {
    io.err(`aszcol repack: ${dest} is the storage root itself; name a new or empty directory`);
    return EXIT.config;
  }
  const all = landedSessions(cfg.storageRoot);
  if (opts.session !== undefined && !all.includes(opts.session)) {
    io.err(`aszcol repack: ${opts.session}: no landed session of that id under ${cfg.storageRoot}`);
    return EXIT.problem;
  }
  const done: (RepackedSession & { rounds: number })[] = [];
  try {
    checkRepackDestination(dest);
    for (const session of opts.session !== undefined ? [opts.session] : all) {
      const r = repackSession(cfg.storageRoot, dest, session, maxBytes);
      const parsed = parseSession({ root: dest, session, maxRoundBytes: DEFAULT_MAX_ROUND_BYTES });
      done.push({ ...r, rounds: parsed.head });
    }
  } catch (err) {
    io.err(`aszcol repack: ${(err as Error).message}`);
    return EXIT.problem;
  }
  if (opts.json) io.out(JSON.stringify({ dest, max_delta_bytes: maxBytes, sessions: done }));
  else {
    io.out(`${'SESSION'.padEnd(38)}${'FILES IN'.padEnd(10)}${'FILES OUT'.padEnd(11)}${'RECORDS'.padEnd(9)}${'BYTES'.padEnd(10)}ROUNDS`);
    for (const d of done)
      io.out(
        `${d.session.padEnd(38)}${String(d.filesIn).padEnd(10)}${String(d.filesOut).padEnd(11)}${String(d.records).padEnd(9)}${String(d.bytes).padEnd(10)}${d.rounds}`,
      );
  }
  return EXIT.ok;
}
