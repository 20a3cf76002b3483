import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { expandEnv } from '../config/env.js';
import { ConfigErrors } from '../config/errors.js';
import { bool, describe, duration, join, mapping, parseEndpoint, str, strList, type Endpoint } from '../config/reader.js';
import { ConfigError } from '../util/errors.js';
import { PIPELINE_TYPES, SECTION, type ComponentFactory, type ComponentKind, type PipelineType } from '../component/component.js';
import { LOG_LEVELS, type LogLevel } from '../component/log.js';
import { findType, type Registry } from '../component/known-types.js';
import { allowedHosts } from '../component/http.js';
import { inheritExportWithholding } from './export-withholding.js';

/** One configured component instance: `receivers.claude_code_otlp`, `exporters.otlp/oap`. */
export interface ComponentConfig {
  /** `type` or `type/name`, as written. */
  id: string;
  type: string;
  kind: ComponentKind;
  /** Its path in the YAML: `exporters.otlp/oap`. */
  path: string;
  /** What the factory's `validate` returned. */
  config: unknown;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the factory's config type is erased here; `config` above came from its own validate()
  factory: ComponentFactory<any>;
}

export interface PipelineConfig {
  /** `sessions`, `metrics`, `metrics/oap` … */
  id: string;
  type: PipelineType;
  receivers: string[];
  processors: string[];
  exporters: string[];
}

export interface ServiceConfig {
  /** Extensions to start, in order. */
  extensions: string[];
  pipelines: PipelineConfig[];
  /** True when the file had no `service.pipelines` and the one-pipeline default was implied. */
  impliedPipelines: boolean;
  telemetry: {
    /** Where `/metrics` is served; undefined when `address: ""` turns it off. */
    metrics: { address: Endpoint | undefined; allowedHosts: string[] };
    logs: { level: LogLevel };
  };
  shutdownTimeoutMs: number;
  /**
   * On SIGTERM/SIGINT, after the pass in flight: stop the receivers' intake and run one last pass,
   * so what reached the service is landed and sent before it exits (`service.final_pass`).
   */
  finalPass: boolean;
}

export interface AszConfig {
  /** The file it came from, or `(embedded default)`. */
  source: string;
  storageRoot: string;
  /** Every configured, valid component, in YAML order. */
  components: ComponentConfig[];
  /** Configured components no pipeline (or `service.extensions`) uses; they are not started. */
  unused: string[];
  service: ServiceConfig;
  /** The parsed, env-expanded document. */
  raw: Record<string, unknown>;
}

export const EMBEDDED_DEFAULT = '(embedded default)';
const TOP_KEYS = ['storage', 'receivers', 'processors', 'exporters', 'extensions', 'service'] as const;
const KINDS: ComponentKind[] = ['receiver', 'processor', 'exporter', 'extension'];
const ID = /^([a-z][a-z0-9_]*)(?:\/([A-Za-z0-9_.-]+))?$/;

/**
 * What `aszcol` runs with no `--config`: the local receiver on the default source root, the
 * OTLP receiver on 127.0.0.1:4317/4318, the assembler and the view, health on 127.0.0.1:13133,
 * no export. Components not registered in this build are left out, so the default always runs.
 */
export function embeddedDefaultYaml(registry: Registry): string {
  const has = (kind: ComponentKind, type: string) => findType(registry, kind, type)?.factory !== undefined;
  const receivers = ['claude_code_local', ...(has('receiver', 'claude_code_otlp') ? ['claude_code_otlp'] : [])];
  const processors = has('processor', 'assembler') ? ['assembler'] : [];
  const extensions = [...(has('extension', 'view') ? ['view'] : []), 'health_check'];
  const lines = [
    'storage:',
    '  root: ./data',
    'receivers:',
    '  claude_code_local:',
    '    source_root: ""              # $CLAUDE_CONFIG_DIR/projects, $XDG_CONFIG_HOME/claude/projects, ~/.claude/projects',
    '    include: []',
    '    exclude: ["/private/tmp/**"]',
    '    interval: 5s',
    '    max_delta_bytes: 2MiB',
  ];
  if (receivers.includes('claude_code_otlp')) {
    lines.push('  claude_code_otlp:              # OTLP/gRPC on 127.0.0.1:4317, OTLP/HTTP on 127.0.0.1:4318');
  }
  if (processors.length) lines.push('processors:', '  assembler:');
  lines.push('extensions:');
  if (extensions.includes('view')) lines.push('  view:                          # 127.0.0.1:8787');
  lines.push(
    '  health_check:',
    '    endpoint: 127.0.0.1:13133',
    'service:',
    `  extensions: [${extensions.join(', ')}]`,
    '  pipelines:',
    '    sessions:',
    `      receivers: [${receivers.join(', ')}]`,
    `      processors: [${processors.join(', ')}]`,
    '      exporters: []',
    '  telemetry:',
    '    metrics:',
    '      address: 127.0.0.1:8888',
    '    logs:',
    '      level: info',
    '  shutdown_timeout: 30s',
    '  final_pass: true',
  );
  return lines.join('\n') + '\n';
}

