import type { Registry } from 'prom-client';
import type { Logger } from './log.js';
import type { MetricsSpoolFacts } from './metrics-spool-facts.js';

/**
 * The component model. A factory per type knows the type's default configuration, validates a
 * raw YAML mapping into a typed configuration (every error at its exact path), and creates a
 * component. Components start and shut down; those that take part in the pass implement one or
 * more of its stages. Everything between components goes through the storage root, so the host
 * never hands data from one component to another.
 */

export type ComponentKind = 'receiver' | 'processor' | 'exporter' | 'extension';

/** The YAML section of each kind. */
export const SECTION: Record<ComponentKind, 'receivers' | 'processors' | 'exporters' | 'extensions'> = {
  receiver: 'receivers',
  processor: 'processors',
  exporter: 'exporters',
  extension: 'extensions',
};

/**
 * `sessions`: landed files and rounds; `metrics`: token usage, derived or passed through.
 * A pipeline's key is its type, optionally with `/name` (`metrics/oap`).
 */
export const PIPELINE_TYPES = ['sessions', 'metrics'] as const;
export type PipelineType = (typeof PIPELINE_TYPES)[number];

/** One pass runs these stages in this order: receivers land, processors parse and derive, exporters send. */
export const PASS_STAGES = ['land', 'parse', 'derive', 'send'] as const;
export type PassStage = (typeof PASS_STAGES)[number];

export interface PassContext {
  /** 1 for the service's first pass, then 2, 3, … */
  readonly pass: number;
  readonly stage: PassStage;
  /**
   * True for the final pass on shutdown (after every `stopIntake`): what it does not land or send
   * waits on disk for the next start, so a stage may log that instead of a retry it will not see.
   */
  readonly final: boolean;
  /**
   * Aborted only when the service's shutdown timeout is about to run out during this pass (the
   * pass in flight or the final pass): a stage should then stop at the next safe point (nothing
   * half-written) and return. A plain SIGTERM does not abort it: the pass in flight is finished.
   */
  readonly signal: AbortSignal;
  readonly log: Logger;
  /**
   * A nudged pass (`Host.requestPass` named them): only these sessions are known to have moved
   * since the last pass, so a stage may confine itself to them. Absent: a whole pass.
   */
  readonly sessions?: ReadonlySet<string>;
}

/** What a stage did. `problems` non-empty makes the pass unsuccessful (health turns 503). */
export interface StageResult {
  problems?: string[];
  /** Counts worth a log line (landed files, rounds written, records sent …). */
  counts?: Record<string, number>;
  /** The stage did something (landed, wrote, sent): the pass is logged at info, else at debug. */
  changed?: boolean;
}

export type StageHook = (ctx: PassContext) => Promise<StageResult | void>;

export interface Component {
  /** Bind ports, open files; throw to refuse to start (the service then stops what started). */
  start(): Promise<void>;
  /**
   * Shutdown, step one, for a component that takes input between passes (a receiver with
   * listeners): stop taking new input, and return once what was already taken is landed (or
   * will be by the final pass's `land`). Keep everything the final pass needs: its stages still
   * run after this, and `shutdown` comes after them. Called at most once, after the pass in flight
   * has finished and only when `service.final_pass` is on; every component's at the same time.
   * `signal` is aborted shortly before the shutdown deadline: stop waiting then (the service no
   * longer waits either, runs no final pass, and calls `shutdown`). Throwing is logged; the final
   * pass still runs. Components that take input only in a stage (the local receiver collects in
   * `land`) leave it out.
   */
  stopIntake?(signal: AbortSignal): Promise<void>;
  /**
   * Stop accepting, flush, release. Called once, after the last pass (the final pass, when there
   * is one) has finished, whether or not `stopIntake` was called or finished.
   */
  shutdown(): Promise<void>;
  land?: StageHook;
  parse?: StageHook;
  derive?: StageHook;
  send?: StageHook;
  /** Addresses it listens on, by name (`grpc`, `http`, `endpoint`); logged once started. */
  addresses?(): Record<string, string>;
  /** How it is doing between passes, for health; read on every health request, so cheap. Absent means fine. */
  health?(): ComponentHealth;
}

/**
 * A component's own word on its health. `unavailable`: it cannot do its work now (landing fails on
 * a full disk): health answers 503. `degraded`: it works, but something needs a person (records
 * parked in the quarantine): health answers 200 with status `degraded`.
 */
export interface ComponentHealth {
  unavailable?: string[];
  degraded?: string[];
}

/** Counters a component reports into the service's own metrics (`aszcol_*`). */
export type TelemetrySignal = 'log_records' | 'metric_points' | 'spans';

