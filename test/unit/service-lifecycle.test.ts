import { afterAll, describe, expect, test } from '@jest/globals';
import { EventEmitter } from 'node:events';
import { join } from 'node:path';
import { embeddedDefaultYaml, parseConfig } from '../../src/service/config.js';
import { JsonLogger, silentLogger } from '../../src/component/log.js';
import { Service } from '../../src/service/service.js';
import { drain, runService } from '../../src/service/run.js';
import { Journal, fakeRegistry } from '../helpers/fake-components.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `cond` every 20 ms for at most `ms`. */
async function until(cond: () => boolean | Promise<boolean>, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await cond()) return;
    await sleep(20);
  }
  throw new Error('condition not met in time');
}

/** A whole pipeline of fake components (health_check real), on ephemeral ports. */
function setup(over: { receiver?: string; otlp?: string; exporter?: string; processor?: string; extra?: string; interval?: number } = {}) {
  const journal = new Journal();
  const registry = fakeRegistry(journal, { all: true, keep: ['health_check'] });
  const root = join(tempDir(), 'data');
  const yaml = `
storage: { root: ${JSON.stringify(root)} }
receivers:
  claude_code_local: { interval: ${over.interval ?? 50} ${over.receiver ?? ''} }
  claude_code_otlp: { ${over.otlp ?? ''} }
processors:
  assembler: { ${over.processor ?? ''} }
  token_metrics: {}
exporters:
  otlp/oap: { ${over.exporter ?? ''} }
  prometheus: {}
extensions:
  view: {}
  health_check: { endpoint: "127.0.0.1:0" }
service:
  extensions: [view, health_check]
  pipelines:
    sessions: { receivers: [claude_code_otlp, claude_code_local], processors: [assembler], exporters: [otlp/oap] }
    metrics: { receivers: [claude_code_local], processors: [token_metrics], exporters: [otlp/oap] }
  telemetry: { metrics: { address: "127.0.0.1:0" } }
  shutdown_timeout: 3s
${over.extra ?? ''}`;
  const cfg = parseConfig(yaml, process.env, 'test.yaml', registry);
  const lines: string[] = [];
  const log = new JsonLogger('debug', (l) => lines.push(l));
  return { journal, cfg, root, log, lines };
}