class Problems {
  readonly list: ConfigError[] = [];
  /** Runs `fn`, keeping its ConfigError and going on; returns undefined when it failed. */
  try<T>(fn: () => T): T | undefined {
    try {
      return fn();
    } catch (err) {
      if (err instanceof ConfigErrors) this.list.push(...err.errors);
      else if (err instanceof ConfigError) this.list.push(err);
      else throw err;
      return undefined;
    }
  }
  add(path: string, reason: string): void {
    this.list.push(new ConfigError(path, reason));
  }
  /** A mapping of the service's own sections: every unknown key is reported, the known ones are still read. */
  section(raw: unknown, path: string, allowed: readonly string[]): Record<string, unknown> {
    const m = this.try(() => mapping(raw, path)) ?? {};
    const known: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(m)) {
      if (allowed.includes(k)) known[k] = v;
      else this.add(join(path, k), `unknown key; allowed here: ${allowed.join(', ')}`);
    }
    return known;
  }
}

function parseId(id: string, path: string): { type: string; name?: string } {
  const m = ID.exec(id);
  if (!m)
    throw new ConfigError(path, 'is not a component id; write type or type/name, such as otlp or otlp/oap (type: a-z, 0-9, _; name: letters, digits, _ . -)');
  return { type: m[1]!, name: m[2] };
}

function readComponents(raw: Record<string, unknown>, kind: ComponentKind, env: NodeJS.ProcessEnv, registry: Registry, p: Problems) {
  const section = SECTION[kind];
  const valid: ComponentConfig[] = [];
  /** Every id written under the section, valid or not, so a pipeline naming a bad one is not reported twice. */
  const named = new Set<string>();
  const m = p.try(() => mapping(raw[section], section)) ?? {};
  const known = registry.filter((t) => t.kind === kind);
  const avail = known.filter((t) => t.factory).map((t) => t.type);
  for (const [id, value] of Object.entries(m)) {
    const path = join(section, id);
    named.add(id);
    const parsed = p.try(() => parseId(id, path));
    if (!parsed) continue;
    const t = known.find((k) => k.type === parsed.type);
    if (!t) {
      p.add(path, `unknown ${kind} type "${parsed.type}"; ${kind} types: ${known.map((k) => k.type).join(', ')}`);
      continue;
    }
    if (!t.factory) {
      p.add(path, `the ${t.type} ${kind} is not available in this build; available ${section}: ${avail.join(', ') || '(none)'}`);
      continue;
    }
    const factory = t.factory;
    const config = p.try(() => factory.validate(value, path, { env }));
    if (config === undefined) continue;
    valid.push({ id, type: t.type, kind, path, config, factory });
  }
  return { valid, named };
}

