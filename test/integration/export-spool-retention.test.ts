/**
 * Spool retention end to end, on real files and a receiver of the test's own (export-sink.ts):
 * a `_metrics/` file goes once every `otlp` exporter that sends metrics from the root took it;
 * what is unsent, refused or throttled stays; push.state forgets what went; a receiver push.state
 * names that no exporter here sends to holds everything until it is ignored; `keep` and
 * `enabled: false` keep sent files; derived requests go too without ever being derived or sent
 * twice; and in the service, a full spool that refused a request takes one again once the sent
 * files are gone, while the prometheus exporter still counts every one of them.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseKv } from '../../src/storage/kv-text.js';
import { FileLock } from '../../src/storage/lock.js';
import { PushState } from '../../src/storage/push-state.js';
import { runCli } from '../helpers/cli.js';
import { ccMetricsRequest, httpPost, tokenSums } from '../helpers/otlp.js';
import { startService } from '../helpers/service.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { attrs, sinkForTests } from './export-sink.js';
import { buildRoot, copyRoot as copyRootOf, pipelineYaml } from './export-root.js';

afterAll(cleanupTemp);

const sink = sinkForTests();

const RECEIVED = /^metrics-.*-otlp\.pb$/;
const DERIVED = /^metrics-.*-derived\.pb$/;
const tokens = (n: number) => ({ input: n, output: 2 * n, cacheRead: 3 * n, cacheCreation: 4 * n });
const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const spoolNames = (root: string, re = RECEIVED) =>
  readdirSync(join(root, '_metrics'))
    .filter((n) => re.test(n))
    .sort();
/** The bytes a receiver counts against max_spool_bytes: every metrics-*.pb file in the spool. */
const spoolBytes = (root: string) =>
  readdirSync(join(root, '_metrics'))
    .filter((n) => /^metrics-.*\.pb$/.test(n))
    .reduce((t, n) => t + statSync(join(root, '_metrics', n)).size, 0);
const spoolLines = (root: string, endpoint: string, re = RECEIVED) =>
  [...new PushState(root).sent(endpoint).keys()].filter((r) => r.startsWith('_metrics/') && re.test(r.slice(9))).sort();

/**
 * A root whose spool holds `n` requests as the receiver lands them (read-only, numbered 1…n, an
 * hour old), one session each (`S1`…), plus a derived request that no exporter here sends.
 */
function spooledRoot(n: number): { root: string; names: string[]; bytes: Map<string, Buffer> } {
  const root = join(tempDir('aszcol-retention-'), 'root');
  const dir = join(root, '_metrics');
  mkdirSync(dir, { recursive: true });
  const bytes = new Map<string, Buffer>();
  const hourAgo = (Date.now() - 3_600_000) / 1000;
  for (let i = 1; i <= n; i++) {
    const name = `metrics-20260601T0900${String(i).padStart(2, '0')}.000000000Z-${String(i).padStart(6, '0')}-otlp.pb`;
    const b = ccMetricsRequest(`S${i}`, tokens(i));
    writeFileSync(join(dir, name), b, { mode: 0o444 });
    utimesSync(join(dir, name), hourAgo, hourAgo);
    bytes.set(name, b);
  }
  writeFileSync(join(dir, 'metrics-20260601T085959.000000000Z-000001-X-derived.pb'), ccMetricsRequest('X', tokens(9)), { mode: 0o444 });
  writeFileSync(join(dir, 'spool.state'), 'schema    1\nnext_seq  2\n'); // behind the disk, as after a receiver's crash
  return { root, names: [...bytes.keys()], bytes };
}

/** A configuration passing the receiver's metrics through to the given otlp exporters (ids otlp/…). */
function receivedYaml(root: string, exporters: Record<string, Record<string, unknown>>): string {
  const ex = Object.entries(exporters)
    .map(
      ([id, c]) =>
        `  ${id}:\n${Object.entries(c)
          .map(([k, v]) => `    ${k}: ${JSON.stringify(v)}`)
          .join('\n')}`,
    )
    .join('\n');
  return (
    `storage:\n  root: ${JSON.stringify(root)}\nreceivers:\n  claude_code_otlp:\n    protocols:\n      grpc: { endpoint: "127.0.0.1:0" }\n` +
    `exporters:\n${ex}\nservice:\n  pipelines:\n    metrics:\n      receivers: [claude_code_otlp]\n      exporters: [${Object.keys(exporters).join(', ')}]\n` +
    '  telemetry:\n    metrics:\n      address: ""\n'
  );
}

