/**
 * Builds a scenario into a storage root, checkpoint by checkpoint, in either format: `claude-code`
 * writes the runtime's files and the real adapter collects them; `sd` lands Session Data directly
 * under the scenario's own adapter name, with no discovery step.
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { LocalCollector, type PassReport } from '../receivers/claude-code-local/pass.js';
import { parseSession, type ParseResult } from '../processors/assembler/parse.js';
import { generate, type Generated } from './generate.js';
import type { Scenario } from './model.js';
import { writeRootConfig, writeSources } from './files.js';
import { writeMarker, type RemovalPolicy } from '../storage/scenario-marker.js';
import { providerBodyFiles } from './provider-bodies.js';
import { INDEX_FILE } from '../adapters/claude-code/provider-bodies.js';
import { pluginObservations } from './plugin-observations.js';
import { appendSpoolLineSync, readSpool } from '../storage/hook-spool.js';
import { readObservations } from '../storage/hook-landing.js';

export type Format = 'claude-code' | 'sd';

export interface Stage {
  generated: Generated;
  collect: PassReport;
  parse?: ParseResult;
}

export class ScenarioRoot {
  readonly sourceRoot: string;
  /** Where the runtime's raw API body dump is written: for claude-code, where the local receiver looks by default. */
  readonly bodyDir: string;
  private readonly collector: LocalCollector;

  constructor(
    readonly dir: string,
    readonly format: Format,
    readonly scn: Scenario,
    readonly at: number,
    readonly opts: { scale?: number; interval?: number; maxRoundBytes?: number; maxDeltaBytes?: number; session?: string; remove?: RemovalPolicy } = {},
  ) {
    mkdirSync(dir, { recursive: true });
    this.sourceRoot = format === 'claude-code' ? join(dir, '_source', 'projects') : join(dir, '_scenario', 'sd-source');
    this.bodyDir = format === 'claude-code' ? join(dir, '_source', 'asz', 'provider-bodies') : join(dir, '_scenario', 'sd-bodies');
    if (format === 'claude-code') writeRootConfig(dir, this.sourceRoot);
    const atNs = BigInt(at) * 1_000_000n;
    this.collector = new LocalCollector({
      root: dir,
      sourceRoot: this.sourceRoot,
      filter: { include: [], exclude: [] },
      maxDeltaBytes: opts.maxDeltaBytes ?? 2 * 1024 * 1024,
      adapter: format === 'sd' ? 'scenario-sd/1' : undefined,
      providerBodies: scn.providerBodies ? this.bodyDir : undefined,
      // An sd build is stamped by the scenario's clock, so a fixed --at lands byte-identical files.
      clock: format === 'sd' ? () => atNs : undefined,
    });
  }

  /** Writes the scenario through a checkpoint (all of it when undefined) and lands what is new. */
  build(through?: string, opts: { collect?: boolean } = {}): { generated: Generated; collect?: PassReport } {
    const generated = generate(this.scn, { at: this.at, scale: this.opts.scale, interval: this.opts.interval, through, session: this.opts.session });
    writeSources(this.sourceRoot, generated.files);
    const bodies = providerBodyFiles(this.scn, generated);
    if (bodies.size) writeSources(this.bodyDir, bodies);
    this.writeHookSpool(generated);
    // After every other file of the session: a marker names what a pipeline may remove once it is sent.
    if (this.format === 'claude-code') {
      // The body dump's own files are the session's; its index is shared with every other session, so only this session's lines are claimed.
      const dump = 'asz/provider-bodies';
      const own = [...bodies.keys()].filter((n) => n !== INDEX_FILE).map((n) => `${dump}/${n}`);
      const index = (bodies.get(INDEX_FILE) ?? '').split('\n').filter(Boolean);
      writeMarker(
        this.dir,
        generated.session,
        this.opts.remove ?? 'immediately',
        generated.end,
        [...[...generated.files.keys()].map((rel) => `projects/${rel}`), ...own],
        [{ path: `${dump}/${INDEX_FILE}`, lines: index }],
      );
    }
    // An sd build lands its Session Data itself; a claude-code build leaves that to the collector.
    const collect = opts.collect ?? true;
    return { generated, collect: collect || this.format === 'sd' ? this.collector.pass() : undefined };
  }

  /**
   * The plugin's observations, in both formats (the hook lane does not depend on how the transcript
   * lands): each appended once, as a hook would (a repeat the runtime sends within one build is
   * kept, and the reader drops it); the collect that follows lands them as `changes`/`execution` files.
   */
  private writeHookSpool(generated: Generated): void {
    // Landed lines count too, since a trimmed spool no longer holds them; and spool lines too, since a `lose` deletes landed ones.
    const idOf = (l: { value?: unknown }) => (l.value as { id?: string } | undefined)?.id;
    const have = new Set([...readSpool(this.dir, generated.session).map(idOf), ...readObservations(this.dir, generated.session).lines.map(idOf)]);
    for (const o of pluginObservations(generated)) {
      if (have.has(o.id)) continue;
      appendSpoolLineSync(this.dir, o.session, JSON.stringify(o));
    }
  }

  collectAgain(): PassReport {
    return this.collector.pass();
  }

  parse(): ParseResult {
    const g = generate(this.scn, { at: this.at, session: this.opts.session });
    return parseSession({ root: this.dir, session: g.session, maxRoundBytes: this.opts.maxRoundBytes ?? 2 * 1024 * 1024 });
  }
}
