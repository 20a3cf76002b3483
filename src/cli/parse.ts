import type { ParseResult } from '../processors/assembler/parse.js';
import { parseAll, parseOne, type SessionParse } from '../processors/assembler/parse-all.js';
import { landedSessions } from '../storage/landed-files.js';
import { parseBytes } from '../util/units.js';
import type { AszConfig } from '../service/config.js';
import { configFor, EXIT, type Io } from './context.js';
import { noLandedSession, printParse } from './parse-report.js';

const DEFAULT_MAX_ROUND_BYTES = 2 * 1024 * 1024;

/** How the parse-only entry watches a long-way run, to answer the next one quickly (parse-main.ts, config-answers.ts). */
export interface ParseWatch {
  /** The environment the configuration is read with (one that records what it was asked). */
  env: NodeJS.ProcessEnv;
  /** Called once the configuration loaded and its round budget read without a problem. */
  configured: (cfg: AszConfig) => void;
}

export async function runParse(
  session: string | undefined,
  opts: { config?: string; json?: boolean; maxRoundBytes?: string },
  io: Io,
  watch?: ParseWatch,
): Promise<number> {
  const cfg = configFor(opts.config, io, watch?.env);
  if (!cfg) return EXIT.config;
  let maxRoundBytes = DEFAULT_MAX_ROUND_BYTES;
  const configured = (cfg.raw.processors as Record<string, { max_round_bytes?: unknown } | null> | undefined)?.assembler?.max_round_bytes;
  try {
    if (opts.maxRoundBytes !== undefined) maxRoundBytes = parseBytes(opts.maxRoundBytes);
    else if (configured !== undefined) maxRoundBytes = parseBytes(configured);
  } catch (err) {
    io.err(`aszcol parse: max_round_bytes: ${(err as Error).message}`);
    return EXIT.config;
  }
  if (opts.maxRoundBytes === undefined) watch?.configured(cfg);
  const sessions = session ? [session] : landedSessions(cfg.storageRoot);
  const results: ParseResult[] = [];
  let failed = 0;
  const report = (p: SessionParse) => {
    if ('error' in p) {
      failed++;
      io.err(`error: ${p.session}: ${p.error.message}`);
      return;
    }
    const r = p.result;
    if (r.status === 'empty') return;
    results.push(r);
    if (r.status === 'busy') {
      io.err(`error: ${p.session}: another parser holds this conversation's chain`);
      failed++;
      return;
    }
  };
  // One named session the long way; the whole root through the settled stamps, which only a whole-root parse keeps.
  if (session) {
    try {
      report({ session, result: await parseOne(cfg.storageRoot, session, maxRoundBytes) });
    } catch (err) {
      report({ session, error: err as Error });
    }
  } else await parseAll({ root: cfg.storageRoot, sessions, maxRoundBytes, usageCache: true }, report); // a later `usage` reads, not folds
  if (sessions.length === 0) io.err(noLandedSession(cfg.storageRoot, cfg.source));
  printParse(results, opts.json, io);
  return failed ? EXIT.problem : EXIT.ok;
}