function writeYaml(root: string, text: string, file = 'aszcol.yaml'): string {
  const p = join(dirname(root), file);
  writeFileSync(p, text);
  return p;
}

async function push(cfg: string, ...extra: string[]): Promise<{ code: number; reports: any[]; stderr: string }> {
  const r = await runCli(['push', '--once', '--config', cfg, '--json', ...extra]);
  return {
    code: r.code,
    reports: r.stdout
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l)),
    stderr: r.stderr,
  };
}

/** The sessions of the metrics requests the sink took since `since`, per transport, in arrival order. */
function sentSessions(since: number, transport?: 'grpc' | 'http'): string[] {
  const out: string[] = [];
  for (const r of sink.received.slice(since)) {
    if (!r.accepted || r.signal !== 'metrics' || (transport && r.transport !== transport)) continue;
    for (const rm of r.request.resourceMetrics)
      for (const sm of rm.scopeMetrics) {
        const tu = sm.metrics.find((m: any) => m.name === 'claude_code.token.usage');
        if (tu) out.push(String(attrs(tu.sum.dataPoints[0].attributes)['session.id']));
      }
  }
  return out;
}

const http = () => ({ protocol: 'http', endpoint: `http://${sink.httpAddress}`, batch_bytes: 1 });
const grpc = () => ({ endpoint: sink.grpcAddress, batch_bytes: 1 });

