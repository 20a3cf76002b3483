/**
 * Which spooled metrics an exporter in a metrics pipeline sends. The spool can hold both kinds
 * (the receiver spools every metrics request it takes), but one root sends one source, since
 * both count the same tokens: the derived token usage when a `token_metrics` processor runs,
 * else what the `claude_code_otlp` receiver spooled when that receiver feeds the pipeline.
 */
import type { AszConfig } from '../../config/config.js';
import type { MetricsSource } from './plan.js';

const typeOf = (id: string) => id.split('/')[0];

/** From the configuration: the metrics pipelines this exporter is in. */
export function metricsSourceOf(cfg: AszConfig, exporterId: string): MetricsSource | undefined {
  const type = (kind: string, id: string) => cfg.components.find((c) => c.kind === kind && c.id === id)?.type;
  let received = false;
  for (const p of cfg.service.pipelines) {
    if (p.type !== 'metrics' || !p.exporters.includes(exporterId)) continue;
    if (p.processors.some((id) => type('processor', id) === 'token_metrics')) return 'derived';
    if (p.receivers.some((id) => type('receiver', id) === 'claude_code_otlp')) received = true;
  }
  return received ? 'received' : undefined;
}

/**
 * Inside the service, where a component sees which components run but not how the pipelines are
 * composed: derived when a token_metrics processor runs, else received when the receiver runs.
 */
export function metricsSourceOfRunning(components: { id: string; kind: string }[]): MetricsSource | undefined {
  if (components.some((c) => c.kind === 'processor' && typeOf(c.id) === 'token_metrics')) return 'derived';
  if (components.some((c) => c.kind === 'receiver' && typeOf(c.id) === 'claude_code_otlp')) return 'received';
  return undefined;
}
