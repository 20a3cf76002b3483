import { ConfigError } from '../../src/util/errors.js';
import { int, join, mapping, str } from '../../src/config/reader.js';
import type { Component, ComponentFactory, ComponentKind, ComponentSettings, PassContext, StageResult } from '../../src/component/component.js';
import { REGISTRY } from '../../src/service/registry.js';
import type { KnownType, Registry } from '../../src/component/known-types.js';

/** What fake components did, in order: `start receivers/a`, `land receivers/a`, `shutdown …`. */
export class Journal {
  readonly events: string[] = [];
  push(e: string): void {
    this.events.push(e);
  }
  of(prefix: string): string[] {
    return this.events.filter((e) => e.startsWith(prefix));
  }
}

export interface FakeConfig {
  /** A stage hook sleeps this long (ms), to have a pass in flight. */
  delay: number;
  /** `start` throws with this text. */
  failStart: string;
  /** The named stage returns a problem (or throws when `throw`). */
  failStage: string;
  throwStage: boolean;
  interval: number;
  /** `shutdown` takes this long (ms). */
  shutdownDelay: number;
  /** A stage hook of the final pass sleeps this long (ms), unless aborted; other passes are quick. */
  finalDelay: number;
  /** It takes input between passes: it has `stopIntake` (the others have none, as the local receiver). */
  intake: boolean;
  /** `stopIntake` takes this long (ms), and does not heed the abort: a hook that hangs. */
  intakeDelay: number;
  /** `stopIntake` throws with this text. */
  failIntake: string;
}

/**
 * A component that records every call in a journal. A stage of the final pass is journalled with
 * ` final` after its pass number (`land receivers/a #2 final`).
 */
class FakeComponent implements Component {
  /** Only with `intake`: the host must cope with components that have none. */
  stopIntake?: (signal: AbortSignal) => Promise<void>;

  constructor(
    private readonly cfg: FakeConfig,
    private readonly s: ComponentSettings,
    private readonly j: Journal,
  ) {
    if (cfg.intake) {
      this.stopIntake = async (signal) => {
        this.j.push(`stop-intake ${this.name}`);
        if (cfg.intakeDelay) await new Promise((r) => setTimeout(r, cfg.intakeDelay));
        if (cfg.failIntake) throw new Error(cfg.failIntake);
        this.j.push(`stop-intake-done ${this.name}${signal.aborted ? ' aborted' : ''}`);
      };
    }
  }
  private get name() {
    return `${this.s.kind}s/${this.s.id}`;
  }
  async start(): Promise<void> {
    this.j.push(`start ${this.name}`);
    if (this.cfg.failStart) throw new Error(this.cfg.failStart);
  }
  async shutdown(): Promise<void> {
    this.j.push(`shutdown ${this.name}`);
    if (this.cfg.shutdownDelay) await new Promise((r) => setTimeout(r, this.cfg.shutdownDelay));
  }
  private async stage(stage: string, ctx: PassContext): Promise<StageResult> {
    const pass = `#${ctx.pass}${ctx.final ? ' final' : ''}`;
    this.j.push(`${stage} ${this.name} ${pass}`);
    const delay = ctx.final && this.cfg.finalDelay ? this.cfg.finalDelay : this.cfg.delay;
    if (delay) {
      const until = Date.now() + delay;
      while (Date.now() < until && !ctx.signal.aborted) await new Promise((r) => setTimeout(r, 10));
    }
    this.j.push(`${stage}-done ${this.name} ${pass}${ctx.signal.aborted ? ' aborted' : ''}`);
    if (this.cfg.failStage === stage) {
      if (this.cfg.throwStage) throw new Error(`${stage} blew up`);
      return { problems: [`${this.name}: ${stage} could not be done`] };
    }
    if (this.s.kind === 'receiver') this.s.telemetry.landed(2);
    if (this.s.kind === 'exporter') this.s.telemetry.sent('log_records', 3);
    return { counts: { n: 1 } };
  }
  land = (ctx: PassContext) => this.stage('land', ctx);
  parse = (ctx: PassContext) => this.stage('parse', ctx);
  derive = (ctx: PassContext) => this.stage('derive', ctx);
  send = (ctx: PassContext) => this.stage('send', ctx);
}

export function fakeFactory(kind: ComponentKind, type: string, journal: Journal): ComponentFactory<FakeConfig> {
  const validate = (raw: unknown, path: string): FakeConfig => {
    const m = mapping(raw, path, [
      'delay',
      'fail_start',
      'fail_stage',
      'throw',
      'interval',
      'endpoint',
      'shutdown_delay',
      'final_delay',
      'intake',
      'intake_delay',
      'fail_intake',
    ]);
    if (m.endpoint !== undefined && !/^\S+:\d+$/.test(String(m.endpoint))) throw new ConfigError(join(path, 'endpoint'), 'must be host:port');
    return {
      delay: int(m.delay, join(path, 'delay'), 0, { min: 0 }),
      failStart: str(m.fail_start, join(path, 'fail_start'), ''),
      failStage: str(m.fail_stage, join(path, 'fail_stage'), '', { oneOf: ['', 'land', 'parse', 'derive', 'send'] }),
      throwStage: m.throw === true,
      interval: int(m.interval, join(path, 'interval'), 0, { min: 0 }),
      shutdownDelay: int(m.shutdown_delay, join(path, 'shutdown_delay'), 0, { min: 0 }),
      finalDelay: int(m.final_delay, join(path, 'final_delay'), 0, { min: 0 }),
      intake: m.intake === true,
      intakeDelay: int(m.intake_delay, join(path, 'intake_delay'), 0, { min: 0 }),
      failIntake: str(m.fail_intake, join(path, 'fail_intake'), ''),
    };
  };
  return {
    kind,
    type,
    defaultConfig: () => validate(undefined, type),
    validate,
    create: (cfg, s) => new FakeComponent(cfg, s, journal),
    passInterval: (cfg) => cfg.interval || undefined,
  };
}

/**
 * The real registry with every type that has no factory yet (and, with `all`, every type)
 * replaced by a recording fake, so the host can be tested with the whole pipeline shape.
 */
export function fakeRegistry(journal: Journal, opts: { all?: boolean; keep?: string[] } = {}): Registry {
  return REGISTRY.map((t): KnownType => {
    if (opts.keep?.includes(t.type)) return t;
    if (opts.all || !t.factory) return { ...t, factory: fakeFactory(t.kind, t.type, journal) };
    return t;
  });
}

/** The real registry with the named types made unavailable (as in a build without them). */
export function withoutFactories(types: string[], base: Registry = REGISTRY): Registry {
  return base.map((t) => (types.includes(t.type) ? { ...t, factory: undefined } : t));
}
