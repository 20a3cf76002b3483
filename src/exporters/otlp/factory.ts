import type { ComponentFactory } from '../../component/component.js';
import { validateOtlpExporterConfig, type OtlpExporterConfig } from './config.js';

/** The `otlp` exporter (src/exporters/otlp/): the send stage of every pass. */
export const otlpExporterFactory: ComponentFactory<OtlpExporterConfig> | undefined = {
  kind: 'exporter',
  type: 'otlp',
  // `otlp:` with nothing under it names no endpoint, which is refused; this is what it would mean otherwise.
  defaultConfig: () => validateOtlpExporterConfig({ endpoint: '127.0.0.1:4317' }, 'exporters.otlp'),
  validate: (raw, path) => validateOtlpExporterConfig(raw, path),
  // Loaded on use, so commands that only read the configuration do not load @grpc/grpc-js.
  create: async (cfg, settings) => new (await import('./component.js')).OtlpExporterComponent(cfg, settings),
};
