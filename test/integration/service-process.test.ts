import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { runCli } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { rec, writeLines } from '../helpers/transcript.js';
import { mainPath, TranscriptBuilder } from '../helpers/cc.js';
import { foldOf } from '../helpers/parse.js';
import { attrs, sinkForTests } from './export-sink.js';
import { landedFiles, recordsOf } from '../helpers/root.js';
import { locksUnder, pollHttp, startService } from '../helpers/service.js';
import { REGISTRY } from '../../src/service/registry.js';

afterAll(cleanupTemp);

const sid = (i: number) => `7e1f0c2a-2222-4333-8444-${String(i).padStart(12, '0')}`;

/** A storage root, a source root and a pipeline YAML listening on ephemeral loopback ports only. */
/** A temporary base with a storage root and a source root, and the start of a configuration: storage and the local receiver. */
function configBase(interval: string) {
  const base = tempDir();
  const root = join(base, 'data');
  const src = join(base, 'projects');
  mkdirSync(src, { recursive: true });
  const config = join(base, 'aszcol.yaml');
  const head = `storage:
  root: ${JSON.stringify(root)}
receivers:
  claude_code_local:
    source_root: ${JSON.stringify(src)}
    exclude: []
    interval: ${interval}
`;
  return { base, root, src, config, head };
}

function setup(extra = '', local = '') {
  const { base, root, src, config, head } = configBase('200ms');
  writeFileSync(
    config,
    `${head}${local}extensions:
  health_check:
    endpoint: 127.0.0.1:0
service:
  extensions: [health_check]
  pipelines:
    sessions:
      receivers: [claude_code_local]
  telemetry:
    metrics:
      address: 127.0.0.1:0
    logs:
      level: info
${extra}`,
  );
  return { base, root, src, config };
}

