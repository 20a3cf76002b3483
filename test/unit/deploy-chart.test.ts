import { REGISTRY } from '../../src/service/registry.js';
import { localReceiverConfig } from '../../src/service/pipelines.js';
import { describe, expect, test } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { ConfigMap, PersistentVolumeClaim, Service } from 'kubernetes-models/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import { parseConfig, embeddedDefaultYaml, type AszConfig } from '../../src/service/config.js';
import { parseDuration } from '../../src/util/units.js';
import { REPO } from '../helpers/cli.js';
import { renderChart, renderTemplate, valuesPathsUsed, TemplateError, type RenderContext } from '../helpers/helm-render.js';
import { endpointKey, type OtlpExporterConfig } from '../../src/exporters/otlp/config.js';

const CHART = join(REPO, 'helm', 'aszcol');
const K8S = join(REPO, 'deploy', 'k8s');
const REGENERATE =
  'npm run build && ASZCOL_UPDATE_RENDERING=1 node --experimental-vm-modules node_modules/jest/bin/jest.js dist/test/unit/deploy-chart.test.js';

/** The committed renderings under deploy/k8s/, each with the release name and values it is rendered with. */
const RENDERINGS = [
  { file: 'helm-default.yaml', release: 'aszcol', values: undefined, about: "the chart's default values" },
  { file: 'sidecar.yaml', release: 'claude-agent', values: 'sidecar.values.yaml', about: 'sidecar.values.yaml' },
  { file: 'standalone.yaml', release: 'aszcol', values: 'standalone.values.yaml', about: 'standalone.values.yaml' },
];

function render(r: (typeof RENDERINGS)[number]): string {
  const values = r.values ? parse(readFileSync(join(K8S, r.values), 'utf8')) : undefined;
  const header = `# Rendered from helm/aszcol with ${r.about} (release ${r.release}); do not edit.\n# Regenerate: ${REGENERATE}\n`;
  return header + renderChart(CHART, { release: r.release, values }).text;
}

type Manifest = { apiVersion: string; kind: string; metadata: { name: string; labels?: Record<string, string> }; [k: string]: any };

const MODELS: Record<string, new (data: any) => { validate(): void }> = {
  'v1/ConfigMap': ConfigMap,
  'v1/Service': Service,
  'v1/PersistentVolumeClaim': PersistentVolumeClaim,
  'apps/v1/Deployment': Deployment,
};

function manifests(text: string): Manifest[] {
  return parseAllDocuments(text)
    .map((d) => {
      if (d.errors.length) throw new Error(`YAML: ${d.errors[0]!.message}`);
      return d.toJS() as Manifest;
    })
    .filter(Boolean);
}

/** Validates one manifest against the Kubernetes schema of its kind; throws naming what failed. */
function validate(m: Manifest): void {
  const Model = MODELS[`${m.apiVersion}/${m.kind}`];
  if (!Model) throw new Error(`no schema for ${m.apiVersion} ${m.kind}: the chart emits a kind this test does not know`);
  try {
    new Model(m).validate();
  } catch (err) {
    throw new Error(`${m.kind} ${m.metadata?.name}: ${(err as Error).message}`, { cause: err });
  }
}

const kindOf = (ms: Manifest[], kind: string) => ms.filter((m) => m.kind === kind);
const one = (ms: Manifest[], kind: string) => {
  const found = kindOf(ms, kind);
  expect(found).toHaveLength(1);
  return found[0]!;
};

/** The aszcol.yaml a rendering's ConfigMap carries, parsed by the real configuration loader. */
function aszcolConfig(ms: Manifest[]): AszConfig {
  const cm = one(ms, 'ConfigMap');
  return parseConfig(cm.data['aszcol.yaml'], { HOME: '/home/aszcol' }, `ConfigMap ${cm.metadata.name}`, REGISTRY);
}

const configOf = (cfg: AszConfig, id: string) => cfg.components.find((c) => c.id === id)?.config as any;