describe('the component host', () => {
  test('starts extensions, exporters, processors, receivers; passes run land → parse → derive → send; shuts down in reverse', async () => {
    const { journal, cfg, log } = setup();
    const svc = new Service(cfg, log);
    await svc.start();
    await until(() => journal.of('send-done').length >= 2 * 1);
    await svc.shutdown();
    const starts = journal.of('start ');
    expect(starts).toEqual([
      'start extensions/view',
      'start exporters/otlp/oap',
      'start processors/assembler',
      'start processors/token_metrics',
      'start receivers/claude_code_otlp',
      'start receivers/claude_code_local',
    ]);
    // prometheus is configured but in no pipeline: never created.
    expect(journal.events.some((e) => e.includes('prometheus'))).toBe(false);
    expect(cfg.unused).toEqual(['exporters.prometheus']);
    const firstPass = journal.events.filter((e) => e.endsWith(' #1') && !e.includes('-done'));
    expect(firstPass).toEqual([
      'land receivers/claude_code_otlp #1',
      'land receivers/claude_code_local #1',
      'land processors/assembler #1',
      'land processors/token_metrics #1',
      'land exporters/otlp/oap #1',
      'land extensions/view #1',
      'parse receivers/claude_code_otlp #1',
      'parse receivers/claude_code_local #1',
      'parse processors/assembler #1',
      'parse processors/token_metrics #1',
      'parse exporters/otlp/oap #1',
      'parse extensions/view #1',
      'derive receivers/claude_code_otlp #1',
      'derive receivers/claude_code_local #1',
      'derive processors/assembler #1',
      'derive processors/token_metrics #1',
      'derive exporters/otlp/oap #1',
      'derive extensions/view #1',
      'send receivers/claude_code_otlp #1',
      'send receivers/claude_code_local #1',
      'send processors/assembler #1',
      'send processors/token_metrics #1',
      'send exporters/otlp/oap #1',
      'send extensions/view #1',
    ]);
    expect(journal.of('shutdown ')).toEqual(starts.map((s) => s.replace('start', 'shutdown')).reverse());
    // Nothing ran after shutdown began.
    const firstShutdown = journal.events.findIndex((e) => e.startsWith('shutdown'));
    expect(journal.events.slice(firstShutdown).every((e) => e.startsWith('shutdown'))).toBe(true);
  });

  test('a component that fails to start: the ones started before it shut down in reverse, later ones never start', async () => {
    const { journal, cfg, log, lines } = setup({ processor: 'fail_start: "disk on fire"' });
    const svc = new Service(cfg, log);
    await expect(svc.start()).rejects.toThrow('processors/assembler failed to start: disk on fire');
    expect(svc.status().components.find((c) => c.id === 'assembler')).toMatchObject({ state: 'failed', error: 'disk on fire' });
    await svc.shutdown();
    expect(journal.of('start ')).toEqual(['start extensions/view', 'start exporters/otlp/oap', 'start processors/assembler']);
    expect(journal.of('shutdown ')).toEqual(['shutdown processors/assembler', 'shutdown exporters/otlp/oap', 'shutdown extensions/view']);
    expect(journal.of('land')).toEqual([]);
    expect(lines.map((l) => JSON.parse(l)).find((r) => r.msg === 'component failed to start')).toMatchObject({
      level: 'error',
      component: 'processors/assembler',
    });
  });

  test('the pass runs at the smallest interval a running component asks for (5 s when none asks)', async () => {
    const { cfg, log } = setup({ interval: 300, exporter: 'interval: 120' });
    const svc = new Service(cfg, log);
    expect(svc.passInterval()).toBe(5000); // before start, nothing is running
    await svc.start();
    expect(svc.passInterval()).toBe(120);
    await svc.shutdown();
  });
});

describe('the embedded default with every factory registered', () => {
  test('starts the local and OTLP receivers, the assembler, the view and health; a pass runs; it drains', async () => {
    const journal = new Journal();
    const registry = fakeRegistry(journal, { all: true, keep: ['health_check', 'claude_code_local'] });
    const cfg = parseConfig(embeddedDefaultYaml(registry), { ...process.env, CLAUDE_CONFIG_DIR: tempDir() }, 'embedded', registry);
    // Its fixed ports are for a user's machine; here every listener takes a free one.
    cfg.service.telemetry.metrics.address = { host: '127.0.0.1', port: 0 };
    (cfg.components.find((c) => c.id === 'health_check')!.config as { endpoint: { port: number } }).endpoint.port = 0;
    cfg.storageRoot = join(tempDir(), 'data');
    const svc = new Service(cfg, silentLogger);
    await svc.start();
    await until(() => svc.status().lastPass !== undefined);
    expect(svc.status()).toMatchObject({ healthy: true, reasons: [] });
    expect(journal.of('start ')).toEqual(['start extensions/view', 'start processors/assembler', 'start receivers/claude_code_otlp']);
    expect(svc.status().components.map((c) => c.id)).toEqual(['view', 'health_check', 'assembler', 'claude_code_local', 'claude_code_otlp']);
    expect(journal.events.some((e) => e.startsWith('send exporters/'))).toBe(false);
    await svc.shutdown();
    expect(
      svc
        .status()
        .components.map((c) => `${c.kind}s/${c.id} ${c.state}`)
        .sort(),
    ).toEqual([
      'extensions/health_check stopped',
      'extensions/view stopped',
      'processors/assembler stopped',
      'receivers/claude_code_local stopped',
      'receivers/claude_code_otlp stopped',
    ]);
  });

  test('a factory whose create throws: the start fails naming the component', async () => {
    const journal = new Journal();
    const registry = fakeRegistry(journal, { all: true, keep: ['health_check', 'claude_code_local'] }).map((t) =>
      t.type === 'assembler'
        ? {
            ...t,
            factory: {
              ...t.factory!,
              create: () => {
                throw new Error('no index');
              },
            },
          }
        : t,
    );
    const { cfg } = setup();
    const cfg2 = parseConfig(
      embeddedDefaultYaml(registry).replace('127.0.0.1:13133', '127.0.0.1:0').replace('127.0.0.1:8888', '127.0.0.1:0'),
      { ...process.env, CLAUDE_CONFIG_DIR: tempDir() },
      'e',
      registry,
    );
    cfg2.storageRoot = cfg.storageRoot;
    const svc = new Service(cfg2, silentLogger);
    await expect(svc.start()).rejects.toThrow('processors/assembler could not be created: no index');
    await svc.shutdown();
  });
});

