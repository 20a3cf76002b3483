import type { ComponentFactory } from '../../component/component.js';
import { validatePrometheusExporterConfig, type PrometheusExporterConfig } from './config.js';

/** The `prometheus` exporter (src/exporters/prometheus/): the derived counters in Prometheus text format. */
export const prometheusExporterFactory: ComponentFactory<PrometheusExporterConfig> | undefined = {
  kind: 'exporter',
  type: 'prometheus',
  defaultConfig: () => validatePrometheusExporterConfig(undefined, 'exporters.prometheus'),
  validate: (raw, path) => validatePrometheusExporterConfig(raw, path),
  create: async (cfg, settings) => new (await import('./exporter.js')).PrometheusExporter(cfg, settings),
};