describe('aszcol as a service process', () => {
  test('serves /metrics and health, lands what exists, and drains on SIGTERM with exit 0 and no lock left', async () => {
    const { root, src, config } = setup('  shutdown_timeout: 10s\n');
    for (let i = 1; i <= 3; i++) writeLines(join(src, '-w', `${sid(i)}.jsonl`), [rec.user(sid(i), 'one'), rec.user(sid(i), 'two')]);
    const svc = startService(['--config', config]);
    const addrs = await svc.addresses();
    expect(Object.keys(addrs).sort()).toEqual(['extensions/health_check.endpoint', 'telemetry']);
    for (const a of Object.values(addrs)) expect(a).toMatch(/^127\.0\.0\.1:\d+$/);

    const health = await pollHttp(`http://${addrs['extensions/health_check.endpoint']}/`, (s) => s === 200);
    expect(health.status).toBe(200);
    const hb = JSON.parse(health.body);
    expect(hb).toMatchObject({ status: 'ok', reasons: [], last_pass: { ok: true } });
    expect(Object.keys(hb.components).sort()).toEqual(['extensions/health_check', 'receivers/claude_code_local']);

    const metrics = await (await fetch(`http://${addrs.telemetry}/metrics`)).text();
    expect(metrics).toMatch(/^aszcol_landed_records_total\{receiver="claude_code_local"\} 6$/m);
    expect(metrics).toMatch(/^aszcol_sources_in_conflict\{receiver="claude_code_local"\} 0$/m);
    expect(metrics).toMatch(/^aszcol_pass_duration_seconds_count\{outcome="ok"\} [1-9]\d*$/m);
    expect(metrics).toMatch(/^process_resident_memory_bytes \d+/m);

    // A line appended while it runs lands on a later pass.
    writeLines(join(src, '-w', `${sid(1)}.jsonl`), [rec.user(sid(1), 'three')], { append: true });
    await svc.waitFor(
      (r) => r.msg === 'pass finished' && (r.counts as Record<string, Record<string, number>>)['receivers/claude_code_local']!.landed_records === 1,
      10_000,
    );

    const t0 = Date.now();
    svc.child.kill('SIGTERM');
    const { code, at } = await svc.exited;
    expect(code).toBe(0);
    expect(at - t0).toBeLessThan(10_000);
    expect(svc.logs.map((l) => l.msg)).toEqual(expect.arrayContaining(['signal received: draining', 'service stopped']));
    expect(svc.logs.filter((l) => l.level === 'error')).toEqual([]);
    expect(locksUnder(root)).toEqual([]);
    expect(recordsOf(landedFiles(root, sid(1)))).toHaveLength(3);
    // Every log line is one JSON object with a time stamp and a level.
    for (const l of svc.logs)
      expect(l).toMatchObject({ ts: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), level: expect.stringMatching(/^(debug|info|warn|error)$/) });
    expect(svc.plain).toEqual([]);
  });

  test('SIGTERM during a long pass: the pass in flight finishes (everything lands), then exit 0 with locks released', async () => {
    const { root, src, config } = setup('  shutdown_timeout: 60s\n', '    workers: 2\n');
    const N = 40;
    const line = 'x'.repeat(1500);
    for (let i = 0; i < N; i++) {
      writeLines(
        join(src, '-big', `${sid(100 + i)}.jsonl`),
        Array.from({ length: 1000 }, (_, j) => rec.user(sid(100 + i), `${i}/${j} ${line}`)),
      );
    }
    const svc = startService(['--config', config]);
    await svc.addresses(); // the first pass starts right after this line
    svc.child.kill('SIGTERM');
    const { code } = await svc.exited;
    expect(code).toBe(0);
    const msgs = svc.logs.map((l) => l.msg);
    const signalled = msgs.indexOf('signal received: draining');
    const passDone = svc.logs.findIndex((l) => l.msg === 'pass finished' && l.pass === 1);
    expect(signalled).toBeGreaterThanOrEqual(0);
    // The signal arrived while pass 1 was in flight, and the drain waited for it.
    expect(passDone).toBeGreaterThan(signalled);
    expect(msgs.indexOf('service stopped')).toBeGreaterThan(passDone);
    // No regular pass followed: pass 2 is the shutdown's final pass (nothing new to land), and the last.
    expect(svc.logs.filter((l) => l.msg === 'pass finished' && l.pass === 2)).toEqual([expect.objectContaining({ final: true, ok: true })]);
    expect(svc.logs.some((l) => (l.pass as number) > 2)).toBe(false);
    expect(locksUnder(root)).toEqual([]);
    for (let i = 0; i < N; i++) expect(recordsOf(landedFiles(root, sid(100 + i)))).toHaveLength(1000);
    const verify = await runCli(['verify', '--config', config]);
    expect(verify.code).toBe(0);
  });

  test('SIGINT drains the same way', async () => {
    const { config } = setup();
    const svc = startService(['--config', config]);
    await svc.addresses();
    await svc.waitFor((r) => r.msg === 'pass finished');
    svc.child.kill('SIGINT');
    expect((await svc.exited).code).toBe(0);
    expect(svc.logs.find((l) => l.msg === 'signal received: draining')!.signal).toBe('SIGINT');
  });

  test('a port that is taken: the service says which and exits 1 without leaving anything running', async () => {
    const blocker = createServer();
    await new Promise<void>((r) => blocker.listen(0, '127.0.0.1', () => r()));
    const port = (blocker.address() as { port: number }).port;
    try {
      const { config } = setup();
      writeFileSync(config, (await import('node:fs')).readFileSync(config, 'utf8').replace('endpoint: 127.0.0.1:0', `endpoint: 127.0.0.1:${port}`));
      const svc = startService(['--config', config]);
      const { code } = await svc.exited;
      if (!svc.logs.length) throw new Error(JSON.stringify({ code, plain: svc.plain, out: svc.stdout() }));
      expect(code).toBe(1);
      const err = svc.logs.find((l) => l.msg === 'service could not start');
      expect(err?.error).toBe(
        `extensions/health_check failed to start: cannot listen on 127.0.0.1:${port}: listen EADDRINUSE: address already in use 127.0.0.1:${port}`,
      );
    } finally {
      blocker.close();
    }
  });

  test('a configuration with an unknown key never starts: exit 2, the exact path on stderr', async () => {
    const { config } = setup('  pipeline_timeout: 5s\n');
    const svc = startService(['--config', config]);
    const { code } = await svc.exited;
    expect(code).toBe(2);
    expect(svc.plain).toContain(
      'aszcol: configuration error: service.pipeline_timeout: unknown key; allowed here: extensions, pipelines, telemetry, shutdown_timeout, final_pass',
    );
    expect(svc.logs).toEqual([]);
  });
});

