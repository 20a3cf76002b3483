import { validateAssemblerConfig, type AssemblerConfig } from '../../processors/assembler/config.js';
import { parseStep } from '../../processors/assembler/component.js';
import type { Component, ComponentFactory, ComponentSettings, PassContext, StageResult } from '../component.js';

/** The assembler inside the service: the parse stage of every pass, after landing. */
class AssemblerComponent implements Component {
  constructor(private readonly cfg: AssemblerConfig, private readonly s: ComponentSettings) {}

  async start(): Promise<void> {}

  async parse(ctx: PassContext): Promise<StageResult> {
    const r = await parseStep(this.s.storageRoot, this.cfg);
    for (const p of r.problems) ctx.log.error('parse failed', { error: p });
    return { changed: r.rounds > 0, problems: r.problems.map((p) => `${this.s.id}: ${p}`), counts: { parsed_sessions: r.sessions, rounds: r.rounds, busy_chains: r.busy } };
  }

  async shutdown(): Promise<void> {}
}

export const assemblerFactory: ComponentFactory<AssemblerConfig> = {
  kind: 'processor',
  type: 'assembler',
  defaultConfig: () => validateAssemblerConfig(undefined, 'processors.assembler'),
  validate: (raw, path) => validateAssemblerConfig(raw, path),
  create: (cfg, settings) => new AssemblerComponent(cfg, settings),
};
