import { localReceiverConfig } from '../../src/service/pipelines.js';
import { describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { embeddedDefaultYaml, loadConfig, parseConfig, EMBEDDED_DEFAULT } from '../../src/service/config.js';
import { ConfigErrors, configProblems } from '../../src/config/errors.js';
import { ConfigError } from '../../src/util/errors.js';
import { REGISTRY } from '../../src/service/registry.js';
import { Journal, fakeRegistry, withoutFactories } from '../helpers/fake-components.js';

const ENV = { HOME: '/home/someone' } as NodeJS.ProcessEnv;
const full = () => fakeRegistry(new Journal());

/** Every problem the configuration has, as `path: reason` lines (empty when it is valid). */
function problems(yaml: string, registry = full(), env = ENV): string[] {
  try {
    parseConfig(yaml, env, 'test.yaml', registry);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return configProblems(err);
    throw err;
  }
}

describe('the embedded default', () => {
  test('runs with only what this build has: local receiver, health, telemetry on 8888, 30 s drain, no export', () => {
    const reg = withoutFactories(['claude_code_otlp', 'assembler', 'token_metrics', 'otlp', 'prometheus', 'view']);
    const cfg = parseConfig(embeddedDefaultYaml(reg), ENV, EMBEDDED_DEFAULT, reg);
    expect(cfg.source).toBe('(embedded default)');
    expect(cfg.service.pipelines).toEqual([{ id: 'sessions', type: 'sessions', receivers: ['claude_code_local'], processors: [], exporters: [] }]);
    expect(cfg.service.extensions).toEqual(['health_check']);
    expect(cfg.service.telemetry.metrics.address).toEqual({ host: '127.0.0.1', port: 8888 });
    expect(cfg.service.telemetry.logs.level).toBe('info');
    expect(cfg.service.shutdownTimeoutMs).toBe(30_000);
    expect(cfg.service.finalPass).toBe(true);
    expect(localReceiverConfig(cfg).sourceRoot).toBe('/home/someone/.claude/projects');
    expect(localReceiverConfig(cfg).exclude).toEqual(['/private/tmp/**']);
    expect(cfg.components.filter((c) => c.kind === 'exporter')).toEqual([]);
    expect(cfg.unused).toEqual([]);
  });

  test('takes in the OTLP receiver, the assembler and the view as soon as their factories exist', () => {
    const reg = full();
    const cfg = parseConfig(embeddedDefaultYaml(reg), ENV, EMBEDDED_DEFAULT, reg);
    expect(cfg.service.pipelines[0]).toMatchObject({ receivers: ['claude_code_local', 'claude_code_otlp'], processors: ['assembler'], exporters: [] });
    expect(cfg.service.extensions).toEqual(['view', 'health_check']);
  });

  test('loadConfig with no file is the embedded default of the real registry', () => {
    const cfg = loadConfig(undefined, { HOME: '/h', CLAUDE_CONFIG_DIR: '/c' }, REGISTRY);
    expect(localReceiverConfig(cfg).sourceRoot).toBe('/c/projects');
    expect(localReceiverConfig(cfg).sourceRootFrom).toBe('CLAUDE_CONFIG_DIR');
    expect(cfg.storageRoot).toBe(join(process.cwd(), 'data'));
    const otlp = REGISTRY.find((t) => t.type === 'claude_code_otlp')!;
    expect(cfg.service.pipelines[0]!.receivers.includes('claude_code_otlp')).toBe(otlp.factory !== undefined);
  });
});

describe('the claude_code_local section keeps its keys and meanings', () => {
  test('a file with only storage and the local receiver runs it in an implied sessions pipeline', () => {
    const cfg = parseConfig(
      'storage:\n  root: /tmp/r\nreceivers:\n  claude_code_local:\n    source_root: /src\n    include: ["/work/**"]\n    exclude: []\n    interval: 1m30s\n    max_delta_bytes: 8KiB\n    workers: 3\n',
      ENV,
      'f',
      REGISTRY,
    );
    expect(cfg.storageRoot).toBe('/tmp/r');
    expect(localReceiverConfig(cfg)).toEqual({
      sourceRoot: '/src',
      sourceRootFrom: 'config',
      include: ['/work/**'],
      exclude: [],
      intervalMs: 90_000,
      maxDeltaBytes: 8192,
      workers: 3,
      // asz 0.6's default place for the runtime's raw API bodies: beside the source root.
      providerBodies: '/asz/provider-bodies',
      hookEndpoint: '127.0.0.1:0',
      // Inside the service the source directories are watched unless `watch: false`.
      watch: true,
      // A batch is made durable file by file unless `batch_sync: filesystem`.
      batchSync: 'files',
    });
    expect(cfg.service.impliedPipelines).toBe(true);
    expect(cfg.service.pipelines).toEqual([{ id: 'sessions', type: 'sessions', receivers: ['claude_code_local'], processors: [], exporters: [] }]);
  });

  test('no receivers section means the local receiver with its defaults', () => {
    const cfg = parseConfig('storage:\n  root: ./x\n', ENV, 'f', REGISTRY);
    expect(localReceiverConfig(cfg)).toMatchObject({ intervalMs: 5000, maxDeltaBytes: 2 * 1024 * 1024, workers: 0, exclude: ['/private/tmp/**'] });
    expect(cfg.service.pipelines[0]!.receivers).toEqual(['claude_code_local']);
  });

  test('bad values name their key', () => {
    expect(problems('receivers:\n  claude_code_local:\n    max_delta_byte: 2MiB\n')).toEqual([
      'receivers.claude_code_local.max_delta_byte: unknown key; allowed here: source_root, include, exclude, interval, max_delta_bytes, workers, provider_bodies, hook_endpoint, watch, batch_sync',
    ]);
    expect(problems('receivers:\n  claude_code_local:\n    interval: soon\n')[0]).toMatch(/^receivers\.claude_code_local\.interval: "soon" is not a duration/);
    expect(problems('receivers:\n  claude_code_local:\n    interval: 50ms\n')).toEqual(['receivers.claude_code_local.interval: must be at least 100ms']);
    expect(problems('receivers:\n  claude_code_local:\n    batch_sync: fsync\n')).toEqual([
      'receivers.claude_code_local.batch_sync: "fsync" is not one of filesystem, files',
    ]);
    expect(problems('receivers:\n  claude_code_local:\n    max_delta_bytes: 2 parsecs\n')[0]).toMatch(
      /^receivers\.claude_code_local\.max_delta_bytes: "2 parsecs" is not a byte size/,
    );
    expect(problems('receivers:\n  claude_code_local:\n    workers: 65\n')).toEqual(['receivers.claude_code_local.workers: must be at most 64, got 65']);
    expect(problems('receivers:\n  claude_code_local:\n    exclude: ["", 3]\n')).toEqual(['receivers.claude_code_local.exclude[0]: must not be empty']);
  });
});

const PIPELINE = `
storage: { root: /tmp/r }
receivers:
  claude_code_local:
  claude_code_otlp:
processors:
  assembler:
  token_metrics:
exporters:
  otlp/oap: { endpoint: "oap:11800" }
  otlp/backup: { endpoint: "backup:4317" }
  prometheus:
extensions:
  health_check: { endpoint: "127.0.0.1:0" }
  view:
service:
  extensions: [health_check, view]
  pipelines:
    sessions: { receivers: [claude_code_local, claude_code_otlp], processors: [assembler], exporters: [otlp/oap, otlp/backup] }
    metrics: { receivers: [claude_code_local], processors: [token_metrics], exporters: [otlp/oap, prometheus] }
  telemetry:
    metrics: { address: "127.0.0.1:0" }
    logs: { level: debug }
  shutdown_timeout: 1m30s
`;

describe('the pipeline YAML', () => {
  test('the whole shape: type/name instances, pipelines, telemetry, shutdown timeout', () => {
    const cfg = parseConfig(PIPELINE, ENV, 'p.yaml', full());
    expect(cfg.components.map((c) => c.path)).toEqual([
      'receivers.claude_code_local',
      'receivers.claude_code_otlp',
      'processors.assembler',
      'processors.token_metrics',
      'exporters.otlp/oap',
      'exporters.otlp/backup',
      'exporters.prometheus',
      'extensions.health_check',
      'extensions.view',
    ]);
    expect(cfg.components.find((c) => c.id === 'otlp/backup')).toMatchObject({ type: 'otlp', kind: 'exporter' });
    expect(cfg.service.pipelines.map((p) => p.id)).toEqual(['sessions', 'metrics']);
    expect(cfg.service.pipelines[1]).toEqual({
      id: 'metrics',
      type: 'metrics',
      receivers: ['claude_code_local'],
      processors: ['token_metrics'],
      exporters: ['otlp/oap', 'prometheus'],
    });
    expect(cfg.service.telemetry).toEqual({ metrics: { address: { host: '127.0.0.1', port: 0 }, allowedHosts: [] }, logs: { level: 'debug' } });
    expect(cfg.service.shutdownTimeoutMs).toBe(90_000);
    expect(cfg.unused).toEqual([]);
  });

  test('a component that is not available in this build is refused, naming what is', () => {
    const reg = withoutFactories(['otlp', 'assembler'], full());
    expect(
      problems(
        'exporters:\n  otlp/oap: { endpoint: "x:1" }\nservice:\n  pipelines:\n    sessions: { receivers: [claude_code_local], exporters: [otlp/oap] }\n',
        reg,
      ),
    ).toEqual(['exporters.otlp/oap: the otlp exporter is not available in this build; available exporters: prometheus']);
    expect(problems('processors:\n  assembler:\n', reg)[0]).toBe(
      'processors.assembler: the assembler processor is not available in this build; available processors: token_metrics',
    );
  });

  test("a component's own errors carry its full path, type/name included", () => {
    const bad = problems(PIPELINE.replace('"oap:11800"', '"nowhere"'));
    expect(bad).toHaveLength(1);
    expect(bad[0]).toMatch(/^exporters\.otlp\/oap\.endpoint: /);
    expect(problems(PIPELINE.replace('otlp/backup: { endpoint: "backup:4317" }', 'otlp/backup: { endpoint: "b:1", colour: red }'))[0]).toMatch(
      /^exporters\.otlp\/backup\.colour: unknown key/,
    );
  });

  test('unknown keys are refused at every level', () => {
    expect(problems('storages: {}\n')).toEqual(['storages: unknown key; allowed here: storage, receivers, processors, exporters, extensions, service']);
    expect(problems('storage: { root: x, mode: 1 }\n')).toEqual(['storage.mode: unknown key; allowed here: root']);
    expect(problems('service: { pipeline: {} }\n')).toEqual([
      'service.pipeline: unknown key; allowed here: extensions, pipelines, telemetry, shutdown_timeout, final_pass',
    ]);
    expect(problems('service: { telemetry: { traces: {} } }\n')).toEqual(['service.telemetry.traces: unknown key; allowed here: metrics, logs']);
    expect(problems('service: { telemetry: { metrics: { level: none } } }\n')).toEqual([
      'service.telemetry.metrics.level: unknown key; allowed here: address, allowed_hosts',
    ]);
    expect(problems('service: { pipelines: { sessions: { receivers: [claude_code_local], processor: [] } } }\n')).toEqual([
      'service.pipelines.sessions.processor: unknown key; allowed here: receivers, processors, exporters',
    ]);
    expect(problems('extensions:\n  health_check: { port: 1 }\n')).toEqual([
      'extensions.health_check.port: unknown key; allowed here: endpoint, path, allowed_hosts',
    ]);
  });

  test('unknown types, bad ids', () => {
    expect(problems('exporters:\n  kafka: {}\n')).toEqual(['exporters.kafka: unknown exporter type "kafka"; exporter types: otlp, prometheus']);
    expect(problems('exporters:\n  OTLP/oap: {}\n')[0]).toMatch(/^exporters\.OTLP\/oap: is not a component id; write type or type\/name/);
    expect(problems('exporters:\n  otlp/: {}\n')[0]).toMatch(/^exporters\.otlp\/: is not a component id/);
  });

  test('pipelines: type, receivers required, references, placement, duplicates', () => {
    const base = 'exporters:\n  otlp/oap: { endpoint: "a:1" }\nprocessors:\n  assembler:\n  token_metrics:\nservice:\n  pipelines:\n';
    expect(problems(base + '    traces: { receivers: [claude_code_local] }\n')).toEqual([
      'service.pipelines.traces: unknown pipeline type; a pipeline is named by its type, optionally with /name: sessions, metrics (such as metrics/oap)',
    ]);
    expect(problems(base + '    sessions: { exporters: [otlp/oap] }\n')).toEqual([
      'service.pipelines.sessions.receivers: is required: list at least one receiver',
    ]);
    expect(problems(base + '    sessions: { receivers: [] }\n')).toEqual(['service.pipelines.sessions.receivers: must list at least one receiver']);
    expect(problems(base + '    sessions: { receivers: [claude_code_local], exporters: [otlp/ops] }\n')).toEqual([
      'service.pipelines.sessions.exporters[0]: "otlp/ops" is not configured under exporters; configured exporters: otlp/oap',
    ]);
    expect(problems(base + '    metrics: { receivers: [claude_code_local], processors: [assembler] }\n')).toEqual([
      'service.pipelines.metrics.processors[0]: the assembler processor cannot be in a metrics pipeline; it belongs in: sessions',
    ]);
    expect(problems(base + '    sessions/a: { receivers: [claude_code_local, claude_code_local] }\n')).toEqual([
      'service.pipelines.sessions/a.receivers[1]: "claude_code_local" is listed twice',
    ]);
    expect(problems(base + '    sessions: { receivers: claude_code_local }\n')).toEqual([
      'service.pipelines.sessions.receivers: must be a list of strings, got "claude_code_local"',
    ]);
    expect(problems('service: { pipelines: {} }\n')).toEqual(['service.pipelines: must name at least one pipeline (sessions, metrics)']);
  });

  test('processors or exporters without pipelines are refused; extensions must be configured to be listed', () => {
    expect(problems('exporters:\n  prometheus:\n')).toEqual([
      'service.pipelines: is required when exporters are configured (prometheus); a component runs only in a pipeline',
    ]);
    expect(problems('service:\n  extensions: [view]\n')).toEqual([
      'service.extensions[0]: "view" is not configured under extensions; configured extensions: (none)',
    ]);
  });

  test("derived token usage and the runtime's metrics passed through are never both sent", () => {
    const yaml = PIPELINE.replace('    metrics: {', '    metrics/runtime: { receivers: [claude_code_otlp], exporters: [otlp/backup] }\n    metrics: {');
    expect(problems(yaml)).toEqual([
      'service.pipelines.metrics/runtime: passes claude_code_otlp metrics through while pipeline metrics derives token usage with token_metrics; both would send claude_code.token.usage for the same tokens: keep one',
    ]);
    // Either one alone is fine.
    expect(problems(yaml.replace(/ {4}metrics: \{.*\n/, ''))).toEqual([]);
  });

  test('configured but unused components are reported, not started', () => {
    const cfg = parseConfig(
      'receivers:\n  claude_code_local:\nexporters:\n  prometheus:\nservice:\n  pipelines:\n    sessions: { receivers: [claude_code_local] }\n',
      ENV,
      'f',
      full(),
    );
    expect(cfg.unused).toEqual(['exporters.prometheus']);
  });

  test('every problem is reported at once, each at its path', () => {
    let err: unknown;
    try {
      parseConfig(
        'storage: { root: "" }\nreceivers:\n  claude_code_local: { interval: x }\nservice:\n  telemetry: { logs: { level: loud } }\n  shutdown_timeout: forever\n',
        ENV,
        'f',
        full(),
      );
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigErrors);
    expect(configProblems(err as ConfigErrors)).toEqual([
      'storage.root: must not be empty',
      'receivers.claude_code_local.interval: "x" is not a duration; use units ms, s, m, h such as "5s" or "1m30s"',
      'service.telemetry.logs.level: must be one of debug, info, warn, error; got "loud"',
      'service.shutdown_timeout: "forever" is not a duration; use units ms, s, m, h such as "5s" or "1m30s"',
    ]);
    expect((err as ConfigErrors).path).toBe('storage.root');
  });

  test('telemetry address: host:port, "" turns /metrics off, bad ones say what is allowed', () => {
    expect(parseConfig('service: { telemetry: { metrics: { address: "" } } }\n', ENV, 'f', full()).service.telemetry.metrics.address).toBeUndefined();
    expect(parseConfig('service: { telemetry: { metrics: { address: "[::1]:9" } } }\n', ENV, 'f', full()).service.telemetry.metrics.address).toEqual({
      host: '::1',
      port: 9,
    });
    expect(parseConfig('service: { telemetry: { metrics: { address: ":8888" } } }\n', ENV, 'f', full()).service.telemetry.metrics.address).toEqual({
      host: '0.0.0.0',
      port: 8888,
    });
    expect(problems('service: { telemetry: { metrics: { address: "localhost" } } }\n')[0]).toMatch(
      /^service\.telemetry\.metrics\.address: "localhost" is not a listen address; write host:port/,
    );
    expect(problems('service: { shutdown_timeout: 10ms }\n')).toEqual(['service.shutdown_timeout: must be at least 100ms, got "10ms"']);
  });

  test('service.final_pass: on unless false; anything but true or false is refused at its path', () => {
    const read = (yaml: string, env = ENV) => parseConfig(yaml, env, 'f', full()).service.finalPass;
    expect(read('service: {}\n')).toBe(true);
    expect(read('service: { final_pass: true }\n')).toBe(true);
    expect(read('service: { final_pass: false }\n')).toBe(false);
    expect(read('service: { final_pass: null }\n')).toBe(true);
    // A value that is exactly one reference takes the type its text reads as.
    expect(read('service: { final_pass: "${env:FINAL}" }\n', { ...ENV, FINAL: 'false' })).toBe(false);
    expect(problems('service: { final_pass: "no" }\n')).toEqual(['service.final_pass: must be true or false, got "no"']);
    expect(problems('service: { final_pass: 0 }\n')).toEqual(['service.final_pass: must be true or false, got 0']);
    expect(problems('service: { final_pass: { on: true } }\n')).toEqual(['service.final_pass: must be true or false, got a mapping']);
    // Reported with the other problems, each at its own path.
    expect(problems('service: { final_pass: yes please, shutdown_timeout: soon }\n')).toEqual([
      'service.shutdown_timeout: "soon" is not a duration; use units ms, s, m, h such as "5s" or "1m30s"',
      'service.final_pass: must be true or false, got "yes please"',
    ]);
  });

  test("${env:…} in any value; the error is at the value's path", () => {
    const yaml = PIPELINE.replace('"oap:11800"', '"${env:OAP_ENDPOINT}"').replace('"backup:4317"', '"${env:BACKUP_HOST:-localhost}:4317"');
    expect(problems(yaml)).toEqual([
      'exporters.otlp/oap.endpoint: environment variable OAP_ENDPOINT is not set and no default is given (write ${env:OAP_ENDPOINT:-default})',
    ]);
    const cfg = parseConfig(yaml, { ...ENV, OAP_ENDPOINT: 'oap.skywalking:11800' }, 'f', full());
    expect(cfg.raw).toMatchObject({ exporters: { 'otlp/oap': { endpoint: 'oap.skywalking:11800' }, 'otlp/backup': { endpoint: 'localhost:4317' } } });
    const typed = parseConfig(
      'receivers:\n  claude_code_local:\n    workers: ${env:W}\n    max_delta_bytes: ${env:MDB:-4KiB}\n',
      { ...ENV, W: '3' },
      'f',
      full(),
    );
    expect(localReceiverConfig(typed).workers).toBe(3);
    expect(localReceiverConfig(typed).maxDeltaBytes).toBe(4096);
  });

  test('YAML errors name the file and line; a non-mapping document is refused', () => {
    expect(problems('storage:\n  root: a\nstorage:\n  root: b\n')[0]).toMatch(/^test\.yaml:3:1: YAML: Map keys must be unique/);
    expect(problems('- a\n- b\n')).toEqual([
      '(root): the configuration must be a mapping of storage, receivers, processors, exporters, extensions, service; got a list',
    ]);
    expect(() => loadConfig('/nonexistent/aszcol.yaml', process.env, REGISTRY)).toThrow(/\/nonexistent\/aszcol\.yaml: cannot read the configuration/);
  });

  test('an alias with no anchor and an alias bomb are configuration errors naming the file, not crashes (fuzz seeds F2, F3)', () => {
    expect(problems('storage:\n  root: ./data\nextensions:\n  view:\n    endpoint: *nowhere\n')).toEqual([
      expect.stringMatching(/^test\.yaml: YAML: Unresolved alias.*nowhere/),
    ]);
    const level = (name: string, of: string) => `${name}: &${name} [${Array(10).fill(of).join(',')}]\n`;
    const bomb = level('a', '"x"') + level('b', '*a') + level('c', '*b') + level('d', '*c') + level('e', '*d') + 'storage:\n  root: ./data\n';
    expect(problems(bomb)).toEqual(['test.yaml: YAML: too many alias expansions (more than 1000); write the values out instead of nesting aliases']);
    // Found by the fuzz suite: block sequences nested 20,000 deep (`- - - … x`) overflowed the YAML parser's stack.
    expect(problems(`${'- '.repeat(20_000)}x\n`)).toEqual([
      expect.stringMatching(/^test\.yaml(:\d+:\d+)?: YAML: (Maximum call stack size exceeded|the document nests too deep to read)/),
    ]);
  });
});