describe('drain', () => {
  test('a SIGTERM-like stop lets the pass in flight finish and starts no new regular one (only the final pass)', async () => {
    const { journal, cfg, log } = setup({ receiver: ', delay: 400' });
    const svc = new Service(cfg, log);
    await svc.start();
    await until(() => journal.events.includes('land receivers/claude_code_local #1'));
    await svc.shutdown();
    expect(journal.events).toContain('send-done exporters/otlp/oap #1');
    // The pass in flight was finished; pass 2 is the shutdown's final pass, and there is no third.
    expect(journal.events.filter((e) => e.includes(' #2')).every((e) => e.includes(' #2 final'))).toBe(true);
    expect(journal.events.some((e) => e.includes(' #3'))).toBe(false);
    expect(journal.events.indexOf('send-done extensions/view #1')).toBeLessThan(journal.events.indexOf('land receivers/claude_code_otlp #2 final'));
    expect(journal.events.indexOf('send-done extensions/view #2 final')).toBeLessThan(journal.events.indexOf('shutdown receivers/claude_code_local'));
    expect(svc.status().lastPass).toMatchObject({ pass: 2, ok: true });
  });

  test('near the shutdown timeout the stage in flight is told to stop; past it, drain reports failure', async () => {
    const { journal, cfg, log, lines } = setup({ receiver: ', delay: 60000', exporter: 'shutdown_delay: 1500' });
    const svc = new Service(cfg, log);
    await svc.start();
    await until(() => journal.events.includes('land receivers/claude_code_local #1'));
    const t0 = Date.now();
    expect(await drain(svc, 1000, log)).toBe(false);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(950);
    expect(took).toBeLessThan(2500);
    expect(journal.events).toContain('land-done receivers/claude_code_local #1 aborted');
    // The pass in flight used the time up: no final pass, and the log says what that leaves.
    expect(journal.events.some((e) => e.includes(' final'))).toBe(false);
    expect(lines.map((l) => JSON.parse(l)).find((r) => r.msg.startsWith('final pass skipped'))).toMatchObject({
      level: 'warn',
      msg: 'final pass skipped: service.shutdown_timeout is nearly reached; what was not landed or sent stays on disk for the next start',
    });
    await svc.shutdown(); // the slow exporter does finish, later
    expect(journal.of('shutdown ').at(-1)).toBe('shutdown extensions/view');
  });

  test('runService drains on its signal and resolves 0', async () => {
    const { journal, cfg, log, lines } = setup({ receiver: ', delay: 300' });
    let svc: Service | undefined;
    const signals = new EventEmitter();
    const stopOn = (stop: (s: string) => void) => {
      signals.on('signal', stop);
      return () => {
        signals.off('signal', stop);
      };
    };
    const running = runService(cfg, {
      log,
      stopOn,
      onStarted: (s) => {
        svc = s;
      },
    });
    await until(() => journal.events.includes('land receivers/claude_code_local #1'));
    signals.emit('signal', 'SIGTERM');
    expect(await running).toBe(0);
    expect(svc!.status().components.every((c) => c.state === 'stopped')).toBe(true);
    expect(journal.events).toContain('land-done receivers/claude_code_local #1');
    const msgs = lines.map((l) => JSON.parse(l).msg);
    expect(msgs.indexOf('signal received: draining')).toBeLessThan(msgs.indexOf('service stopped'));
    expect(signals.listenerCount('signal')).toBe(0);
  });

  test('runService resolves 1 when a component cannot start', async () => {
    const { cfg } = setup({ exporter: 'fail_start: "no route"' });
    expect(await runService(cfg, { log: silentLogger, stopOn: () => () => {} })).toBe(1);
  });
});