describe('the helm chart', () => {
  test('every .Values path a template uses exists in values.yaml', () => {
    const values = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8')) as Record<string, unknown>;
    const used = valuesPathsUsed(CHART);
    expect(used.length).toBeGreaterThan(20);
    const missing = used.filter(({ path }) => {
      let cur: unknown = values;
      for (const k of path.split('.')) {
        if (cur === null || typeof cur !== 'object' || !(k in (cur as object))) return true;
        cur = (cur as Record<string, unknown>)[k];
      }
      return false;
    });
    expect(missing).toEqual([]);
  });

  test.each(RENDERINGS)('the committed rendering $file is the chart rendered with $about', (r) => {
    const fresh = render(r);
    const path = join(K8S, r.file);
    if (process.env.ASZCOL_UPDATE_RENDERING) writeFileSync(path, fresh);
    let committed = '';
    try {
      committed = readFileSync(path, 'utf8');
    } catch {
      /* compared below */
    }
    if (committed !== fresh) throw new Error(`deploy/k8s/${r.file} is not the chart's current rendering; regenerate it: ${REGENERATE}`);
  });

  const variants: { name: string; values: unknown; kinds: string[] }[] = [
    { name: 'defaults (sidecar)', values: {}, kinds: ['ConfigMap', 'Deployment'] },
    {
      name: 'sidecar with persistence',
      values: { storage: { persistence: { enabled: true, storageClassName: 'fast' } } },
      kinds: ['ConfigMap', 'Deployment', 'PersistentVolumeClaim'],
    },
    {
      name: 'standalone with an existing claim',
      values: { mode: 'standalone', storage: { persistence: { enabled: true, existingClaim: 'mine' } } },
      kinds: ['ConfigMap', 'Deployment', 'Service'],
    },
    {
      name: 'standalone exporting to the OAP',
      values: { mode: 'standalone', oap: { endpoint: 'oap.skywalking:11800' } },
      kinds: ['ConfigMap', 'Deployment', 'Service'],
    },
    {
      name: 'an agent with command, args and env',
      values: { agent: { command: ['claude'], args: ['-p', 'hi'], env: [{ name: 'A', value: 'b' }] } },
      kinds: ['ConfigMap', 'Deployment'],
    },
    {
      name: "a configuration of the user's own",
      values: { config: 'storage:\n  root: /var/lib/aszcol\nreceivers:\n  claude_code_local:\n    source_root: /claude/projects\n' },
      kinds: ['ConfigMap', 'Deployment'],
    },
    { name: 'no startup probe', values: { probes: { startup: null } }, kinds: ['ConfigMap', 'Deployment'] },
  ];

  test.each(variants)('$name: every manifest validates against the Kubernetes schemas', ({ values, kinds }) => {
    const ms = manifests(renderChart(CHART, { values }).text);
    expect(ms.map((m) => m.kind).sort()).toEqual([...kinds].sort());
    for (const m of ms) validate(m);
  });

  test('the schema check is real: a broken manifest is refused', () => {
    const ms = manifests(renderChart(CHART).text);
    const d = structuredClone(one(ms, 'Deployment'));
    d.spec.template.spec.containers[0].ports = [{ containerPort: 'http' }];
    expect(() => validate(d)).toThrow(/containerPort must be integer/);
    const d2 = structuredClone(one(ms, 'Deployment'));
    delete d2.spec.selector;
    expect(() => validate(d2)).toThrow(/selector/);
  });

  test.each(RENDERINGS)('$file: every manifest validates, and the configuration inside is one aszcol accepts', (r) => {
    const ms = manifests(readFileSync(join(K8S, r.file), 'utf8'));
    for (const m of ms) validate(m);
    const cfg = aszcolConfig(ms);
    const d = one(ms, 'Deployment');
    const spec = d.spec.template.spec;
    const aszcol = [...(spec.initContainers ?? []), ...spec.containers].find((c: any) => c.name === 'aszcol');
    const portsByName = Object.fromEntries(aszcol.ports.map((p: any) => [p.name, p.containerPort]));
    // The listeners in the configuration are the container's ports; probes use them.
    expect(cfg.service.telemetry.metrics.address!.port).toBe(portsByName.metrics);
    expect(configOf(cfg, 'health_check').endpoint.port).toBe(portsByName.health);
    expect(configOf(cfg, 'claude_code_otlp').grpc.port).toBe(portsByName['otlp-grpc']);
    expect(configOf(cfg, 'claude_code_otlp').http.port).toBe(portsByName['otlp-http']);
    expect(aszcol.readinessProbe.httpGet).toEqual({ path: configOf(cfg, 'health_check').path, port: 'health' });
    expect(aszcol.livenessProbe.tcpSocket.port).toBe('health');
    expect(aszcol.startupProbe.exec.command.join(' ')).toContain(`connect(${portsByName['otlp-grpc']}, '127.0.0.1')`);
    // The storage root is the data volume; the process cannot write anywhere else.
    expect(aszcol.volumeMounts.find((v: any) => v.name === 'data').mountPath).toBe(cfg.storageRoot);
    expect(aszcol.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    // aszcol's user is its own container's; pod-wide it would land on the agent too.
    expect(aszcol.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
    expect(spec.securityContext.runAsNonRoot).toBeUndefined();
    expect(spec.securityContext.runAsUser).toBeUndefined();
    // The page's port is declared, and by default the view listens on the pod's loopback (port-forward reaches it).
    expect(configOf(cfg, 'view').endpoint).toBe(`127.0.0.1:${aszcol.ports.find((p: any) => p.name === 'view')?.containerPort}`);
    expect(aszcol.args).toEqual(['--config', '/etc/aszcol/aszcol.yaml']);
    expect(aszcol.volumeMounts.find((v: any) => v.name === 'config')).toMatchObject({ mountPath: '/etc/aszcol', readOnly: true });
    expect(spec.volumes.find((v: any) => v.name === 'config').configMap.name).toBe(one(ms, 'ConfigMap').metadata.name);
    // Kubernetes waits terminationGracePeriodSeconds before SIGKILL: the drain must fit inside.
    expect(spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(cfg.service.shutdownTimeoutMs);
    expect(d.spec.strategy.type).toBe('Recreate');
    expect(d.spec.selector.matchLabels).toEqual(
      Object.fromEntries(Object.entries(d.spec.template.metadata.labels).filter(([k]) => k in d.spec.selector.matchLabels)),
    );
  });

  test('sidecar: the agent and aszcol share the Claude directory; the agent exports OTLP to localhost:4317', () => {
    const ms = manifests(readFileSync(join(K8S, 'sidecar.yaml'), 'utf8'));
    const spec = one(ms, 'Deployment').spec.template.spec;
    const aszcol = spec.initContainers.find((c: any) => c.name === 'aszcol');
    const agent = spec.containers.find((c: any) => c.name === 'agent');
    expect(aszcol.restartPolicy).toBe('Always'); // native sidecar: up before the agent, down after it
    const env = Object.fromEntries(agent.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));
    expect(env).toMatchObject({
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://localhost:4317',
      OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      CLAUDE_CODE_ENABLE_TELEMETRY: '1',
      OTEL_LOGS_EXPORTER: 'otlp',
      OTEL_METRICS_EXPORTER: 'otlp',
    });
    expect(env.ANTHROPIC_API_KEY).toEqual({ secretKeyRef: { name: 'anthropic', key: 'api-key' } });
    const shared = spec.volumes.find((v: any) => v.name === 'claude-config');
    expect(shared).toEqual({ name: 'claude-config', emptyDir: {} });
    const agentMount = agent.volumeMounts.find((v: any) => v.name === 'claude-config');
    const aszcolMount = aszcol.volumeMounts.find((v: any) => v.name === 'claude-config');
    expect(aszcolMount).toEqual({ name: 'claude-config', mountPath: agentMount.mountPath, readOnly: true });
    expect(env.CLAUDE_CONFIG_DIR).toBe(agentMount.mountPath);
    const cfg = aszcolConfig(ms);
    // aszcol reads the transcripts the agent writes into the shared directory.
    expect(localReceiverConfig(cfg).sourceRoot).toBe(`${agentMount.mountPath}/projects`);
    expect(cfg.service.pipelines.find((p) => p.id === 'sessions')!.receivers).toEqual(['claude_code_local', 'claude_code_otlp']);
    // Inside the pod only: OTLP on loopback; health and metrics reachable by the kubelet and Prometheus.
    expect(configOf(cfg, 'claude_code_otlp').grpc.host).toBe('127.0.0.1');
    // Beside its only client: a crash of the node takes the agent's unsent batches too.
    expect(configOf(cfg, 'claude_code_otlp').durability).toBe('process');
    expect(configOf(cfg, 'health_check').endpoint.host).toBe('0.0.0.0');
    expect(kindOf(ms, 'Service')).toEqual([]);
    expect(one(ms, 'PersistentVolumeClaim').metadata.name).toBe('claude-agent-data');
  });

  test('standalone: a Service in front of the OTLP ports, listening on every interface', () => {
    const ms = manifests(readFileSync(join(K8S, 'standalone.yaml'), 'utf8'));
    const d = one(ms, 'Deployment');
    const svc = one(ms, 'Service');
    expect(d.spec.template.spec.initContainers).toBeUndefined();
    const aszcol = d.spec.template.spec.containers.find((c: any) => c.name === 'aszcol');
    for (const [k, v] of Object.entries(svc.spec.selector)) expect(d.spec.template.metadata.labels[k]).toBe(v);
    const named = new Set(aszcol.ports.map((p: any) => p.name));
    for (const p of svc.spec.ports) expect(named.has(p.targetPort)).toBe(true);
    expect(svc.spec.ports.map((p: any) => p.port)).toEqual([4317, 4318, 8888]);
    const cfg = aszcolConfig(ms);
    expect(configOf(cfg, 'claude_code_otlp').grpc.host).toBe('0.0.0.0');
    // Its clients run on other nodes: an answer means the request is on this node's disk.
    expect(configOf(cfg, 'claude_code_otlp').durability).toBe('machine');
    expect(cfg.service.pipelines[0]!.receivers).toEqual(['claude_code_otlp']);
  });

  test('oap.endpoint reaches either OAP port: host:port is gRPC (11800), a URL is OTLP/HTTP on the core port (12800); sessions and metrics both go there', () => {
    for (const [endpoint, protocol, key] of [
      ['oap.skywalking:11800', 'grpc', 'grpc://oap.skywalking:11800'],
      ['http://oap.skywalking:12800', 'http', 'http://oap.skywalking:12800'],
    ] as const) {
      const ms = manifests(renderChart(CHART, { values: { oap: { endpoint, instanceId: 'team-a@cluster-1' } } }).text);
      const text = one(ms, 'ConfigMap').data['aszcol.yaml'] as string;
      const doc = parse(text);
      expect(doc.exporters).toEqual({ 'otlp/oap': { endpoint, instance_id: 'team-a@cluster-1' } });
      expect(doc.service.pipelines.sessions.exporters).toEqual(['otlp/oap']);
      expect(doc.service.pipelines.metrics).toEqual({ receivers: ['claude_code_otlp'], exporters: ['otlp/oap'] });
      const cfg = parseConfig(text, {}, 'oap', REGISTRY);
      const exporter = cfg.components.find((c) => c.id === 'otlp/oap')!.config as OtlpExporterConfig;
      expect({ protocol: exporter.protocol, receiver: endpointKey(exporter), layer: exporter.layer, instance: exporter.instanceId }).toEqual({
        protocol,
        receiver: key,
        layer: 'AI_AGENT',
        instance: 'team-a@cluster-1',
      });
    }
    // Said outright, the protocol is written as said.
    const forced = parse(
      one(manifests(renderChart(CHART, { values: { oap: { endpoint: 'http://oap:12800', protocol: 'grpc' } } }).text), 'ConfigMap').data[
        'aszcol.yaml'
      ] as string,
    );
    expect(forced.exporters['otlp/oap'].protocol).toBe('grpc');
  });

  test('the deployed configurations run every processor and extension the embedded default runs', () => {
    const embedded = parseConfig(embeddedDefaultYaml(REGISTRY), { HOME: '/h' }, 'embedded', REGISTRY);
    const wanted = embedded.components.filter((c) => c.kind === 'processor' || c.kind === 'extension').map((c) => c.path);
    const sources = [
      ...RENDERINGS.map((r) => ({
        where: `deploy/k8s/${r.file} (helm/aszcol/templates/configmap.yaml)`,
        cfg: aszcolConfig(manifests(readFileSync(join(K8S, r.file), 'utf8'))),
      })),
      {
        where: 'deploy/aszcol.container.yaml',
        cfg: parseConfig(readFileSync(join(REPO, 'deploy', 'aszcol.container.yaml'), 'utf8'), { HOME: '/h' }, 'container', REGISTRY),
      },
    ];
    for (const { where, cfg } of sources) {
      const running = new Set([
        ...cfg.service.pipelines.flatMap((p) => p.processors.map((id) => `processors.${id}`)),
        ...cfg.service.extensions.map((id) => `extensions.${id}`),
      ]);
      const lacking = wanted.filter((w) => !running.has(w));
      if (lacking.length) throw new Error(`${where} does not run ${lacking.join(', ')}, which the embedded default runs: add them there`);
    }
  });

  test('sidecar: the agent runs as its image says, with only the securityContext given for it', () => {
    const plain = manifests(readFileSync(join(K8S, 'sidecar.yaml'), 'utf8'));
    const agentOf = (ms: Manifest[]) => one(ms, 'Deployment').spec.template.spec.containers.find((c: any) => c.name === 'agent');
    expect(agentOf(plain).securityContext).toBeUndefined();
    const given = manifests(renderChart(CHART, { values: { agent: { securityContext: { runAsUser: 4242 } } } }).text);
    for (const m of given) validate(m);
    expect(agentOf(given).securityContext).toEqual({ runAsUser: 4242 });
  });

  test('view.expose serves the page on the pod IP, on the standalone Service, answering the listed host names', () => {
    const values = { mode: 'standalone', view: { expose: true, allowedHosts: ['aszcol.example.com', 'aszcol.agents.svc'] } };
    const ms = manifests(renderChart(CHART, { values }).text);
    for (const m of ms) validate(m);
    const cfg = aszcolConfig(ms);
    const view = configOf(cfg, 'view');
    expect(view.endpoint).toBe('0.0.0.0:8787');
    expect(view.allowedHosts).toEqual(['aszcol.example.com', 'aszcol.agents.svc']);
    const svc = one(ms, 'Service');
    expect(svc.spec.ports.find((p: any) => p.name === 'view')).toMatchObject({ port: 8787, targetPort: 'view' });
    // Not exposed: no Service port for the page.
    const hidden = manifests(renderChart(CHART, { values: { mode: 'standalone' } }).text);
    expect(one(hidden, 'Service').spec.ports.map((p: any) => p.name)).not.toContain('view');
  });

  test('view.hide and oap.hide reach the page and the export: unset, the export withholds what the page does; [] sends everything', () => {
    const exporterOf = (values: unknown) => {
      const ms = manifests(renderChart(CHART, { values }).text);
      for (const m of ms) validate(m);
      const cfg = aszcolConfig(ms);
      return { view: configOf(cfg, 'view') as { hide?: string[] }, exporter: configOf(cfg, 'otlp/oap') as OtlpExporterConfig };
    };
    const endpoint = 'oap.skywalking:11800';
    // The page withholds prompts and tool outputs; the exporter, told nothing, inherits them.
    const inherited = exporterOf({ oap: { endpoint }, view: { hide: ['user_prompts', 'tool_outputs'] } });
    expect(inherited.view.hide).toEqual(['user_prompts', 'tool_outputs']);
    expect({ hide: inherited.exporter.hide, from: inherited.exporter.hideFrom }).toEqual({ hide: ['user_prompts', 'tool_outputs'], from: 'extensions.view' });
    // An empty list is said, not dropped: the export sends everything whatever the page withholds.
    const everything = exporterOf({ oap: { endpoint, hide: [] }, view: { hide: ['user_prompts'] } });
    expect({ hide: everything.exporter.hide, from: everything.exporter.hideFrom }).toEqual({ hide: [], from: undefined });
    // Its own list, with nothing withheld on the page.
    const own = exporterOf({ oap: { endpoint, hide: ['api_bodies', 'system_prompt'] } });
    expect(own.view.hide).toBeUndefined();
    expect(own.exporter.hide).toEqual(['api_bodies', 'system_prompt']);
    // The defaults write neither: the committed renderings stay as they were.
    const plain = one(manifests(renderChart(CHART, { values: { oap: { endpoint } } }).text), 'ConfigMap').data['aszcol.yaml'] as string;
    expect(plain).not.toMatch(/hide:/);
    // A name the collector does not know is refused by the real loader, at its path in the ConfigMap.
    expect(() => exporterOf({ oap: { endpoint, hide: ['bodies'] } })).toThrow(
      /exporters\.otlp\/oap\.hide\[0\]: "bodies" is not a category that can be withheld/,
    );
    expect(() => exporterOf({ view: { hide: ['prompts'] } })).toThrow(/extensions\.view\.hide\[0\]: "prompts" is not a category that can be withheld/);
  });

  test('terminationGracePeriodSeconds in values is longer than shutdownTimeout', () => {
    const values = parse(readFileSync(join(CHART, 'values.yaml'), 'utf8'));
    expect(values.terminationGracePeriodSeconds * 1000).toBeGreaterThan(parseDuration(values.shutdownTimeout));
  });
});

describe('the template renderer', () => {
  const ctx = (values: unknown): RenderContext => ({
    Values: values,
    Release: { Name: 'r', Namespace: 'n', Service: 'Helm' },
    Chart: { Name: 'c', Version: '1', AppVersion: '2' },
  });

  test('trimming, if / else if / else, pipes, quote, toYaml with nindent', () => {
    const t =
      'a:\n  {{- if eq .Values.m "x" }}\n  x: {{ .Values.n | quote }}\n  {{- else if .Values.o }}\n  o: 1\n  {{- else }}\n  z: {{ .Release.Name }}\n  {{- end }}\nb: {{- toYaml .Values.l | nindent 2 }}\n{{/* a comment */}}';
    expect(renderTemplate(t, ctx({ m: 'x', n: 5, o: false, l: { b: 1, a: [1] } }))).toBe('a:\n  x: "5"\nb:\n  a:\n    - 1\n  b: 1\n');
    expect(renderTemplate(t, ctx({ m: 'y', n: 5, o: true, l: [] }))).toBe('a:\n  o: 1\nb:\n  []\n');
    expect(renderTemplate(t, ctx({ m: 'y', n: 5, o: '', l: 'text' }))).toBe('a:\n  z: r\nb:\n  text\n');
    // kindIs tells an empty list from an absent value, which if cannot.
    const k =
      '{{ kindIs "slice" .Values.a }}|{{ kindIs "slice" .Values.b }}|{{ kindIs "invalid" .Values.b }}|{{ kindIs "map" .Values.c }}|{{ if .Values.a }}x{{ end }}';
    expect(renderTemplate(k, ctx({ a: [], b: null, c: { d: 1 } }))).toBe('true|false|true|true|');
    expect(
      renderTemplate('{{ and .Values.a (not .Values.b) }}|{{ .Values.c | default "d" }}|{{ .Values.e | indent 2 }}', ctx({ a: 'A', b: '', c: '', e: 'x\ny' })),
    ).toBe('true|d|  x\n  y'); // Go's and returns its last argument
  });

  test('a missing value, an unknown function or unsupported syntax is an error naming the template line', () => {
    expect(() => renderTemplate('x\n{{ .Values.a.b }}', ctx({ a: {} }), 't.yaml')).toThrow(TemplateError);
    expect(() => renderTemplate('x\n{{ .Values.a.b }}', ctx({ a: {} }), 't.yaml')).toThrow('t.yaml: {{ .Values.a.b }}: .Values.a.b does not exist');
    expect(() => renderTemplate('{{ b64enc .Values.a }}', ctx({ a: 1 }), 't.yaml')).toThrow('function b64enc is not supported');
    expect(() => renderTemplate('{{ range .Values.a }}{{ end }}', ctx({ a: [] }), 't.yaml')).toThrow('t.yaml:1: range is not supported');
    expect(() => renderTemplate('{{ if .Values.a }}', ctx({ a: 1 }), 't.yaml')).toThrow('missing {{ end }}');
  });
});
