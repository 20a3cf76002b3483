import type { AszConfig } from '../service/config.js';
import { parseBytes } from '../util/units.js';

const DEFAULT_MAX_ROUND_BYTES = 2 * 1024 * 1024;

/** The round budget a configuration sets (`processors.assembler.max_round_bytes`), else the default; a value that does not read throws. */
export function roundBudget(cfg: AszConfig): number {
  const configured = (cfg.raw.processors as Record<string, { max_round_bytes?: unknown } | null> | undefined)?.assembler?.max_round_bytes;
  return configured === undefined ? DEFAULT_MAX_ROUND_BYTES : parseBytes(configured);
}
