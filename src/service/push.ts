/**
 * `aszcol push` outside the service: every `otlp` exporter a pipeline uses, each sending what its
 * pipelines carry. When a metrics pipeline derives token usage, the derivation runs first, so a
 * push sends metrics as of the landed files (one-shot: without waiting for a continuation). After
 * an exporter that sends metrics has pushed, the spool files every consumer the configuration
 * names has taken are removed (spool-retention.ts), even when only one exporter was asked for.
 */
import type { AszConfig, ComponentConfig } from './config.js';
import type { TokenMetricsConfig } from '../processors/token-metrics/config.js';
import { deriveTokenUsage, type DeriveReport } from '../processors/token-metrics/derive.js';
import { endpointKey, type OtlpExporterConfig } from '../exporters/otlp/config.js';
import { Pusher, type PushReport } from '../exporters/otlp/pusher.js';
import { SpoolRetention, type MetricsConsumer, type ReaderRef, type RetentionScope } from '../exporters/otlp/spool-retention.js';
import { carriesSessions, metricsSourceOf, tokenMetricsFeeding } from './pipelines.js';

export interface PushTarget {
  id: string;
  pusher: Pusher;
  /** token_metrics processors feeding this exporter's metrics pipelines. */
  derive: TokenMetricsConfig[];
  /** False when the exporter's pipeline receives the runtime's token usage: derive only the MCP metrics. */
  deriveTokens: boolean;
  /** When this exporter sends metrics: the root's spool retention, shared by every target. */
  retention?: { sweeper: SpoolRetention; scope: RetentionScope };
}

/** The spool's consumers the configuration names; no reader runs in this process, so none can be asked. */
export function scopeFromConfig(cfg: AszConfig): RetentionScope {
  const used = new Set(cfg.service.pipelines.flatMap((p) => p.exporters));
  const consumers: MetricsConsumer[] = [];
  const readers: ReaderRef[] = [];
  for (const c of cfg.components) {
    if (c.kind !== 'exporter' || !used.has(c.id)) continue;
    const source = metricsSourceOf(cfg, c.id);
    if (!source) continue;
    if (c.type === 'otlp') {
      const ec = c.config as OtlpExporterConfig;
      if (ec.metrics) consumers.push({ id: c.id, endpoint: endpointKey(ec), source, retention: ec.spoolRetention });
    } else if (c.type === 'prometheus') {
      readers.push({ id: c.id, source });
    }
  }
  return { consumers, readers };
}

/** The otlp exporters in the configuration's pipelines (or the one named), ready to push. */
export function pushTargets(cfg: AszConfig, only?: string): { targets: PushTarget[]; error?: string } {
  const used = new Set(cfg.service.pipelines.flatMap((p) => p.exporters));
  const otlp = cfg.components.filter((c): c is ComponentConfig => c.kind === 'exporter' && c.type === 'otlp');
  if (only && !otlp.some((c) => c.id === only)) {
    return { targets: [], error: `no otlp exporter "${only}" is configured; configured: ${otlp.map((c) => c.id).join(', ') || '(none)'}` };
  }
  const chosen = otlp.filter((c) => (only ? c.id === only : used.has(c.id)));
  if (chosen.length === 0) {
    return {
      targets: [],
      error: otlp.length
        ? `no pipeline uses an otlp exporter (configured: ${otlp.map((c) => c.id).join(', ')}); add one to service.pipelines`
        : 'no otlp exporter is configured: add one under exporters (such as otlp/oap with an endpoint) and to a pipeline',
    };
  }
  // Consumers come from the whole configuration: `--exporter` chooses who sends, not who must have taken a file.
  const retention = { sweeper: new SpoolRetention(cfg.storageRoot), scope: scopeFromConfig(cfg) };
  const targets = chosen.map((c) => {
    const ec = c.config as OtlpExporterConfig;
    const logs = ec.logs && carriesSessions(cfg, c.id);
    const metrics = ec.metrics ? metricsSourceOf(cfg, c.id) : undefined;
    const derive: TokenMetricsConfig[] = metrics === 'derived' || metrics === 'both' ? tokenMetricsFeeding(cfg, c.id) : [];
    return {
      id: c.id,
      derive,
      deriveTokens: metrics !== 'both',
      pusher: new Pusher({ root: cfg.storageRoot, cfg: ec, logs, metrics }),
      ...(metrics ? { retention } : {}),
    };
  });
  return { targets };
}

export interface TargetPass {
  id: string;
  derived?: DeriveReport;
  push: PushReport;
}

/** One pass for one target: derive (when its metrics are derived), then push. */
export async function pushPass(
  cfg: AszConfig,
  t: PushTarget,
  opts: { once: boolean; waiting?: Map<string, number>; signal?: AbortSignal },
): Promise<TargetPass> {
  let derived: DeriveReport | undefined;
  for (const d of t.derive) {
    derived = await deriveTokenUsage({
      root: cfg.storageRoot,
      lookbackMs: d.lookbackMs,
      graceMs: opts.once ? 0 : d.graceMs,
      waiting: opts.waiting,
      signal: opts.signal,
      tokens: t.deriveTokens,
    });
  }
  const push = await t.pusher.pass({ force: opts.once, signal: opts.signal });
  if (derived?.problems.length) push.problems.unshift(...derived.problems.map((p) => `token_metrics: ${p}`));
  if (t.retention && !opts.signal?.aborted) {
    push.spool = await t.retention.sweeper.sweep(t.retention.scope, opts.signal);
    push.problems.push(...push.spool.problems.map((p) => `spool: ${p}`));
  }
  return { id: t.id, derived, push };
}