export interface ComponentTelemetry {
  /** Receivers: items taken in (`aszcol_receiver_accepted_<signal>_total`). */
  accepted(signal: TelemetrySignal, n: number, transport?: string): void;
  /** Receivers: items refused, with a short reason when known (`aszcol_receiver_refused_<signal>_total`). */
  refused(signal: TelemetrySignal, n: number, reason?: string, transport?: string): void;
  /** Receivers: requests received (`aszcol_receiver_requests_total`). */
  requests(n: number, transport: string): void;
  /** Receivers: whole requests refused, by reason, such as `invalid_argument` (`aszcol_receiver_refused_requests_total`). */
  refusedRequests(n: number, reason: string): void;
  /** Receivers with a spool: its size now (`aszcol_receiver_spool_bytes`). */
  spoolBytes(n: number): void;
  /** Records landed as Session Data (`aszcol_landed_records_total`). */
  landed(n: number): void;
  /** Receivers: records parked in the quarantine, by reason (`aszcol_receiver_quarantined_records_total`). */
  quarantined(n: number, reason: string): void;
  /** Sources whose cursor is in conflict now (`aszcol_sources_in_conflict`). */
  sourcesInConflict(n: number): void;
  /** Exporters: items the backend accepted (`aszcol_exporter_sent_<signal>_total`). */
  sent(signal: TelemetrySignal, n: number): void;
  /** Exporters: items that could not be sent (`aszcol_exporter_send_failed_<signal>_total`). */
  sendFailed(signal: TelemetrySignal, n: number, reason: string): void;
  /** The service registry, for a component's own extra metrics (names must start with `aszcol_`). */
  readonly registry: Registry;
}

export type ComponentState = 'created' | 'starting' | 'started' | 'failed' | 'stopping' | 'stopped';

export interface ComponentStatus {
  id: string;
  kind: ComponentKind;
  state: ComponentState;
  error?: string;
  addresses?: Record<string, string>;
}

export interface PassStatus {
  pass: number;
  ok: boolean;
  /** RFC 3339 end of the pass. */
  at: string;
  durationMs: number;
  problems: string[];
}

export interface ServiceStatus {
  /** Every component started, none says it is unavailable, and the last pass succeeded. */
  healthy: boolean;
  /** Why not, in words, when not. */
  reasons: string[];
  /** Healthy, but something needs a person (records in the quarantine), in words; empty when nothing does. */
  degraded: string[];
  startedAt?: string;
  components: ComponentStatus[];
  lastPass?: PassStatus;
  passes: number;
}

/** What a component can ask of the service that hosts it. */
/** What the running service does, for people: the banner and the view's status print it. */
export interface ServiceDescription {
  /** The configuration file, or `(embedded default)`. */
  config: string;
  storageRoot: string;
  /** The view's URL, when the view runs. */
  page?: string;
  receiving: { id: string; what: string; from: string }[];
  exporting: { id: string; to: string }[];
  health?: string;
  metrics?: string;
  /** The command that points Claude Code's telemetry here, when an OTLP receiver runs. */
  connect?: string;
  /** Each OTLP receiver's metrics: kept or not, who consumes the spool, and what was dropped (metrics-spool-facts.ts). */
  metricsSpool?: MetricsSpoolFacts[];
}

export interface Host {
  status(): ServiceStatus;
  /** What the service receives, lands and exports; absent for hosts that are not a whole service (tests). */
  describe?(): ServiceDescription;
  /** A started component by id (`assembler`, `otlp/oap`); for extensions that read others. */
  component(id: string): Component | undefined;
  /**
   * Something arrived between passes (a source file grew): run a pass soon instead of at the next
   * interval, confined to `sessions` when given, else a whole pass. Passes still never overlap.
   */
  requestPass?(sessions?: readonly string[]): void;
}

export interface ComponentSettings {
  /** `type` or `type/name`, as in the YAML. */
  id: string;
  kind: ComponentKind;
  storageRoot: string;
  /** The pipelines that use this component (extensions: none). */
  pipelines: string[];
  /**
   * Exporters in a metrics pipeline: which spooled metrics those pipelines carry, as the service
   * composed them (`derived` when token_metrics feeds it, `received` when claude_code_otlp does,
   * `both` when one pipeline holds the two). A `token_metrics` processor gets `both` when it shares a
   * metrics pipeline with claude_code_otlp, and then derives no token usage.
   */
  metricsSource?: 'derived' | 'received' | 'both';
  /** A `claude_code_otlp` receiver: the exporters that send or read what it spools (none: it bounds the spool itself). */
  spoolConsumers?: string[];
  log: Logger;
  telemetry: ComponentTelemetry;
  host: Host;
  /** The whole service's drain budget (`service.shutdown_timeout`); a component's own drain must fit well inside. */
  shutdownTimeoutMs: number;
}

export interface ValidateContext {
  /** The environment `${env:…}` was expanded from (some defaults depend on it, such as the source root). */
  env: NodeJS.ProcessEnv;
}

export interface ComponentFactory<C = unknown> {
  readonly kind: ComponentKind;
  /** The type as written in YAML: `claude_code_local`, `otlp`. */
  readonly type: string;
  /** The configuration `type:` with nothing under it means. */
  defaultConfig(): C;
  /**
   * Reads a raw (env-expanded) YAML value into the typed configuration; absent or null means the
   * default. Throws ConfigError (src/util/errors.ts) naming the exact path, under `path`
   * (`exporters.otlp/oap`), and what is allowed. Refuses unknown keys.
   */
  validate(raw: unknown, path: string, ctx: ValidateContext): C;
  create(config: C, settings: ComponentSettings): Component | Promise<Component>;
  /** The pass interval this configuration asks for (ms); the service runs at the smallest asked. */
  passInterval?(config: C): number | undefined;
}
