import { AszError } from './errors.js';

const BYTE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kb: 1e3,
  mb: 1e6,
  gb: 1e9,
  kib: 1024,
  mib: 1024 ** 2,
  gib: 1024 ** 3,
  k: 1024,
  m: 1024 ** 2,
  g: 1024 ** 3,
};

/** "2MiB", "512KiB", "1.5 MB", 1048576 → bytes. */
export function parseBytes(value: unknown): number {
  if (typeof value === 'number' && Number.isInteger(value) && value >= 0) return value;
  if (typeof value !== 'string') throw new AszError(`expected a byte size such as "2MiB", got ${JSON.stringify(value)}`);
  const m = /^\s*(\d+(?:\.\d+)?)\s*([a-zA-Z]*)\s*$/.exec(value);
  const unit = m ? BYTE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new AszError(`"${value}" is not a byte size; use a number with B, KB, MB, GB, KiB, MiB or GiB`);
  return Math.round(Number(m[1]) * unit);
}

const DURATION_UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** "5s", "1m30s", "250ms", "24h" → milliseconds (Go-style durations, as the collector's users write them). */
export function parseDuration(value: unknown): number {
  if (typeof value === 'number' && value >= 0) return value;
  if (typeof value !== 'string') throw new AszError(`expected a duration such as "5s", got ${JSON.stringify(value)}`);
  const re = /(\d+(?:\.\d+)?)(ms|s|m|h)/g;
  let total = 0;
  let consumed = 0;
  for (const m of value.trim().matchAll(re)) {
    if (m.index !== consumed) break;
    total += Number(m[1]) * DURATION_UNITS[m[2]!]!;
    consumed += m[0].length;
  }
  if (consumed === 0 || consumed !== value.trim().length) {
    throw new AszError(`"${value}" is not a duration; use units ms, s, m, h such as "5s" or "1m30s"`);
  }
  return total;
}

export function formatDuration(ms: number): string {
  if (ms % 3_600_000 === 0 && ms > 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0 && ms > 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

/** A duration as `parseDuration` reads it, or whole days (`7d`), for settings measured in days. */
export function parseDurationOrDays(value: unknown): number {
  if (typeof value === 'string') {
    const d = /^\s*(\d+)d\s*$/.exec(value);
    if (d) return Number(d[1]) * 86_400_000;
  }
  return parseDuration(value);
}