describe('the final pass on SIGTERM', () => {
  const sink = sinkForTests();

  /**
   * The local receiver with an interval no test waits out (so after pass 1 only the final pass can
   * land anything), the assembler, and, unless `exporter: false`, an otlp exporter to the sink.
   * Nothing listens (telemetry off, no extension): the pass timer alone keeps the process waiting
   * for the signal.
   */
  function finalSetup(opts: { service?: string; exporter?: boolean } = {}) {
    const { root, src, config, head } = configBase('1h');
    const exporter = opts.exporter !== false;
    // No watch: what is written after the last pass is the final pass's to take, not a nudged pass's.
    writeFileSync(
      config,
      `${head}    watch: false
processors:
  assembler:
${exporter ? `exporters:\n  otlp/sink:\n    endpoint: ${sink.grpcAddress}\n` : ''}service:
  pipelines:
    sessions:
      receivers: [claude_code_local]
      processors: [assembler]
${exporter ? '      exporters: [otlp/sink]\n' : ''}  telemetry:
    metrics:
      address: ""
${opts.service ?? ''}`,
    );
    return { root, src, config };
  }

  /** One prompt and its answer, written as Claude Code would: two transcript lines. */
  function writeCycle(src: string, session: string): void {
    const b = new TranscriptBuilder(session);
    b.prompt('written after the last pass', 'p-final-1');
    b.fragment('msg_final_1', { type: 'text', text: 'landed on the way out' });
    b.write(mainPath(src, '-w', session));
  }

  /** The sink's accepted log records for a session, by format (sd: landed files, sf: rounds). */
  const sentFor = (session: string, since = 0) =>
    sink
      .logRecords()
      .slice(since)
      .map((r) => attrs(r.record.attributes))
      .filter((a) => a['asz.session'] === session)
      .map((a) => a['asz.format']);

  test('what was written after the last pass is landed, parsed and sent before exit 0', async () => {
    const { root, src, config } = finalSetup({ service: '  shutdown_timeout: 10s\n' });
    const session = sid(300);
    const svc = startService(['--config', config]);
    await svc.waitFor((r) => r.msg === 'pass finished' && r.pass === 1);
    writeCycle(src, session);
    const since = sink.logRecords().length;
    const t0 = Date.now();
    svc.child.kill('SIGTERM');
    const { code, at } = await svc.exited;
    expect(code).toBe(0);
    expect(at - t0).toBeLessThan(10_000);
    const final = svc.logs.find((l) => l.msg === 'pass finished' && l.final === true);
    expect(final).toMatchObject({ level: 'info', pass: 2, ok: true });
    const counts = final!.counts as Record<string, Record<string, number>>;
    expect(counts['receivers/claude_code_local']!.landed_records).toBe(2);
    expect(counts['processors/assembler']!.rounds).toBeGreaterThanOrEqual(1);
    expect(counts['exporters/otlp/sink']!.log_files).toBeGreaterThanOrEqual(2);
    // On disk: landed and parsed.
    expect(recordsOf(landedFiles(root, session))).toHaveLength(2);
    expect(foldOf(root, session).chain.rounds.length).toBeGreaterThanOrEqual(1);
    // At the receiver: the landed transcript and the round.
    const sent = sentFor(session, since);
    expect(sent).toContain('sd');
    expect(sent).toContain('sf');
    const msgs = svc.logs.map((l) => l.msg);
    expect(msgs.indexOf('signal received: draining')).toBeLessThan(msgs.indexOf('final pass: landing and sending what arrived since the last pass'));
    expect(msgs.indexOf('final pass: landing and sending what arrived since the last pass')).toBeLessThan(msgs.indexOf('service stopped'));
    expect(svc.logs.filter((l) => l.level === 'error' || l.level === 'warn')).toEqual([]);
    expect(locksUnder(root)).toEqual([]);
  });

  test('a final pass that runs into service.shutdown_timeout is cut: exit 0 in time, and what it did not send goes at the next start', async () => {
    const { root, src, config } = finalSetup({ service: '  shutdown_timeout: 3s\n' });
    const session = sid(301);
    const svc = startService(['--config', config]);
    await svc.waitFor((r) => r.msg === 'pass finished' && r.pass === 1);
    writeCycle(src, session);
    sink.fault({ kind: 'hang' }); // the final pass's first request never gets an answer
    const t0 = Date.now();
    svc.child.kill('SIGTERM');
    const { code, at } = await svc.exited;
    expect(code).toBe(0); // a drain past the deadline would exit 1
    // Aborted 600 ms before the 3 s deadline. Exit 0 is the service's own word that it met the
    // deadline; the wall-clock bound only catches a hang, since a loaded machine delays the exit.
    expect(at - t0).toBeGreaterThanOrEqual(2000);
    expect(at - t0).toBeLessThan(10_000);
    expect(svc.logs.find((l) => l.msg.startsWith('final pass cut short'))).toMatchObject({
      level: 'warn',
      component: 'service',
      pass: 2,
      msg: 'final pass cut short by service.shutdown_timeout; what was not landed or sent stays on disk for the next start',
    });
    expect(locksUnder(root)).toEqual([]);
    // Landed (the land stage came before the cut), not sent.
    expect(recordsOf(landedFiles(root, session))).toHaveLength(2);
    expect(sentFor(session)).toEqual([]);

    const again = startService(['--config', config]);
    await again.waitFor((r) => r.msg === 'pass finished' && r.pass === 1);
    expect(sentFor(session)).toContain('sd');
    again.child.kill('SIGTERM');
    expect((await again.exited).code).toBe(0);
    expect(recordsOf(landedFiles(root, session))).toHaveLength(2);
  });

  test('service.final_pass: false: nothing written after the last pass lands on the way out; the next start lands it', async () => {
    const { root, src, config } = finalSetup({ exporter: false, service: '  final_pass: false\n' });
    const session = sid(302);
    const svc = startService(['--config', config]);
    await svc.waitFor((r) => r.msg === 'pass finished' && r.pass === 1);
    writeCycle(src, session);
    svc.child.kill('SIGTERM');
    expect((await svc.exited).code).toBe(0);
    expect(svc.logs.some((l) => l.final === true)).toBe(false);
    expect(svc.logs.find((l) => l.msg.startsWith('final pass'))).toMatchObject({
      level: 'info',
      msg: 'final pass off (service.final_pass: false): what arrived since the last pass is landed and sent at the next start',
    });
    expect(landedFiles(root, session)).toEqual([]);

    const again = startService(['--config', config]);
    await again.waitFor((r) => r.msg === 'pass finished' && r.pass === 1);
    again.child.kill('SIGTERM');
    expect((await again.exited).code).toBe(0);
    expect(recordsOf(landedFiles(root, session))).toHaveLength(2);
  });
});

