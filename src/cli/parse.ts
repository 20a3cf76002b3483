import type { AszConfig } from '../service/config.js';
import { parseBytes } from '../util/units.js';
import { configFor, EXIT, type Io } from './context.js';
import { parseRoot } from './parse-root.js';
import { roundBudget } from './round-budget.js';

/** How the parse-only entry watches a long-way run, to answer the next one quickly (parse-main.ts, config-answers.ts). */
export interface ParseWatch {
  /** The environment the configuration is read with (one that records what it was asked). */
  env: NodeJS.ProcessEnv;
  /** Called once the configuration loaded and its round budget read without a problem. */
  configured: (cfg: AszConfig, maxRoundBytes: number) => void;
}

export async function runParse(
  session: string | undefined,
  opts: { config?: string; json?: boolean; maxRoundBytes?: string },
  io: Io,
  watch?: ParseWatch,
): Promise<number> {
  const cfg = configFor(opts.config, io, watch?.env);
  if (!cfg) return EXIT.config;
  let maxRoundBytes: number;
  try {
    maxRoundBytes = opts.maxRoundBytes !== undefined ? parseBytes(opts.maxRoundBytes) : roundBudget(cfg);
  } catch (err) {
    io.err(`aszcol parse: max_round_bytes: ${(err as Error).message}`);
    return EXIT.config;
  }
  if (opts.maxRoundBytes === undefined) watch?.configured(cfg, maxRoundBytes);
  return parseRoot({ storageRoot: cfg.storageRoot, source: cfg.source, maxRoundBytes, ...(session ? { session } : {}), json: opts.json }, io);
}
