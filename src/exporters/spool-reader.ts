/**
 * A component that reads the `_metrics/` spool for itself (the `prometheus` exporter adds each
 * file's points to its counters). It is a consumer of the spool like an `otlp` exporter, but it
 * keeps no push.state: it confirms a file by having read it, and a spool file is removed only once
 * every running reader has.
 */
import type { MetricsSource } from './otlp/plan.js';

export interface SpoolReader {
  /** Which spool files it reads now (undefined: none). */
  spoolSource(): MetricsSource | undefined;
  /** Whether it has read (and counted) the spool file of this name. */
  hasRead(name: string): boolean;
}

export function asSpoolReader(c: unknown): SpoolReader | undefined {
  const x = c as Partial<SpoolReader> | undefined;
  return x && typeof x.spoolSource === 'function' && typeof x.hasRead === 'function' ? (x as SpoolReader) : undefined;
}
