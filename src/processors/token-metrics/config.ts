/**
 * The `token_metrics` processor's configuration.
 *
 * ```yaml
 * processors:
 *   token_metrics:
 *     lookback: 24h     # how far back the first derivation over a root reaches: 24h, 7d; 0 or none: everything
 *     grace: 30s        # under the service, how long a file that ends mid-call waits for the next file of its stream
 * ```
 */
import { ConfigError } from '../../util/errors.js';
import { duration, join, mapping } from '../../config/reader.js';
import { parseDurationOrDays } from '../../util/units.js';

export interface TokenMetricsConfig {
  /** 0: no bound. */
  lookbackMs: number;
  graceMs: number;
}

export const DEFAULT_LOOKBACK_MS = 24 * 3_600_000;
export const DEFAULT_GRACE_MS = 30_000;

/** `24h`, `90m`, `7d` (days), `0` or `none` (no bound). */
export function parseLookback(v: unknown, path: string): number {
  if (v === undefined || v === null) return DEFAULT_LOOKBACK_MS;
  if (v === 0 || v === '0' || v === 'none') return 0;
  try {
    return parseDurationOrDays(v);
  } catch {
    throw new ConfigError(path, `must be a duration such as 24h or 7d, or 0 / none for no bound; got ${JSON.stringify(v)}`);
  }
}

export function validateTokenMetricsConfig(raw: unknown, path: string): TokenMetricsConfig {
  const m = mapping(raw, path, ['lookback', 'grace']);
  return {
    lookbackMs: parseLookback(m.lookback, join(path, 'lookback')),
    graceMs: duration(m.grace, join(path, 'grace'), DEFAULT_GRACE_MS, { maxMs: 3_600_000 }),
  };
}