/** Which of these loopback ports something else already listens on. */
async function busyPorts(ports: number[]): Promise<number[]> {
  const busy: number[] = [];
  for (const port of ports) {
    const srv = createServer();
    const ok = await new Promise<boolean>((r) => {
      srv.once('error', () => r(false));
      srv.listen(port, '127.0.0.1', () => r(true));
    });
    if (ok) await new Promise((r) => srv.close(r));
    else busy.push(port);
  }
  return busy;
}

describe('npm start: the embedded default', () => {
  test('no --config: local receiver on the default source root, OTLP on 4317/4318, health on 13133, /metrics on 8888, no export', async () => {
    const ports = [4317, 4318, 8888, 13133];
    expect(await busyPorts(ports)).toEqual([]); // the embedded default's fixed ports must be free on this machine
    const home = tempDir();
    const cwd = tempDir();
    writeLines(join(home, '.claude', 'projects', '-home-me', `${sid(50)}.jsonl`), [rec.user(sid(50), 'from history')]);
    const svc = startService([], { cwd, env: { HOME: home, CLAUDE_CONFIG_DIR: '', XDG_CONFIG_HOME: '' } });
    const a = await svc.addresses();
    const otlp = REGISTRY.find((t) => t.type === 'claude_code_otlp')!.factory !== undefined;
    expect(a).toMatchObject({ telemetry: '127.0.0.1:8888', 'extensions/health_check.endpoint': '127.0.0.1:13133' });
    if (otlp) expect(a).toMatchObject({ 'receivers/claude_code_otlp.grpc': '127.0.0.1:4317', 'receivers/claude_code_otlp.http': '127.0.0.1:4318' });
    expect(Object.keys(a).some((k) => k.startsWith('exporters/'))).toBe(false);
    expect((await svc.waitFor((r) => r.msg === 'watching source root')).source_root).toBe(join(home, '.claude', 'projects'));
    expect((await pollHttp('http://127.0.0.1:13133/', (st) => st === 200)).status).toBe(200);
    expect(await (await fetch('http://127.0.0.1:8888/metrics')).text()).toMatch(/^aszcol_landed_records_total\{receiver="claude_code_local"\} 1$/m);
    svc.child.kill('SIGTERM');
    expect((await svc.exited).code).toBe(0);
    expect(recordsOf(landedFiles(join(cwd, 'data'), sid(50)))).toHaveLength(1);
    expect(locksUnder(join(cwd, 'data'))).toEqual([]);
    expect(await busyPorts(ports)).toEqual([]);
  });
});