function readPipelines(
  svc: Record<string, unknown>,
  comps: Record<ComponentKind, { valid: ComponentConfig[]; named: Set<string> }>,
  registry: Registry,
  p: Problems,
): { pipelines: PipelineConfig[]; implied: boolean } {
  if (svc.pipelines === undefined) {
    const configured = (k: ComponentKind) => comps[k].valid.map((c) => c.id);
    // A file that only configures receivers (what aszcol read before pipelines existed) runs them
    // in one sessions pipeline. Once processors or exporters appear, where they go must be said.
    for (const k of ['processor', 'exporter'] as const) {
      if (configured(k).length) {
        p.add('service.pipelines', `is required when ${SECTION[k]} are configured (${configured(k).join(', ')}); a component runs only in a pipeline`);
        return { pipelines: [], implied: true };
      }
    }
    const receivers = [...comps.receiver.named];
    return {
      pipelines: [{ id: 'sessions', type: 'sessions', receivers: receivers.length ? receivers : ['claude_code_local'], processors: [], exporters: [] }],
      implied: true,
    };
  }
  const pm = p.try(() => mapping(svc.pipelines, 'service.pipelines'));
  if (!pm) return { pipelines: [], implied: false };
  const out: PipelineConfig[] = [];
  if (Object.keys(pm).length === 0) p.add('service.pipelines', `must name at least one pipeline (${PIPELINE_TYPES.join(', ')})`);
  for (const [pid, value] of Object.entries(pm)) {
    const path = join('service.pipelines', pid);
    const m = /^([a-z]+)(?:\/([A-Za-z0-9_.-]+))?$/.exec(pid);
    const type = m?.[1] as PipelineType | undefined;
    if (!type || !PIPELINE_TYPES.includes(type)) {
      p.add(path, `unknown pipeline type; a pipeline is named by its type, optionally with /name: ${PIPELINE_TYPES.join(', ')} (such as metrics/oap)`);
      continue;
    }
    const body = p.section(value, path, ['receivers', 'processors', 'exporters']);
    const lists = { receiver: [] as string[], processor: [] as string[], exporter: [] as string[] };
    for (const kind of ['receiver', 'processor', 'exporter'] as const) {
      const lpath = join(path, SECTION[kind]);
      const ids = p.try(() => strList(body[SECTION[kind]], lpath, [])) ?? [];
      if (kind === 'receiver' && body.receivers !== undefined && ids.length === 0 && Array.isArray(body.receivers)) {
        p.add(lpath, 'must list at least one receiver');
      }
      ids.forEach((id, i) => {
        const ipath = join(lpath, i);
        if (ids.indexOf(id) !== i) return p.add(ipath, `"${id}" is listed twice`);
        if (!comps[kind].named.has(id)) {
          const conf = [...comps[kind].named];
          return p.add(ipath, `"${id}" is not configured under ${SECTION[kind]}; configured ${SECTION[kind]}: ${conf.join(', ') || '(none)'}`);
        }
        const c = comps[kind].valid.find((x) => x.id === id);
        if (!c) return; // its own error was reported at its section
        const allowed = findType(registry, kind, c.type)!.pipelines;
        if (!allowed.includes(type)) return p.add(ipath, `the ${c.type} ${kind} cannot be in a ${type} pipeline; it belongs in: ${allowed.join(', ')}`);
        lists[kind].push(id);
      });
    }
    if (body.receivers === undefined) p.add(join(path, 'receivers'), 'is required: list at least one receiver');
    out.push({ id: pid, type, receivers: lists.receiver, processors: lists.processor, exporters: lists.exporter });
  }
  // Derived token usage and the runtime's own metrics passed through count the same tokens.
  const typeOf = (kind: ComponentKind, id: string) => comps[kind].valid.find((c) => c.id === id)?.type;
  // A pipeline holding both derives only MCP metrics (the runtime's tokens are received), so it counts as passing through.
  const hasDeriver = (pl: PipelineConfig) => pl.processors.some((id) => typeOf('processor', id) === 'token_metrics');
  const hasReceiver = (pl: PipelineConfig) => pl.receivers.some((id) => typeOf('receiver', id) === 'claude_code_otlp');
  const derived = out.find((pl) => pl.type === 'metrics' && hasDeriver(pl) && !hasReceiver(pl));
  const passed = out.find((pl) => pl.type === 'metrics' && pl.exporters.length > 0 && hasReceiver(pl));
  if (derived && passed) {
    p.add(
      join('service.pipelines', passed.id),
      `passes claude_code_otlp metrics through while pipeline ${derived.id} derives token usage with token_metrics; both would send claude_code.token.usage for the same tokens: keep one` +
        (hasDeriver(passed) ? ` (${passed.id} derives only MCP metrics, because it receives the runtime's token usage)` : ''),
    );
  }
  return { pipelines: out, implied: false };
}

function readService(
  raw: Record<string, unknown>,
  comps: Record<ComponentKind, { valid: ComponentConfig[]; named: Set<string> }>,
  registry: Registry,
  p: Problems,
): ServiceConfig {
  const svc = p.section(raw.service, 'service', ['extensions', 'pipelines', 'telemetry', 'shutdown_timeout', 'final_pass']);
  const extensions: string[] = [];
  const exts = p.try(() => strList(svc.extensions, 'service.extensions', [])) ?? [];
  exts.forEach((id, i) => {
    const path = `service.extensions[${i}]`;
    if (exts.indexOf(id) !== i) return p.add(path, `"${id}" is listed twice`);
    if (!comps.extension.named.has(id))
      return p.add(path, `"${id}" is not configured under extensions; configured extensions: ${[...comps.extension.named].join(', ') || '(none)'}`);
    if (comps.extension.valid.some((c) => c.id === id)) extensions.push(id);
  });
  const { pipelines, implied } = readPipelines(svc, comps, registry, p);
  const tel = p.section(svc.telemetry, 'service.telemetry', ['metrics', 'logs']);
  const met = p.section(tel.metrics, 'service.telemetry.metrics', ['address', 'allowed_hosts']);
  const hosts = p.try(() => allowedHosts(met.allowed_hosts, 'service.telemetry.metrics')) ?? [];
  const logs = p.section(tel.logs, 'service.telemetry.logs', ['level']);
  const addrText = p.try(() => str(met.address, 'service.telemetry.metrics.address', '127.0.0.1:8888'));
  const address = addrText ? p.try(() => parseEndpoint(addrText, 'service.telemetry.metrics.address')) : undefined;
  const level = (p.try(() => str(logs.level, 'service.telemetry.logs.level', 'info', { oneOf: LOG_LEVELS })) ?? 'info') as LogLevel;
  const shutdownTimeoutMs = p.try(() => duration(svc.shutdown_timeout, 'service.shutdown_timeout', 30_000, { minMs: 100, maxMs: 3_600_000 })) ?? 30_000;
  const finalPass = p.try(() => bool(svc.final_pass, 'service.final_pass', true)) ?? true;
  return {
    extensions,
    pipelines,
    impliedPipelines: implied,
    telemetry: { metrics: { address, allowedHosts: hosts }, logs: { level } },
    shutdownTimeoutMs,
    finalPass,
  };
}

