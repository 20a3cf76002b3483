/** The `token_metrics` processor inside the service: the derive stage of every pass. */
import { mkdirSync } from 'node:fs';
import type { Component, ComponentSettings, PassContext, StageResult } from '../../component/component.js';
import type { TokenMetricsConfig } from './config.js';
import { deriveTokenUsage } from './derive.js';

export class TokenMetricsComponent implements Component {
  /** Files waiting for the next file of their stream, and since when: kept across passes. */
  private readonly waiting = new Map<string, number>();

  constructor(
    private readonly cfg: TokenMetricsConfig,
    private readonly s: ComponentSettings,
  ) {}

  async start(): Promise<void> {
    mkdirSync(this.s.storageRoot, { recursive: true });
    const what = this.s.metricsSource === 'both' ? 'agent.mcp.* (token usage is received)' : 'claude_code.token.usage and agent.mcp.*';
    this.s.log.info(`deriving ${what}`, { lookback_ms: this.cfg.lookbackMs, grace_ms: this.cfg.graceMs });
  }

  async derive(ctx: PassContext): Promise<StageResult> {
    const r = await deriveTokenUsage({
      root: this.s.storageRoot,
      lookbackMs: this.cfg.lookbackMs,
      graceMs: this.cfg.graceMs,
      waiting: this.waiting,
      signal: ctx.signal,
      // In a pipeline with claude_code_otlp the runtime's own token usage is received: derive only MCP metrics.
      tokens: this.s.metricsSource !== 'both',
    });
    for (const p of r.problems) ctx.log.error('token usage derivation problem', { error: p });
    const { problems, ...counts } = r;
    return { changed: r.files > 0 || r.recovered > 0, problems: problems.map((p) => `${this.s.id}: ${p}`), counts };
  }

  async shutdown(): Promise<void> {}
}