describe('the OTLP receiver inside the service', () => {
  const otlpAvailable = REGISTRY.find((t) => t.type === 'claude_code_otlp')!.factory !== undefined;
  (otlpAvailable ? test : test.skip)('lands what Claude Code would send, counts accepted and refused in /metrics, drains', async () => {
    const { root, config } = setup('', '');
    const text = (await import('node:fs'))
      .readFileSync(config, 'utf8')
      .replace(
        '    interval: 200ms\n',
        '    interval: 200ms\n  claude_code_otlp:\n    protocols:\n      grpc: { endpoint: "127.0.0.1:0" }\n      http: { endpoint: "127.0.0.1:0" }\n',
      )
      .replace('receivers: [claude_code_local]', 'receivers: [claude_code_local, claude_code_otlp]');
    writeFileSync(config, text);
    const svc = startService(['--config', config]);
    const a = await svc.addresses();
    expect(a['receivers/claude_code_otlp.grpc']).toMatch(/^127\.0\.0\.1:\d+$/);
    const http = a['receivers/claude_code_otlp.http']!;
    const body = {
      resourceLogs: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'claude-code' } }] },
          scopeLogs: [
            {
              scope: { name: 'com.anthropic.claude_code.events' },
              logRecords: [
                {
                  timeUnixNano: '1764480000000000000',
                  body: { stringValue: 'claude_code.tool_result' },
                  attributes: [
                    { key: 'session.id', value: { stringValue: sid(7) } },
                    { key: 'tool_use_id', value: { stringValue: 'toolu_01' } },
                  ],
                },
                {
                  timeUnixNano: '1764480000000000001',
                  body: { stringValue: 'claude_code.api_request' },
                  attributes: [
                    { key: 'session.id', value: { stringValue: sid(7) } },
                    { key: 'request_id', value: { stringValue: 'req_01' } },
                  ],
                },
              ],
            },
          ],
        },
      ],
    };
    const ok = await fetch(`http://${http}/v1/logs`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
    expect(ok.status).toBe(200);
    const bad = await fetch(`http://${http}/v1/logs`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-protobuf' },
      body: new Uint8Array([0xff, 0xff, 0xff, 0xff]),
    });
    expect(bad.status).toBe(400);
    // The counters reach /metrics at the next pass.
    let metrics = '';
    for (let i = 0; i < 50; i++) {
      metrics = await (await fetch(`http://${a.telemetry}/metrics`)).text();
      if (/^aszcol_receiver_accepted_log_records_total\{receiver="claude_code_otlp"\} 2$/m.test(metrics)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(metrics).toMatch(/^aszcol_receiver_accepted_log_records_total\{receiver="claude_code_otlp"\} 2$/m);
    expect(metrics).toMatch(/^aszcol_receiver_refused_requests_total\{receiver="claude_code_otlp",reason="[a-z_]+"\} 1$/m);
    expect(metrics).toMatch(/^aszcol_landed_records_total\{receiver="claude_code_otlp"\} 2$/m);
    expect(metrics).toMatch(/^aszcol_receiver_requests_total\{receiver="claude_code_otlp",transport="http"\} 2$/m);
    // The journal: everything answered has landed by the pass that reported it.
    expect(metrics).toMatch(/^aszcol_receiver_journal_bytes\{receiver="claude_code_otlp"\} 0$/m);
    expect(metrics).toMatch(/^aszcol_receiver_waiting_sessions\{receiver="claude_code_otlp"\} 0$/m);
    expect(metrics).toMatch(/^aszcol_receiver_journal_damaged_total\{receiver="claude_code_otlp"\} 0$/m);
    svc.child.kill('SIGTERM');
    expect((await svc.exited).code).toBe(0);
    expect(locksUnder(root)).toEqual([]);
    const landed = landedFiles(root, sid(7));
    expect(landed.map((f) => f.header.kind)).toEqual(['otlp_log']);
    expect(recordsOf(landed)).toHaveLength(2);
  });
});

