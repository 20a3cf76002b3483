/**
 * What an OTLP receiver tells a person about its metrics, live: whether it keeps them, which
 * exporters consume its spool, the bound it applies when none does, and what it dropped. The
 * service gathers these into its description (`/api/status`); a component offers them by having
 * `metricsSpoolFacts()`.
 */
export interface MetricsSpoolFacts {
  receiver: string;
  /** false: no metrics pipeline includes the receiver, so metrics are answered and counted, not kept. */
  kept: boolean;
  /** Exporters that send or read the received spool files. */
  consumers: string[];
  /** When kept with no consumer: the bound that applies (`unconsumed_spool`), in the configuration's units. */
  retention?: { max_age_ms: number; max_bytes: number };
  /** Points answered but not kept (no metrics pipeline). */
  unkept_metric_points: number;
  /** Spool files (and their bytes) removed by the bound because nothing consumed them. */
  dropped_files: number;
  dropped_bytes: number;
}

export interface MetricsSpoolFactsSource {
  metricsSpoolFacts(): MetricsSpoolFacts;
}

export function asMetricsSpoolFactsSource(c: unknown): MetricsSpoolFactsSource | undefined {
  const x = c as Partial<MetricsSpoolFactsSource> | undefined;
  return x && typeof x.metricsSpoolFacts === 'function' ? (x as MetricsSpoolFactsSource) : undefined;
}
