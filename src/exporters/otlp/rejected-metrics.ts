/**
 * The exporter's own count of what receivers rejected in requests they took (OTLP partial
 * success): `aszcol_exporter_rejected_<signal>_total{exporter}` in items (log records, data
 * points) and `aszcol_exporter_rejected_files_total{exporter, signal}` in files, the number
 * `aszcol verify` lists from push.state. One pair per service registry, shared by its exporters.
 */
import { Counter, type Registry } from 'prom-client';
import type { ExportSignal } from './transport.js';

const ITEM_METRIC: Record<ExportSignal, { name: string; help: string }> = {
  logs: {
    name: 'aszcol_exporter_rejected_log_records_total',
    help: 'Log records a receiver rejected in requests it took (partial success); never sent again.',
  },
  metrics: {
    name: 'aszcol_exporter_rejected_metric_points_total',
    help: 'Data points a receiver rejected in requests it took (partial success); never sent again.',
  },
};
const FILES_METRIC = 'aszcol_exporter_rejected_files_total';

function counter<L extends string>(registry: Registry, name: string, help: string, labelNames: L[]): Counter<L> {
  const existing = registry.getSingleMetric(name);
  if (existing) return existing as Counter<L>;
  return new Counter({ name, help, labelNames, registers: [registry] });
}

/** The counting function the pusher calls, for one exporter; its series start at 0 so a dashboard sees them before the first rejection. */
export function rejectedCounter(registry: Registry, exporter: string): (signal: ExportSignal, items: number, files: number) => void {
  const files = counter(registry, FILES_METRIC, 'Files recorded as rejected in push.state after a partial success, by signal.', ['exporter', 'signal']);
  const items = {
    logs: counter(registry, ITEM_METRIC.logs.name, ITEM_METRIC.logs.help, ['exporter']),
    metrics: counter(registry, ITEM_METRIC.metrics.name, ITEM_METRIC.metrics.help, ['exporter']),
  };
  for (const s of ['logs', 'metrics'] as const) {
    items[s].inc({ exporter }, 0);
    files.inc({ exporter, signal: s }, 0);
  }
  return (signal, n, f) => {
    items[signal].inc({ exporter }, n);
    files.inc({ exporter, signal }, f);
  };
}
