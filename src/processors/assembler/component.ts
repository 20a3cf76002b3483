import type { AssemblerConfig } from './config.js';
import { ParseThread } from './parse-thread.js';
import type { Component, ComponentSettings, PassContext, StageResult } from '../../component/component.js';

/**
 * The assembler inside the service: the parse stage of every pass, after landing, on a thread of
 * its own so that the receivers and the view keep answering while a long session is assembled.
 */
export class AssemblerComponent implements Component {
  private readonly thread = new ParseThread();

  constructor(
    private readonly cfg: AssemblerConfig,
    private readonly s: ComponentSettings,
  ) {}

  async start(): Promise<void> {}

  async parse(ctx: PassContext): Promise<StageResult> {
    const r = await this.thread.parse(this.s.storageRoot, this.cfg, ctx.signal, ctx.sessions);
    for (const p of r.problems) ctx.log.error('parse failed', { error: p });
    if (r.left) ctx.log.warn('parse stopped early; the rest waits for the next pass', { sessions_left: r.left });
    const counts: Record<string, number> = { parsed_sessions: r.sessions, rounds: r.rounds, busy_chains: r.busy };
    if (r.left) counts.sessions_left = r.left;
    return { changed: r.rounds > 0, problems: r.problems.map((p) => `${this.s.id}: ${p}`), counts };
  }

  async shutdown(): Promise<void> {
    await this.thread.close();
  }
}