describe('aszcol push removes what every exporter took', () => {
  test('sent files go and push.state forgets them (a partial success is sent); refused ones stay and go on the next push; the count a receiver sees drops', async () => {
    const { root, names } = spooledRoot(4);
    const cfg = writeYaml(root, receivedYaml(root, { 'otlp/sink': http() }));
    const since = sink.received.length;
    const before = spoolBytes(root);
    // One request per file (batch_bytes 1): the first is refused, the second partly rejected (taken, asz 0.6).
    sink.fault({ kind: 'refuse' }, { kind: 'partial', rejected: 1 });
    const first = await push(cfg);
    expect(first.code).toBe(1); // one file left unsent
    expect(first.reports[0]).toMatchObject({
      metrics: { files: 3 },
      rejected: { files: 1, items: 1 },
      pending: 1,
      spool: { removed: 3, unsent: 1, forgotten: 3, held: [], problems: [] },
    });
    expect(spoolNames(root)).toEqual(names.slice(0, 1));
    expect(spoolBytes(root)).toBe(before - first.reports[0].spool.removedBytes);
    expect(spoolLines(root, `http://${sink.httpAddress}`)).toEqual([]);
    // The derived request is not this configuration's to send, so it stays; the counter is past every number.
    expect(spoolNames(root, DERIVED)).toHaveLength(1);
    expect(parseKv(readFileSync(join(root, '_metrics', 'spool.state'), 'utf8')).get('next_seq')).toBe('5');
    const second = await push(cfg);
    expect(second.code).toBe(0);
    expect(second.reports[0]).toMatchObject({ metrics: { files: 1 }, pending: 0, spool: { removed: 1, unsent: 0 } });
    expect(spoolNames(root)).toEqual([]);
    // Accepted whole: S3, S4, then S1 on the next push; S2 was taken with a partial success and never sent again.
    expect(sentSessions(since)).toEqual(['S3', 'S4', 'S1']);
    // Nothing is left to send or to remove.
    const third = await push(cfg);
    expect(third.reports[0]).toMatchObject({ metrics: { files: 0 }, spool: { removed: 0, unsent: 0 } });
    expect(sentSessions(since)).toHaveLength(3);
  });

  test('a send that fails removes nothing: a receiver that is not there, a receiver that throttles', async () => {
    const { root, names } = spooledRoot(2);
    const gone = writeYaml(root, receivedYaml(root, { 'otlp/sink': { endpoint: '127.0.0.1:1', timeout: '2s' } }), 'gone.yaml');
    const a = await push(gone);
    expect(a.code).toBe(1);
    expect(a.reports[0]).toMatchObject({ metrics: { files: 0 }, spool: { removed: 0, unsent: 2 } });
    expect(a.reports[0].stoppedBy).toMatch(/^(unavailable|timeout)$/);
    expect(spoolNames(root)).toEqual(names);
    const cfg = writeYaml(root, receivedYaml(root, { 'otlp/sink': http() }));
    sink.fault({ kind: 'throttle', retryAfterSeconds: 1 });
    const b = await push(cfg);
    expect(b.reports[0]).toMatchObject({ metrics: { files: 0 }, stoppedBy: 'throttled', spool: { removed: 0, unsent: 2 } });
    expect(spoolNames(root)).toEqual(names);
    expect(existsLines(root)).toBe(false);
  });

  test('with two exporters each must have sent a file first, whichever one the command was asked to push', async () => {
    const { root, names } = spooledRoot(3);
    const cfg = writeYaml(root, receivedYaml(root, { 'otlp/a': grpc(), 'otlp/b': http() }));
    const since = sink.received.length;
    const a = await push(cfg, '--exporter', 'otlp/a');
    expect(a.reports).toHaveLength(1);
    expect(a.reports[0]).toMatchObject({ exporter: 'otlp/a', metrics: { files: 3 }, spool: { removed: 0, unsent: 3 } });
    expect(spoolNames(root)).toEqual(names);
    const b = await push(cfg, '--exporter', 'otlp/b');
    expect(b.reports[0]).toMatchObject({ exporter: 'otlp/b', metrics: { files: 3 }, spool: { removed: 3, unsent: 0, forgotten: 6 } });
    expect(spoolNames(root)).toEqual([]);
    expect(sentSessions(since, 'grpc')).toEqual(['S1', 'S2', 'S3']);
    expect(sentSessions(since, 'http')).toEqual(['S1', 'S2', 'S3']);
    expect([...spoolLines(root, `grpc://${sink.grpcAddress}`), ...spoolLines(root, `http://${sink.httpAddress}`)]).toEqual([]);
  });

  test('keep holds sent files until they are old enough; enabled: false on one exporter keeps them all', async () => {
    const { root, names } = spooledRoot(2);
    const now = Date.now() / 1000;
    for (const n of names) utimesSync(join(root, '_metrics', n), now, now);
    const cfg = writeYaml(root, receivedYaml(root, { 'otlp/a': { ...grpc(), spool_retention: { keep: '1h' } } }));
    const a = await push(cfg);
    expect(a.reports[0]).toMatchObject({ metrics: { files: 2 }, spool: { removed: 0, young: 2 } });
    const past = now - 2 * 3600;
    for (const n of names) utimesSync(join(root, '_metrics', n), past, past);
    const off = writeYaml(
      root,
      receivedYaml(root, { 'otlp/a': { ...grpc(), spool_retention: { keep: '1h' } }, 'otlp/b': { ...http(), spool_retention: { enabled: false } } }),
      'off.yaml',
    );
    const b = await push(off);
    expect(b.reports.map((r) => [r.exporter, r.metrics.files, r.spool.removed])).toEqual([
      ['otlp/a', 0, 0],
      ['otlp/b', 2, 0],
    ]);
    expect(spoolNames(root)).toEqual(names);
    // With otlp/b gone from the configuration, what push.state records it took holds the spool.
    const c = await push(cfg);
    expect(c.reports[0].spool.removed).toBe(0);
    expect(c.reports[0].spool.held[0]).toMatch(/push\.state records them sent to http:\/\//);
  });

  test('a receiver push.state names that no exporter here sends metrics to holds the spool, until an exporter ignores it', async () => {
    const { root, names, bytes } = spooledRoot(2);
    new PushState(root).record('grpc://old.example:4317', [{ rel: `_metrics/${names[0]}`, digest: sha(bytes.get(names[0]!)!) }]);
    const cfg = writeYaml(root, receivedYaml(root, { 'otlp/sink': grpc() }));
    const a = await push(cfg);
    expect(a.code).toBe(0); // kept is not a failure
    expect(a.reports[0]).toMatchObject({ metrics: { files: 2 }, spool: { removed: 0 } });
    expect(a.reports[0].spool.held).toEqual([
      "the receiver's metrics requests (-otlp.pb) are all kept: push.state records them sent to grpc://old.example:4317, which no otlp exporter here sends metrics to," +
        ' and another process may still be sending them there; if that receiver no longer takes metrics from this root, list it in exporters.otlp/sink.spool_retention.ignore_receivers',
    ]);
    expect(spoolNames(root)).toEqual(names);
    const ignoring = writeYaml(
      root,
      receivedYaml(root, { 'otlp/sink': { ...grpc(), spool_retention: { ignore_receivers: ['grpc://old.example:4317'] } } }),
      'ignoring.yaml',
    );
    const b = await push(ignoring);
    expect(b.reports[0]).toMatchObject({ metrics: { files: 0 }, spool: { removed: 2, held: [], forgotten: 3 } });
    expect(spoolNames(root)).toEqual([]);
    expect(spoolLines(root, 'grpc://old.example:4317')).toEqual([]);
  });

  test('a file whose bytes changed after it was sent stays, and the push says so', async () => {
    const { root, names } = spooledRoot(2);
    const cfg = writeYaml(root, receivedYaml(root, { 'otlp/sink': { ...grpc(), spool_retention: { keep: '2h' } } }));
    expect((await push(cfg)).reports[0]).toMatchObject({ metrics: { files: 2 }, spool: { removed: 0, young: 2 } });
    const p = join(root, '_metrics', names[1]!);
    chmodSync(p, 0o644);
    writeFileSync(p, ccMetricsRequest('changed', tokens(7)));
    const past = Date.now() / 1000 - 3 * 3600;
    for (const n of names) utimesSync(join(root, '_metrics', n), past, past);
    const r = await push(cfg);
    expect(r.code).toBe(1);
    expect(r.reports[0].spool).toMatchObject({ removed: 1 });
    expect(r.stderr).toContain(`spool: _metrics/${names[1]}: its bytes are not the ones push.state records as sent; kept until a person looks at it`);
    expect(spoolNames(root)).toEqual([names[1]]);
  });

  test('spool_retention is validated with the rest of the configuration, at its exact path', async () => {
    const root = join(tempDir(), 'root');
    mkdirSync(root);
    const cfg = writeYaml(root, receivedYaml(root, { 'otlp/sink': { ...grpc(), spool_retention: { keep: 'soon', ignore_receivers: ['old:1'] } } }));
    const r = await runCli(['validate', '--config', cfg]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('exporters.otlp/sink.spool_retention.keep: must be a duration such as 0s, 90m, 24h or 7d; got "soon"');
  });
});

function existsLines(root: string): boolean {
  try {
    return readFileSync(join(root, 'push.state'), 'utf8').includes('_metrics/');
  } catch {
    return false;
  }
}

describe('derived token usage', () => {
  let built = '';
  beforeAll(async () => {
    built = await buildRoot(join(tempDir('aszcol-retention-d-'), 'root'), ['test/scenarios/child-tools.yaml']);
  }, 120_000);

  test('sent derived requests go, one whose derivation left a receipt waits for it; nothing is derived or sent twice; verify still passes', async () => {
    const root = copyRootOf(built, 'aszcol-retention-dc-');
    const dead = writeYaml(root, pipelineYaml(root, { endpoint: '127.0.0.1:1', timeout: '2s' }, { metrics: 'derived' }), 'dead.yaml');
    await push(dead); // derives into the spool; nothing can be sent
    const derived = spoolNames(root, DERIVED);
    expect(derived.length).toBeGreaterThan(1);
    // A receipt still there, and its session held by another derivation (this process), which has
    // not saved its state yet: the request it names waits until a derivation has dealt with it.
    const m = /^metrics-\d{8}T\d{6}\.\d{9}Z-(\d{6,})-(.+)-derived\.pb$/.exec(derived[0]!)!;
    writeFileSync(join(root, m[2]!, 'metrics', `receipt-${m[1]}.json`), '{}\n');
    const busy = new FileLock(join(root, m[2]!, 'metrics', '.lock'));
    expect(busy.tryAcquire()).toBe(true);
    const cfg = writeYaml(root, pipelineYaml(root, { endpoint: sink.grpcAddress }, { metrics: 'derived' }));
    const since = sink.received.length;
    let a;
    try {
      a = await push(cfg);
    } finally {
      busy.release();
    }
    expect(a.code).toBe(0);
    expect(a.reports[0]).toMatchObject({
      metrics: { files: derived.length },
      derived: { busy: 1 },
      spool: { removed: derived.length - 1, pendingReceipt: 1, forgotten: 0 },
    });
    expect(spoolNames(root, DERIVED)).toEqual([derived[0]]);
    // The next derivation finds the file already derived and drops the receipt; then the file goes.
    const b = await push(cfg);
    expect(b.reports[0]).toMatchObject({ metrics: { files: 0 }, derived: { files: 0, spooled: 0 }, spool: { removed: 1 } });
    expect(spoolNames(root, DERIVED)).toEqual([]);
    // push.state still names every derived request, so one derived again would not go twice.
    expect(spoolLines(root, `grpc://${sink.grpcAddress}`, DERIVED)).toEqual(derived.map((n) => `_metrics/${n}`));
    const c = await push(cfg);
    expect(c.reports[0]).toMatchObject({ metrics: { files: 0 }, derived: { files: 0, spooled: 0 }, spool: { removed: 0 } });
    expect(sink.received.slice(since).filter((x) => x.accepted && x.signal === 'metrics').length).toBeGreaterThan(0);
    const v = await runCli(['verify', '--config', cfg]);
    expect(v.code).toBe(0);
  });
});

describe('in the service', () => {
  test('a full spool takes requests again once the sent files are gone; the prometheus exporter counted every one first', async () => {
    const dir = tempDir('aszcol-retention-svc-');
    const root = join(dir, 'root');
    mkdirSync(join(dir, 'projects'), { recursive: true });
    const cfg = join(dir, 'svc.yaml');
    // prometheus after otlp/sink: it reads the spool after the otlp exporter's send stage, so a
    // removal that did not wait for it would take files it has not counted yet.
    writeFileSync(
      cfg,
      `storage:\n  root: ${JSON.stringify(root)}\nreceivers:\n  claude_code_local:\n    source_root: ${JSON.stringify(join(dir, 'projects'))}\n    interval: 200ms\n` +
        '  claude_code_otlp:\n    protocols:\n      http: { endpoint: "127.0.0.1:0" }\n    max_spool_bytes: 3KiB\n' +
        `exporters:\n  prometheus:\n    endpoint: 127.0.0.1:0\n  otlp/sink:\n    endpoint: ${JSON.stringify(sink.grpcAddress)}\n` +
        'service:\n  pipelines:\n    sessions:\n      receivers: [claude_code_local]\n      exporters: []\n' +
        '    metrics:\n      receivers: [claude_code_otlp]\n      exporters: [otlp/sink, prometheus]\n  telemetry:\n    metrics:\n      address: ""\n    logs:\n      level: debug\n',
    );
    const since = sink.received.length;
    const svc = startService(['--config', cfg]);
    try {
      const addr = await svc.addresses();
      const rx = addr['receivers/claude_code_otlp.http']!;
      const m1 = ccMetricsRequest('svc-1', tokens(1), Date.UTC(2026, 5, 1, 9, 0));
      const m2 = ccMetricsRequest('svc-2', tokens(2), Date.UTC(2026, 5, 1, 9, 1));
      expect((await httpPost(rx, '/v1/metrics', m1)).status).toBe(200);
      const full = await httpPost(rx, '/v1/metrics', m2);
      expect(full.status).toBe(429); // 3 KiB holds one request
      await svc.waitFor((l) => l.msg === 'sent spool files removed', 30_000);
      expect(spoolNames(root)).toEqual([]);
      expect(sentSessions(since)).toEqual(['svc-1']);
      // The receiver counts the spool again and takes the request it refused. Bounded by time, not by
      // a count sized for an idle machine: under load a recount can trail the removal by seconds.
      let again = await httpPost(rx, '/v1/metrics', m2);
      for (const until = Date.now() + 30_000; again.status !== 200 && Date.now() < until;) {
        await new Promise((res) => setTimeout(res, 250));
        again = await httpPost(rx, '/v1/metrics', m2);
      }
      expect(again.status).toBe(200);
      for (const until = Date.now() + 30_000; (spoolNames(root).length > 0 || sentSessions(since).length < 2) && Date.now() < until;)
        await new Promise((res) => setTimeout(res, 100));
      expect(sentSessions(since)).toEqual(['svc-1', 'svc-2']);
      expect(spoolNames(root)).toEqual([]);
      expect(spoolLines(root, `grpc://${sink.grpcAddress}`)).toEqual([]);
      const text = await (await fetch(`http://${addr['exporters/prometheus.endpoint']}/metrics`)).text();
      const prom: Record<string, number> = {};
      for (const x of text.matchAll(/^claude_code_token_usage_tokens_total\{([^}]*)\} (\S+)$/gm)) {
        const type = /type="([^"]*)"/.exec(x[1]!)![1]!;
        prom[type] = (prom[type] ?? 0) + Number(x[2]);
      }
      expect(prom).toEqual(tokenSums([m1, m2]));
    } finally {
      svc.child.kill('SIGTERM');
      expect((await svc.exited).code).toBe(0);
    }
  });
});
