/**
 * What the running service does, in a user's words: where the page is, where data lands, what is
 * received and exported, and the one command that connects Claude Code. The terminal banner and the
 * view's `/api/status` both print this, so they never disagree.
 */
import type { ServiceDescription } from '../component/component.js';
import type { LocalReceiverConfig } from '../receivers/claude-code-local/config.js';
import type { AszConfig } from './config.js';
import { pipelinesOf } from './pipelines.js';

/** A listener bound to every interface is reached from this machine through loopback. */
function reachable(address: string): string {
  return address.replace(/^0\.0\.0\.0:/, '127.0.0.1:').replace(/^\[::\]:/, '[::1]:');
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

/** `addresses` are the service's (`<kind>s/<id>.<name>` → host:port), as listed once components started. */
export function describeService(cfg: AszConfig, addresses: Record<string, string>): ServiceDescription {
  const running = (kind: string, id: string) => kind === 'extension' || pipelinesOf(cfg, { kind: kind as 'receiver', id }).length > 0;
  const receiving: ServiceDescription['receiving'] = [];
  const exporting: ServiceDescription['exporting'] = [];
  for (const c of cfg.components) {
    if (!running(c.kind, c.id)) continue;
    if (c.kind === 'receiver' && c.type === 'claude_code_local') {
      const l = c.config as LocalReceiverConfig;
      receiving.push({ id: c.id, what: `Claude Code transcripts, every ${seconds(l.intervalMs)}`, from: l.sourceRoot });
    }
    if (c.kind === 'receiver' && c.type === 'claude_code_otlp') {
      for (const [key, addr] of Object.entries(addresses)) {
        if (!key.startsWith(`receivers/${c.id}.`)) continue;
        const name = key.slice(`receivers/${c.id}.`.length);
        const proto = name === 'grpc' ? 'OTLP/gRPC' : name === 'http' ? 'OTLP/HTTP' : 'OTLP (gRPC and HTTP)';
        const metricsKept = pipelinesOf(cfg, c).some((p) => p.type === 'metrics');
        const what = `Claude Code's telemetry over ${proto}${metricsKept ? '' : ' (its metrics are answered, not kept: no metrics pipeline)'}`;
        receiving.push({ id: c.id, what, from: `http://${reachable(addr)}` });
      }
    }
    if (c.kind === 'exporter') {
      const conf = c.config as { endpoint?: unknown };
      exporting.push({ id: c.id, to: typeof conf.endpoint === 'string' ? conf.endpoint : JSON.stringify(conf.endpoint ?? null) });
    }
  }
  const find = (suffix: string) => Object.entries(addresses).find(([k]) => k.endsWith(suffix))?.[1];
  const page = find('.view');
  const health = Object.keys(addresses).find((k) => k.startsWith('extensions/health_check'));
  const hasOtlp = receiving.some((r) => r.what.includes('OTLP'));
  const withConfig = cfg.source.startsWith('(') ? '' : ` --config ${cfg.source}`;
  return {
    config: cfg.source,
    storageRoot: cfg.storageRoot,
    ...(page ? { page: `http://${reachable(page)}` } : {}),
    receiving,
    exporting,
    ...(health ? { health: `http://${reachable(addresses[health]!)}` } : {}),
    ...(addresses.telemetry ? { metrics: `http://${reachable(addresses.telemetry)}/metrics` } : {}),
    ...(hasOtlp ? { connect: `npx aszcol setup claude-code${withConfig}` } : {}),
  };
}

/** The banner a person sees when the service starts in a terminal; plain lines, no colour codes. */
export function bannerLines(d: ServiceDescription): string[] {
  const lines = ['', 'aszcol is running'];
  if (d.page) lines.push(`  page        ${d.page}`);
  lines.push(`  data        ${d.storageRoot}`);
  for (const r of d.receiving) lines.push(`  receiving   ${r.what}: ${r.from}`);
  if (d.exporting.length === 0) lines.push('  exporting   nothing (add an otlp exporter to forward to SkyWalking OAP or any OTLP backend)');
  for (const e of d.exporting) lines.push(`  exporting   ${e.id} → ${e.to}`);
  if (d.metrics) lines.push(`  metrics     ${d.metrics}`);
  if (d.connect) {
    lines.push('', 'Connect Claude Code (its own telemetry: cost, durations, decisions), then start a new session:', `  ${d.connect}`);
  }
  lines.push(`Config: ${d.config}. Logs follow as JSON lines on stderr; Ctrl-C drains and exits.`, '');
  return lines;
}
