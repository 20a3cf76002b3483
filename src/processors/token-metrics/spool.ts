/**
 * Derived metrics in the `_metrics/` spool: one write-once request per landed transcript file
 * with points, named after that file (its collection stamp and sequence) and its session, so a
 * derivation cut short and run again arrives at the same name. `-derived.pb` sets them apart from
 * what the receiver spools (`-otlp.pb`); an exporter sends one kind or the other, never both.
 */
export const DERIVED_SPOOL_NAME = /^metrics-(\d{8}T\d{6}\.\d{9}Z)-(\d{6,})-(.+)-derived\.pb$/;

export function derivedSpoolName(stamp: string, seq: number, session: string): string {
  return `metrics-${stamp}-${String(seq).padStart(6, '0')}-${session}-derived.pb`;
}
