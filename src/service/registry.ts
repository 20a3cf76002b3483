import type { ComponentFactory, ComponentKind, PipelineType } from './component.js';
import { claudeCodeLocalFactory } from './factories/claude-code-local.js';
import { claudeCodeOtlpFactory } from './factories/claude-code-otlp.js';
import { assemblerFactory } from './factories/assembler.js';
import { tokenMetricsFactory } from './factories/token-metrics.js';
import { otlpExporterFactory } from './factories/otlp-exporter.js';
import { prometheusExporterFactory } from './factories/prometheus-exporter.js';
import { viewFactory } from './factories/view.js';
import { healthCheckFactory } from './factories/health-check.js';

/**
 * Every component type aszcol knows, with the pipelines it may appear in. A type whose factory
 * is not registered (yet) is known by name, so a configuration naming it gets "not available in
 * this build" instead of "unknown type".
 */
export interface KnownType {
  kind: ComponentKind;
  type: string;
  /** Pipeline types it may appear in; empty for extensions. */
  pipelines: readonly PipelineType[];
  factory: ComponentFactory<any> | undefined;
}

export type Registry = readonly KnownType[];

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

export function findType(registry: Registry, kind: ComponentKind, type: string): KnownType | undefined {
  return registry.find((t) => t.kind === kind && t.type === type);
}

export function available(registry: Registry, kind: ComponentKind, type: string): boolean {
  return findType(registry, kind, type)?.factory !== undefined;
}