describe('aszcol validate', () => {
  test('a valid configuration: exit 0 and what would run; --json for scripts', async () => {
    const { config } = setup();
    const r = await runCli(['validate', '--config', config]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^configuration is valid: .*aszcol\.yaml$/m);
    expect(r.stdout).toMatch(/^pipeline sessions: receivers claude_code_local; processors -; exporters -$/m);
    const j = await runCli(['validate', '--config', config, '--json']);
    if (!j.stdout) throw new Error(JSON.stringify(j));
    expect(JSON.parse(j.stdout)).toMatchObject({
      valid: true,
      extensions: ['health_check'],
      pipelines: { sessions: { receivers: ['claude_code_local'] } },
      shutdown_timeout_ms: 30_000,
    });
  });

  test('the embedded default is valid', async () => {
    const r = await runCli(['validate'], { cwd: tempDir() });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^configuration is valid: \(embedded default\)$/m);
  });

  test('every problem, each at its exact path, exit 2', async () => {
    const { base } = setup();
    const bad = join(base, 'bad.yaml');
    const otlp = REGISTRY.find((t) => t.type === 'otlp')!.factory !== undefined;
    writeFileSync(
      bad,
      `receivers:
  claude_code_local:
    interval: 5 minutes
    max_delta_byte: 2MiB
exporters:
  otlp/oap:
    endpoint: \${env:ASZCOL_TEST_NO_SUCH_VAR}
extensions:
  health_check: { endpoint: "127.0.0.1:70000" }
service:
  extensions: [health_check]
  pipelines:
    sessions: { receivers: [claude_code_local], exporters: [otlp/oap] }
    logs: { receivers: [claude_code_local] }
`,
    );
    let r = await runCli(['validate', '--config', bad]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    // The environment is expanded first, so this error comes alone, at the value's path.
    expect(r.stderr.trim()).toBe(
      'aszcol: configuration error: exporters.otlp/oap.endpoint: environment variable ASZCOL_TEST_NO_SUCH_VAR is not set and no default is given (write ${env:ASZCOL_TEST_NO_SUCH_VAR:-default})',
    );

    r = await runCli(['validate', '--config', bad], { env: { ASZCOL_TEST_NO_SUCH_VAR: 'oap:11800' } });
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toEqual(
      expect.arrayContaining([
        'aszcol: configuration error: receivers.claude_code_local.max_delta_byte: unknown key; allowed here: source_root, include, exclude, interval, max_delta_bytes, workers, provider_bodies, hook_endpoint, watch, batch_sync',
        'aszcol: configuration error: extensions.health_check.endpoint: port 70000 is out of range 0-65535',
        'aszcol: configuration error: service.pipelines.logs: unknown pipeline type; a pipeline is named by its type, optionally with /name: sessions, metrics (such as metrics/oap)',
      ]),
    );
    if (!otlp)
      expect(lines).toContain(
        'aszcol: configuration error: exporters.otlp/oap: the otlp exporter is not available in this build; available exporters: ' +
          (REGISTRY.find((t) => t.type === 'prometheus')!.factory ? 'prometheus' : '(none)'),
      );
    // The same file refused by the service and by a one-shot command, with the same lines.
    const svc = await runCli(['--config', bad], { env: { ASZCOL_TEST_NO_SUCH_VAR: 'oap:11800' } });
    expect(svc.code).toBe(2);
    expect(svc.stderr.trim().split('\n')).toEqual(lines);
    expect((await runCli(['collect', '--once', '--config', bad], { env: { ASZCOL_TEST_NO_SUCH_VAR: 'oap:11800' } })).code).toBe(2);
  });

  test('an unreadable or missing file, and YAML that does not parse', async () => {
    const dir = tempDir();
    let r = await runCli(['validate', '--config', join(dir, 'none.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/none\.yaml: cannot read the configuration: ENOENT/);
    writeFileSync(join(dir, 'y.yaml'), 'storage:\n  root: [unclosed\n');
    r = await runCli(['validate', '--config', join(dir, 'y.yaml')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/y\.yaml:\d+:\d+: YAML: /);
  });
});
