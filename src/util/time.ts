/**
 * Time stamps with nanosecond digits. JavaScript clocks give milliseconds plus a
 * monotonic sub-millisecond fraction; we combine them so stamps from one process never
 * go backwards and keep the nine-digit form the storage root names files with.
 */
const originWallNs = BigInt(Date.now()) * 1_000_000n;
const originHr = process.hrtime.bigint();

export function nowNs(): bigint {
  return originWallNs + (process.hrtime.bigint() - originHr);
}

function parts(ns: bigint): { iso: string; frac: string } {
  const ms = Number(ns / 1_000_000n);
  const iso = new Date(ms).toISOString(); // 2026-08-31T09:12:04.481Z
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0');
  return { iso, frac };
}

/** `20260831T091204.481523000Z`: sorts as text, no `:` (Windows). */
export function compactStamp(ns: bigint): string {
  const { iso, frac } = parts(ns);
  return `${iso.slice(0, 4)}${iso.slice(5, 7)}${iso.slice(8, 10)}T${iso.slice(11, 13)}${iso.slice(14, 16)}${iso.slice(17, 19)}.${frac}Z`;
}

/** RFC 3339 with nanoseconds, trailing zeros trimmed: `2026-09-01T12:56:03.1818Z`. */
export function rfc3339(ns: bigint): string {
  const { iso, frac } = parts(ns);
  const trimmed = frac.replace(/0+$/, '');
  return `${iso.slice(0, 19)}${trimmed ? '.' + trimmed : ''}Z`;
}
