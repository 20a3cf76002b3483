import { ConfigError } from '../../src/util/errors.js';
import { int, join, mapping, str } from '../../src/config/reader.js';
import type { Component, ComponentFactory, ComponentKind, ComponentSettings, PassContext, StageResult } from '../../src/service/component.js';
import { REGISTRY, type KnownType, type Registry } from '../../src/service/registry.js';

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
}

/** A component that records every call in a journal. */
class FakeComponent implements Component {
  constructor(private readonly cfg: FakeConfig, private readonly s: ComponentSettings, private readonly j: Journal) {}
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
    this.j.push(`${stage} ${this.name} #${ctx.pass}`);
    if (this.cfg.delay) {
      const until = Date.now() + this.cfg.delay;
      while (Date.now() < until && !ctx.signal.aborted) await new Promise((r) => setTimeout(r, 10));
    }
    this.j.push(`${stage}-done ${this.name} #${ctx.pass}${ctx.signal.aborted ? ' aborted' : ''}`);
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
    const m = mapping(raw, path, ['delay', 'fail_start', 'fail_stage', 'throw', 'interval', 'endpoint', 'shutdown_delay']);
    if (m.endpoint !== undefined && !/^\S+:\d+$/.test(String(m.endpoint))) throw new ConfigError(join(path, 'endpoint'), 'must be host:port');
    return {
      delay: int(m.delay, join(path, 'delay'), 0, { min: 0 }),
      failStart: str(m.fail_start, join(path, 'fail_start'), ''),
      failStage: str(m.fail_stage, join(path, 'fail_stage'), '', { oneOf: ['', 'land', 'parse', 'derive', 'send'] }),
      throwStage: m.throw === true,
      interval: int(m.interval, join(path, 'interval'), 0, { min: 0 }),
      shutdownDelay: int(m.shutdown_delay, join(path, 'shutdown_delay'), 0, { min: 0 }),
    };
  };
  return {
    kind, type,
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