/** Every JSON log line written so far. */
const records = (lines: string[]) => lines.map((l) => JSON.parse(l) as { level: string; msg: string; [k: string]: unknown });

/** Components in the order a pass stage runs them, as the setup's pipelines place them. */
const FLOW = [
  'receivers/claude_code_otlp',
  'receivers/claude_code_local',
  'processors/assembler',
  'processors/token_metrics',
  'exporters/otlp/oap',
  'extensions/view',
];

describe('the final pass on shutdown', () => {
  test('after the pass in flight: intake stops where a component has stopIntake, one final pass runs every stage, then components shut down', async () => {
    // Only the OTLP receiver's fake takes input between passes; the local receiver's has no stopIntake.
    const { journal, cfg, log, lines } = setup({ receiver: ', delay: 200', otlp: 'intake: true' });
    const svc = new Service(cfg, log);
    await svc.start();
    await until(() => journal.events.includes('land receivers/claude_code_local #1'));
    await svc.shutdown();
    const ev = journal.events;
    const at = (e: string) => {
      expect({ e, found: ev.includes(e) }).toEqual({ e, found: true });
      return ev.indexOf(e);
    };
    expect(journal.of('stop-intake')).toEqual(['stop-intake receivers/claude_code_otlp', 'stop-intake-done receivers/claude_code_otlp']);
    expect(at('send-done extensions/view #1')).toBeLessThan(at('stop-intake receivers/claude_code_otlp'));
    expect(at('stop-intake-done receivers/claude_code_otlp')).toBeLessThan(at('land receivers/claude_code_otlp #2 final'));
    expect(ev.filter((e) => e.endsWith(' #2 final') && !e.includes('-done'))).toEqual(
      ['land', 'parse', 'derive', 'send'].flatMap((stage) => FLOW.map((c) => `${stage} ${c} #2 final`)),
    );
    expect(at('send-done extensions/view #2 final')).toBeLessThan(at('shutdown receivers/claude_code_local'));
    expect(ev.some((e) => e.includes(' #3'))).toBe(false);
    expect(svc.status().lastPass).toMatchObject({ pass: 2, ok: true });

    const recs = records(lines);
    const msgs = recs.map((r) => r.msg);
    expect(msgs.indexOf('service stopping: finishing the pass in flight')).toBeLessThan(
      msgs.indexOf('final pass: landing and sending what arrived since the last pass'),
    );
    expect(recs.find((r) => r.msg === 'intake stopped')).toMatchObject({ level: 'info', component: 'receivers/claude_code_otlp' });
    expect(recs.filter((r) => r.msg === 'intake stopped')).toHaveLength(1);
    // The final pass is logged at info even when it did nothing, and says it was the final one.
    expect(recs.find((r) => r.msg === 'pass finished' && r.pass === 2)).toMatchObject({ level: 'info', final: true, ok: true });
    expect(recs.filter((r) => (r.level === 'warn' || r.level === 'error') && r.msg !== 'configured but used by no pipeline; not started')).toEqual([]);
  });

  test('service.final_pass: false: no intake is stopped and no final pass runs', async () => {
    const { journal, cfg, log, lines } = setup({ receiver: ', delay: 200', otlp: 'intake: true', extra: '  final_pass: false\n' });
    expect(cfg.service.finalPass).toBe(false);
    const svc = new Service(cfg, log);
    await svc.start();
    await until(() => journal.events.includes('land receivers/claude_code_local #1'));
    await svc.shutdown();
    expect(journal.events).toContain('send-done extensions/view #1');
    expect(journal.of('stop-intake')).toEqual([]);
    expect(journal.events.some((e) => e.includes(' #2'))).toBe(false);
    expect(records(lines).find((r) => r.msg.startsWith('final pass'))).toMatchObject({
      level: 'info',
      msg: 'final pass off (service.final_pass: false): what arrived since the last pass is landed and sent at the next start',
    });
    expect(journal.of('shutdown ')).toHaveLength(6);
  });

  test('a final pass that runs into the deadline is stopped at a safe point; the drain ends in time and runService resolves 0', async () => {
    const { journal, cfg, log, lines } = setup({ otlp: 'intake: true', exporter: 'final_delay: 60000' });
    cfg.service.shutdownTimeoutMs = 1500; // the stage is aborted at 1200 ms, leaving 300 ms to shut down
    let svc: Service | undefined;
    const signals = new EventEmitter();
    const stopOn = (stop: (s: string) => void) => {
      signals.on('signal', stop);
      return () => {
        signals.off('signal', stop);
      };
    };
    const running = runService(cfg, {
      log,
      stopOn,
      onStarted: (s) => {
        svc = s;
      },
    });
    await until(() => svc?.status().lastPass !== undefined);
    const t0 = Date.now();
    signals.emit('signal', 'SIGTERM');
    expect(await running).toBe(0);
    const took = Date.now() - t0;
    expect(took).toBeGreaterThanOrEqual(1100);
    expect(took).toBeLessThan(1500);
    const cut = journal.events.find((e) => /^send-done exporters\/otlp\/oap #\d+ final/.test(e));
    expect(cut).toMatch(/ final aborted$/);
    const pass = Number(/#(\d+)/.exec(cut!)![1]);
    // The stages after the cut one still ran (with the signal aborted, they return at once).
    expect(journal.events).toContain(`send-done extensions/view #${pass} final aborted`);
    expect(records(lines).find((r) => r.msg.startsWith('final pass cut short'))).toMatchObject({
      level: 'warn',
      component: 'service',
      pass,
      msg: 'final pass cut short by service.shutdown_timeout; what was not landed or sent stays on disk for the next start',
    });
    expect(svc!.status().components.every((c) => c.state === 'stopped')).toBe(true);
  });

  test('a stopIntake that throws is logged and the final pass runs anyway', async () => {
    const { journal, cfg, log, lines } = setup({ otlp: 'intake: true, fail_intake: "port stuck"' });
    const svc = new Service(cfg, log);
    await svc.start();
    await until(() => svc.status().lastPass !== undefined);
    await svc.shutdown();
    expect(records(lines).find((r) => r.msg === 'could not stop intake; the final pass runs anyway')).toMatchObject({
      level: 'error',
      component: 'receivers/claude_code_otlp',
      error: { message: 'port stuck' },
    });
    expect(journal.events.some((e) => /^send-done exporters\/otlp\/oap #\d+ final$/.test(e))).toBe(true);
    expect(svc.status().components.every((c) => c.state === 'stopped')).toBe(true);
  });

  test('a stopIntake that hangs is not waited for past the abort: no final pass, and the drain still ends in time', async () => {
    const { journal, cfg, log, lines } = setup({ otlp: 'intake: true, intake_delay: 2500' });
    const svc = new Service(cfg, log);
    await svc.start();
    await until(() => svc.status().lastPass !== undefined);
    const t0 = Date.now();
    expect(await drain(svc, 1500, log)).toBe(true);
    expect(Date.now() - t0).toBeLessThan(1500);
    expect(journal.events.some((e) => e.includes(' final'))).toBe(false);
    expect(records(lines).find((r) => r.msg.startsWith('final pass skipped'))).toMatchObject({
      level: 'warn',
      msg: 'final pass skipped: stopping intake took until service.shutdown_timeout was nearly reached; what was not landed or sent stays on disk for the next start',
    });
    expect(journal.of('shutdown ')).toHaveLength(6);
    await until(() => journal.of('stop-intake-done').length > 0); // the hook ends on its own, later
  });
});

describe('health_check and self-telemetry', () => {
  test('503 until the first pass has finished, 200 while healthy, 503 naming the failed pass; /metrics counts it all', async () => {
    const { cfg, log } = setup({ receiver: ', delay: 400', exporter: 'fail_stage: send' });
    const svc = new Service(cfg, log);
    await svc.start();
    const health = `http://${svc.addresses()['extensions/health_check.endpoint']}/`;
    const metrics = `http://${svc.addresses().telemetry}/metrics`;
    let r = await fetch(health);
    expect(r.status).toBe(503);
    const first = (await r.json()) as { status: string; reasons: string[]; components: Record<string, { state: string }> };
    expect(first.status).toBe('unavailable');
    expect(first.reasons).toEqual(['no pass has finished yet']);
    expect(first.components['exporters/otlp/oap']).toEqual({ state: 'started' });
    await until(() => svc.status().passes >= 1 && svc.status().lastPass !== undefined);
    r = await fetch(health);
    expect(r.status).toBe(503);
    const body = (await r.json()) as { reasons: string[]; last_pass: { ok: boolean; problems: string[] } };
    expect(body.last_pass).toMatchObject({ ok: false, problems: ['exporters/otlp/oap: send could not be done'] });
    expect(body.reasons[0]).toMatch(/^pass \d+ failed: exporters\/otlp\/oap: send could not be done$/);
    expect((await fetch(health.replace(/\/$/, '/other'))).status).toBe(404);

    const text = await (await fetch(metrics)).text();
    expect(text).toMatch(/^aszcol_landed_records_total\{receiver="claude_code_local"\} [1-9]\d*$/m);
    expect(text).toMatch(/^aszcol_exporter_sent_log_records_total\{exporter="otlp\/oap"\} [1-9]\d*$/m);
    expect(text).toMatch(/^aszcol_pass_duration_seconds_count\{outcome="failed"\} [1-9]\d*$/m);
    expect(text).toMatch(/^aszcol_passes_total\{outcome="failed"\} [1-9]\d*$/m);
    expect(text).toMatch(/^aszcol_component_started\{component="assembler",kind="processor"\} 1$/m);
    for (const name of [
      'aszcol_receiver_accepted_log_records_total',
      'aszcol_receiver_refused_metric_points_total',
      'aszcol_exporter_send_failed_log_records_total',
      'aszcol_sources_in_conflict',
    ]) {
      expect(text).toContain(`# TYPE ${name} `);
    }
    expect(text).toMatch(/^process_cpu_user_seconds_total /m);
    expect(text).toMatch(/^nodejs_heap_size_total_bytes /m);
    await svc.shutdown();
    await expect(fetch(health)).rejects.toThrow();
  });

  test('200 with every component started and a clean last pass', async () => {
    const { cfg, log } = setup();
    const svc = new Service(cfg, log);
    await svc.start();
    await until(() => svc.status().lastPass !== undefined);
    const r = await fetch(`http://${svc.addresses()['extensions/health_check.endpoint']}/`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await r.json()).toMatchObject({ status: 'ok', reasons: [], last_pass: { ok: true, problems: [] } });
    await svc.shutdown();
  });

  test('a port already taken fails the start with the address in the message', async () => {
    const { cfg, log } = setup();
    const a = new Service(cfg, log);
    await a.start();
    const taken = a.addresses().telemetry!;
    const { cfg: cfg2 } = setup({ extra: '' });
    cfg2.service.telemetry.metrics.address = { host: '127.0.0.1', port: Number(taken.split(':')[1]) };
    const b = new Service(cfg2, silentLogger);
    await expect(b.start()).rejects.toThrow(`cannot listen on ${taken}`);
    await b.shutdown();
    await a.shutdown();
  });
});
