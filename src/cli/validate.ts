import type { AszConfig } from '../service/config.js';
import { configFor, EXIT, type Io } from './context.js';

function summary(cfg: AszConfig): Record<string, unknown> {
  return {
    config: cfg.source,
    storage_root: cfg.storageRoot,
    components: cfg.components.map((c) => c.path),
    pipelines: Object.fromEntries(cfg.service.pipelines.map((p) => [p.id, { receivers: p.receivers, processors: p.processors, exporters: p.exporters }])),
    extensions: cfg.service.extensions,
    unused: cfg.unused,
    telemetry_metrics: cfg.service.telemetry.metrics.address
      ? `${cfg.service.telemetry.metrics.address.host}:${cfg.service.telemetry.metrics.address.port}`
      : null,
    log_level: cfg.service.telemetry.logs.level,
    shutdown_timeout_ms: cfg.service.shutdownTimeoutMs,
  };
}

/** `aszcol validate [--config FILE]`: checks the configuration without starting anything. Exit 0 valid, 2 not. */
export function runValidate(opts: { config?: string; json?: boolean }, io: Io): number {
  const cfg = configFor(opts.config, io);
  if (!cfg) return EXIT.config;
  const s = summary(cfg);
  if (opts.json) {
    io.out(JSON.stringify({ valid: true, ...s }));
    return EXIT.ok;
  }
  io.out(`configuration is valid: ${cfg.source}`);
  io.out(`storage root   ${cfg.storageRoot}`);
  for (const p of cfg.service.pipelines) {
    const list = (xs: string[]) => (xs.length ? xs.join(', ') : '-');
    io.out(
      `pipeline ${p.id}${cfg.service.impliedPipelines ? ' (implied)' : ''}: receivers ${list(p.receivers)}; processors ${list(p.processors)}; exporters ${list(p.exporters)}`,
    );
  }
  io.out(`extensions     ${cfg.service.extensions.join(', ') || '-'}`);
  io.out(`telemetry      ${s.telemetry_metrics ?? 'off'} (/metrics), logs at ${s.log_level}`);
  for (const u of cfg.unused) io.err(`aszcol: warning: ${u} is configured but no pipeline uses it; it will not start`);
  return EXIT.ok;
}