/**
 * Parses, expands `${env:…}`, validates every section (through each component type's factory)
 * and applies defaults. Throws ConfigErrors listing every problem, each at its exact path.
 */
/** The YAML library's words for a document that parses but cannot be turned into values. */
function yamlValueProblem(err: unknown): string {
  const m = (err as Error).message ?? String(err);
  if (/excessive alias count/i.test(m)) return 'too many alias expansions (more than 1000); write the values out instead of nesting aliases';
  return m.split('\n')[0]!;
}

export function parseConfig(text: string, env: NodeJS.ProcessEnv, file: string, registry: Registry): AszConfig {
  let doc: ReturnType<typeof parseDocument>;
  try {
    doc = parseDocument(text, { uniqueKeys: true, prettyErrors: true });
  } catch (err) {
    // The YAML parser recurses per level: a document nested thousands deep overflows the stack.
    if (err instanceof RangeError) throw new ConfigError(file, `YAML: the document nests too deep to read (${err.message})`);
    throw err;
  }
  if (doc.errors.length) {
    const e = doc.errors[0]!;
    const where = e.linePos ? `:${e.linePos[0].line}:${e.linePos[0].col}` : '';
    throw new ConfigError(`${file}${where}`, `YAML: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}`);
  }
  let parsed: unknown;
  try {
    // maxAliasCount bounds an alias bomb (each alias expanding to many); an alias with no anchor also throws here.
    parsed = (doc.toJS({ maxAliasCount: 1000 }) ?? {}) as unknown;
  } catch (err) {
    throw new ConfigError(file, `YAML: ${yamlValueProblem(err)}`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError('(root)', `the configuration must be a mapping of ${TOP_KEYS.join(', ')}; got ${describe(parsed)}`);
  }
  const raw = expandEnv(parsed, env) as Record<string, unknown>;
  const p = new Problems();
  p.section(raw, '', TOP_KEYS);
  const storage = p.section(raw.storage, 'storage', ['root']);
  const root = p.try(() => str(storage.root, 'storage.root', './data', { nonEmpty: true })) ?? './data';

  // `receivers:` absent reads as the local receiver with defaults, as before pipelines existed.
  const rawForReceivers = raw.receivers === undefined ? { ...raw, receivers: { claude_code_local: null } } : raw;
  const comps = {
    receiver: readComponents(rawForReceivers, 'receiver', env, registry, p),
    processor: readComponents(raw, 'processor', env, registry, p),
    exporter: readComponents(raw, 'exporter', env, registry, p),
    extension: readComponents(raw, 'extension', env, registry, p),
  };
  const service = readService(raw, comps, registry, p);
  if (p.list.length) throw p.list.length === 1 ? p.list[0]! : new ConfigErrors(p.list);

  const used = new Set<string>();
  for (const pl of service.pipelines) for (const k of ['receiver', 'processor', 'exporter'] as const) for (const id of pl[`${k}s`]) used.add(`${k}:${id}`);
  for (const id of service.extensions) used.add(`extension:${id}`);
  const components = inheritExportWithholding(KINDS.flatMap((k) => comps[k].valid));
  const unused = components.filter((c) => !used.has(`${c.kind}:${c.id}`)).map((c) => c.path);

  return {
    source: file,
    storageRoot: resolve(root),
    components,
    unused,
    service,
    raw,
  };
}

export function loadConfig(file: string | undefined, env: NodeJS.ProcessEnv, registry: Registry): AszConfig {
  if (!file) return parseConfig(embeddedDefaultYaml(registry), env, EMBEDDED_DEFAULT, registry);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, `cannot read the configuration: ${(err as Error).message}`);
  }
  return parseConfig(text, env, file, registry);
}
