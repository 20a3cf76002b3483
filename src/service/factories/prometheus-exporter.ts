import type { ComponentFactory } from '../component.js';
import { validatePrometheusExporterConfig, type PrometheusExporterConfig } from '../../exporters/prometheus/config.js';

/** The `prometheus` exporter (src/exporters/prometheus/): the derived counters in Prometheus text format. */
export const prometheusExporterFactory: ComponentFactory<PrometheusExporterConfig> | undefined = {
  kind: 'exporter',
  type: 'prometheus',
  defaultConfig: () => validatePrometheusExporterConfig(undefined, 'exporters.prometheus'),
  validate: (raw, path) => validatePrometheusExporterConfig(raw, path),
  create: async (cfg, settings) => new (await import('../../exporters/prometheus/exporter.js')).PrometheusExporter(cfg, settings),
};
