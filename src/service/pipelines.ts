/**
 * How the configured pipelines compose, in one place: the service uses it to tell each component
 * what its pipelines carry, and the one-shot commands (`collect`, `sources`, `push`) use it to
 * act as the service would. Components never work this out for themselves.
 */
import type { MetricsSource } from '../storage/metrics-spool.js';
import { validateLocalReceiverConfig, type LocalReceiverConfig } from '../receivers/claude-code-local/config.js';
import type { TokenMetricsConfig } from '../processors/token-metrics/config.js';
import type { AszConfig, ComponentConfig, PipelineConfig } from './config.js';

const pipelineType = (id: string) => id.split('/')[0];

function typeOf(cfg: AszConfig, kind: string, id: string): string | undefined {
  return cfg.components.find((c) => c.kind === kind && c.id === id)?.type;
}

/** The pipelines a component is in (extensions: none). */
export function pipelinesOf(cfg: AszConfig, c: Pick<ComponentConfig, 'kind' | 'id'>): PipelineConfig[] {
  if (c.kind === 'extension') return [];
  return cfg.service.pipelines.filter((p) => p[`${c.kind as 'receiver'}s`].includes(c.id));
}

const derives = (cfg: AszConfig, p: PipelineConfig) => p.processors.some((id) => typeOf(cfg, 'processor', id) === 'token_metrics');
const receives = (cfg: AszConfig, p: PipelineConfig) => p.receivers.some((id) => typeOf(cfg, 'receiver', id) === 'claude_code_otlp');

/**
 * Which spooled metrics an exporter in a metrics pipeline sends. Token usage has one source per
 * root, since both count the same tokens: derived when a `token_metrics` processor feeds the
 * exporter, else what `claude_code_otlp` spooled when that receiver does. A pipeline holding both
 * sends `both`: the runtime's token usage as received, and the MCP metrics the processor derives
 * (Claude Code sends none), never a derived copy of its tokens. Undefined when the exporter is in
 * no metrics pipeline.
 */
export function metricsSourceOf(cfg: AszConfig, exporterId: string): MetricsSource | undefined {
  let received = false;
  for (const p of cfg.service.pipelines) {
    if (p.type !== 'metrics' || !p.exporters.includes(exporterId)) continue;
    if (derives(cfg, p)) return receives(cfg, p) ? 'both' : 'derived';
    if (receives(cfg, p)) received = true;
  }
  return received ? 'received' : undefined;
}

/** A `token_metrics` processor's mode: `both` (MCP metrics only) when a metrics pipeline holds it with claude_code_otlp. */
export function tokenMetricsMode(cfg: AszConfig, processorId: string): 'derived' | 'both' {
  const shared = cfg.service.pipelines.some((p) => p.type === 'metrics' && p.processors.includes(processorId) && receives(cfg, p));
  return shared ? 'both' : 'derived';
}

/** Whether an exporter carries landed files and rounds: it is in a sessions pipeline, or (named on its own by `push --exporter`) in none. */
export function carriesSessions(cfg: AszConfig, exporterId: string): boolean {
  const ps = cfg.service.pipelines.filter((p) => p.exporters.includes(exporterId));
  return ps.length === 0 || ps.some((p) => pipelineType(p.id) === 'sessions');
}

/** The `token_metrics` processors whose derived usage reaches this exporter. */
export function tokenMetricsFeeding(cfg: AszConfig, exporterId: string): TokenMetricsConfig[] {
  const source = metricsSourceOf(cfg, exporterId);
  if (source !== 'derived' && source !== 'both') return [];
  const ids = new Set(cfg.service.pipelines.filter((p) => p.type === 'metrics' && p.exporters.includes(exporterId)).flatMap((p) => p.processors));
  return cfg.components.filter((c) => c.kind === 'processor' && c.type === 'token_metrics' && ids.has(c.id)).map((c) => c.config as TokenMetricsConfig);
}

/**
 * The `claude_code_local` receiver's settings for the one-shot commands (`collect`, `sources`):
 * the instance named `claude_code_local`, else the first `claude_code_local/…`, else the defaults.
 */
export function localReceiverConfig(cfg: AszConfig, env: NodeJS.ProcessEnv = process.env): LocalReceiverConfig {
  const locals = cfg.components.filter((c) => c.kind === 'receiver' && c.type === 'claude_code_local');
  const chosen = locals.find((c) => c.id === 'claude_code_local') ?? locals[0];
  return (chosen?.config as LocalReceiverConfig | undefined) ?? validateLocalReceiverConfig(undefined, 'receivers.claude_code_local', env);
}

/**
 * The exporters that take what `claude_code_otlp` spools (they send or read received metrics);
 * none means the spool has no consumer and the receiver bounds it itself (`unconsumed_spool`).
 */
export function receivedSpoolConsumers(cfg: AszConfig): string[] {
  return cfg.components
    .filter((c) => c.kind === 'exporter' && (c.config as { metrics?: unknown } | undefined)?.metrics !== false)
    .filter((c) => {
      const source = metricsSourceOf(cfg, c.id);
      return source === 'received' || source === 'both';
    })
    .map((c) => c.id);
}
