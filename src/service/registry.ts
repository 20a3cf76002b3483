import type { Registry } from '../component/known-types.js';
import { claudeCodeLocalFactory } from '../receivers/claude-code-local/factory.js';
import { claudeCodeOtlpFactory } from '../receivers/claude-code-otlp/factory.js';
import { assemblerFactory } from '../processors/assembler/factory.js';
import { tokenMetricsFactory } from '../processors/token-metrics/factory.js';
import { otlpExporterFactory } from '../exporters/otlp/factory.js';
import { prometheusExporterFactory } from '../exporters/prometheus/factory.js';
import { viewFactory } from '../extensions/view/factory.js';
import { healthCheckFactory } from '../extensions/health-check/factory.js';

/** Every component type this build has: handed to configuration loading and to the service. */
export const REGISTRY: Registry = [
  { kind: 'receiver', type: 'claude_code_local', pipelines: ['sessions', 'metrics'], factory: claudeCodeLocalFactory },
  { kind: 'receiver', type: 'claude_code_otlp', pipelines: ['sessions', 'metrics'], factory: claudeCodeOtlpFactory },
  { kind: 'processor', type: 'assembler', pipelines: ['sessions'], factory: assemblerFactory },
  { kind: 'processor', type: 'token_metrics', pipelines: ['metrics'], factory: tokenMetricsFactory },
  { kind: 'exporter', type: 'otlp', pipelines: ['sessions', 'metrics'], factory: otlpExporterFactory },
  { kind: 'exporter', type: 'prometheus', pipelines: ['metrics'], factory: prometheusExporterFactory },
  { kind: 'extension', type: 'view', pipelines: [], factory: viewFactory },
  { kind: 'extension', type: 'health_check', pipelines: [], factory: healthCheckFactory },
];
