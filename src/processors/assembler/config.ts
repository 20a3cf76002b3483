import { ConfigError } from '../../util/errors.js';
import { parseBytes } from '../../util/units.js';

export interface AssemblerConfig {
  /** A round over this many bytes is assembled again over fewer landed files. */
  maxRoundBytes: number;
}

export const DEFAULT_MAX_ROUND_BYTES = 2 * 1024 * 1024;

export function validateAssemblerConfig(raw: unknown, path: string): AssemblerConfig {
  if (raw === undefined || raw === null) return { maxRoundBytes: DEFAULT_MAX_ROUND_BYTES };
  if (typeof raw !== 'object' || Array.isArray(raw)) throw new ConfigError(path, 'must be a mapping with max_round_bytes');
  const o = raw as Record<string, unknown>;
  for (const k of Object.keys(o)) if (k !== 'max_round_bytes') throw new ConfigError(`${path}.${k}`, 'unknown key (allowed: max_round_bytes)');
  if (o.max_round_bytes === undefined) return { maxRoundBytes: DEFAULT_MAX_ROUND_BYTES };
  try {
    const n = parseBytes(o.max_round_bytes);
    if (n < 1) throw new Error('must be at least 1 byte');
    return { maxRoundBytes: n };
  } catch (err) {
    throw new ConfigError(`${path}.max_round_bytes`, (err as Error).message);
  }
}
