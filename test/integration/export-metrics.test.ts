/**
 * Metrics on the way out: the derived `claude_code.token.usage` pushed by `aszcol push` and by the
 * service's pass, the receiver's spool passed through as received, one source per root, and the
 * Prometheus exporter serving the same totals.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as protoLoader from '@grpc/proto-loader';
import type { SdRecord } from '../../src/formats/session-data/types.js';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import { listLanded } from '../../src/storage/landed-files.js';
import { runCli, REPO } from '../helpers/cli.js';
import { ccMetricsRequest } from '../helpers/otlp.js';
import { startService } from '../helpers/service.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { attrs, sinkForTests } from './export-sink.js';
import { buildRoot, copyRoot as copyRootOf, pipelineYaml } from './export-root.js';

afterAll(cleanupTemp);

let built = '';
const sink = sinkForTests();

beforeAll(async () => {
  built = await buildRoot(join(tempDir('aszcol-export-m-'), 'root'));
}, 120_000);

const copyRoot = () => copyRootOf(built, 'aszcol-export-m-copy-');

/**
 * The expected token usage, computed here from the landed records by the rule (last fragment of
 * each call, when a fragment finished; a call once), keyed model/query_source/type.
 */
function expectedUsage(root: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const session of readdirSync(root).filter((n) => !n.startsWith('_') && !n.includes('.'))) {
    const calls = new Map<string, { frags: SdRecord[]; stream: string }>();
    for (const f of listLanded(root, session).filter((x) => x.prefix === 'transcript')) {
      const { header, records } = readSessionData(f.path);
      for (const r of records) if (r.call) (calls.get(r.call) ?? calls.set(r.call, { frags: [], stream: header.stream! }).get(r.call)!).frags.push(r);
    }
    for (const { frags, stream } of calls.values()) {
      const last = frags.at(-1)!;
      if (!frags.some((x) => x.flags?.includes('finished')) || frags.some((x) => x.flags?.includes('synthetic'))) continue;
      const k = `${last.model}/${stream === 'main' ? 'main' : 'subagent'}`;
      for (const [type, field] of [
        ['input', 'in'],
        ['output', 'out'],
        ['cacheRead', 'cache_read'],
        ['cacheCreation', 'cache_write'],
      ] as const) {
        out[`${k}/${type}`] = (out[`${k}/${type}`] ?? 0) + (last.usage?.[field] ?? 0);
      }
    }
  }
  return out;
}

/** Sums the token usage points of accepted metrics requests since `since`, keyed model/query_source/type. */
function pushedUsage(since: number): { sums: Record<string, number>; resources: Record<string, unknown>[]; points: any[] } {
  const sums: Record<string, number> = {};
  const resources: Record<string, unknown>[] = [];
  const points: any[] = [];
  for (const r of sink.received.slice(since)) {
    if (!r.accepted || r.signal !== 'metrics') continue;
    for (const rm of r.request.resourceMetrics) {
      resources.push(attrs(rm.resource?.attributes));
      for (const sm of rm.scopeMetrics)
        for (const m of sm.metrics) {
          if (m.name !== 'claude_code.token.usage') continue;
          for (const p of m.sum.dataPoints) {
            const a = attrs(p.attributes);
            points.push({ ...a, start: p.startTimeUnixNano, end: p.timeUnixNano, value: p.asDouble });
            const k = `${a.model}/${a.query_source}/${a.type}`;
            sums[k] = (sums[k] ?? 0) + p.asDouble;
          }
        }
    }
  }
  return { sums, resources, points };
}

const methods = (() => {
  const pkg = protoLoader.loadSync('opentelemetry/proto/collector/metrics/v1/metrics_service.proto', {
    longs: String,
    oneofs: true,
    includeDirs: [join(REPO, 'proto')],
  });
  return (pkg['opentelemetry.proto.collector.metrics.v1.MetricsService'] as any).Export;
})();

describe('derived token usage', () => {
  for (const protocol of ['grpc', 'http'] as const) {
    test(`aszcol push derives it and sends it over ${protocol}, once, with the exporter's resource; windows of a series never overlap`, async () => {
      const root = copyRoot();
      const cfg = join(dirname(root), 'm.yaml');
      writeFileSync(
        cfg,
        pipelineYaml(
          root,
          { protocol, endpoint: protocol === 'grpc' ? sink.grpcAddress : `http://${sink.httpAddress}`, instance_id: 'me@box' },
          { metrics: 'derived' },
        ),
      );
      const since = sink.received.length;
      const r = await runCli(['push', '--once', '--config', cfg, '--json']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      const report = JSON.parse(r.stdout);
      expect(report.derived).toMatchObject({ problems: [] });
      expect(report.metrics.files).toBeGreaterThan(3);
      const got = pushedUsage(since);
      expect(got.sums).toEqual(expectedUsage(root));
      expect(Object.values(got.sums).some((v) => v > 0)).toBe(true);
      for (const res of got.resources)
        expect(res).toMatchObject({
          'service.name': 'Claude Code',
          'service.instance.id': 'me@box',
          'service.layer': 'AI_AGENT',
          'telemetry.sdk.name': 'aszcol',
        });
      const series = new Map<string, [bigint, bigint][]>();
      for (const p of got.points) {
        const k = `${p['session.id']}/${p.model}/${p.query_source}/${p.type}`;
        (series.get(k) ?? series.set(k, []).get(k)!).push([BigInt(p.start), BigInt(p.end)]);
      }
      for (const [k, ws] of series) {
        ws.sort((a, b) => (a[0] < b[0] ? -1 : 1));
        for (let i = 1; i < ws.length; i++) expect({ k, overlap: ws[i]![0] < ws[i - 1]![1] }).toEqual({ k, overlap: false });
      }
      // Sent once: a second push derives and sends nothing.
      const again = await runCli(['push', '--once', '--config', cfg, '--json']);
      expect(JSON.parse(again.stdout)).toMatchObject({ metrics: { files: 0 }, derived: { files: 0 } });
    });
  }

  test("the receiver's spooled requests are passed through as received, and only they: one source per root", async () => {
    const root = copyRoot();
    mkdirSync(join(root, '_metrics'), { recursive: true });
    const spooled = [
      ccMetricsRequest('s-1', { input: 10, output: 20, cacheRead: 30, cacheCreation: 40 }),
      ccMetricsRequest('s-2', { input: 1, output: 2, cacheRead: 3, cacheCreation: 4 }),
    ];
    spooled.forEach((b, i) => writeFileSync(join(root, '_metrics', `metrics-20260601T090000.00000000${i}Z-00000${i + 1}-otlp.pb`), b));
    // A derived request in the same spool must not go with them.
    const derivedCfg = join(dirname(root), 'd.yaml');
    writeFileSync(derivedCfg, pipelineYaml(root, { endpoint: '127.0.0.1:9' }, { metrics: 'derived' }));
    const cfg = join(dirname(root), 'r.yaml');
    writeFileSync(cfg, pipelineYaml(root, { protocol: 'http', endpoint: `http://${sink.httpAddress}` }, { metrics: 'received' }));
    await runCli(['push', '--once', '--config', derivedCfg]); // derives into the spool; its receiver is not there
    expect(readdirSync(join(root, '_metrics')).some((n) => n.endsWith('-derived.pb'))).toBe(true);
    const since = sink.received.length;
    const r = await runCli(['push', '--once', '--config', cfg, '--json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).metrics).toMatchObject({ files: 2, requests: 1 });
    const metricsReqs = sink.received.slice(since).filter((x) => x.signal === 'metrics' && x.accepted);
    expect(metricsReqs).toHaveLength(1);
    // Exactly the spooled requests, back to back: each one's scopes and points as received, its
    // resource normalised to the exporter's identity (the OAP's rules keep only the AI_AGENT layer).
    const asReceived = methods.requestDeserialize(Buffer.concat(spooled));
    const got = metricsReqs[0]!.request;
    expect(got.resourceMetrics.map((rm: any) => rm.scopeMetrics)).toEqual(asReceived.resourceMetrics.map((rm: any) => rm.scopeMetrics));
    for (const rm of got.resourceMetrics)
      expect(attrs(rm.resource.attributes)).toMatchObject({
        'service.name': 'Claude Code',
        'service.instance.id': expect.stringContaining('@'),
        'service.layer': 'AI_AGENT',
      });
  });
});

describe('in the service', () => {
  test('each pass derives, pushes logs and metrics, and the prometheus exporter serves the same totals', async () => {
    const root = copyRoot();
    const cfg = join(dirname(root), 'svc.yaml');
    writeFileSync(
      cfg,
      pipelineYaml(
        root,
        { endpoint: sink.grpcAddress, instance_id: 'svc@box' },
        {
          metrics: 'derived',
          extra: '  prometheus:\n    endpoint: 127.0.0.1:0\n',
        },
      )
        .replace('      exporters: [otlp/sink]\n  telemetry', '      exporters: [otlp/sink, prometheus]\n  telemetry')
        .replace('    source_root:', '    interval: 300ms\n    source_root:')
        .replace('    lookback: none\n', '    lookback: none\n    grace: 1s\n')
        .replace('      address: ""\n', '      address: ""\n    logs:\n      level: debug\n'),
    );
    const since = sink.received.length;
    const svc = startService(['--config', cfg]);
    try {
      const addr = await svc.addresses();
      const want = expectedUsage(root);
      // A file ending in a call's fragment (every session's last) waits the 1 s grace, then goes.
      await svc.waitFor((l) => l.msg === 'pass finished' && (l.counts as any)?.['processors/token_metrics']?.waiting > 0, 30_000);
      const sorted = (o: Record<string, number>) => JSON.stringify(Object.entries(o).sort());
      for (let i = 0; i < 100 && sorted(pushedUsage(since).sums) !== sorted(want); i++) await new Promise((res) => setTimeout(res, 200));
      expect(pushedUsage(since).sums).toEqual(want);
      const sent = sink.received
        .slice(since)
        .filter((x) => x.accepted && x.signal === 'logs')
        .flatMap((x) => x.request.resourceLogs.flatMap((rl: any) => rl.scopeLogs.flatMap((sl: any) => sl.logRecords)));
      expect(sent.length).toBeGreaterThan(20);
      const scrape = async () => {
        const text = await (await fetch(`http://${addr['exporters/prometheus.endpoint']}/metrics`)).text();
        const prom: Record<string, number> = {};
        for (const m of text.matchAll(/^claude_code_token_usage_tokens_total\{([^}]*)\} (\S+)$/gm)) {
          const l = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((x) => [x[1], x[2]]));
          const k = `${l.model}/${l.query_source}/${l.type}`;
          prom[k] = (prom[k] ?? 0) + Number(m[2]);
        }
        return { text, prom };
      };
      // The prometheus exporter reads the spool in the same stage as the otlp exporter, after it.
      let s = await scrape();
      for (let i = 0; i < 50 && sorted(s.prom) !== sorted(want); i++) {
        await new Promise((res) => setTimeout(res, 200));
        s = await scrape();
      }
      expect(s.text).toContain('# HELP claude_code_token_usage_tokens_total Number of tokens used');
      expect(s.text).toContain('# TYPE claude_code_token_usage_tokens_total counter');
      expect(s.prom).toEqual(want);
      // Later passes (every one is logged at debug) send nothing again.
      const n = sink.received.length;
      const last = Math.max(...svc.logs.filter((l) => l.msg === 'pass finished').map((l) => l.pass as number));
      await svc.waitFor((l) => l.msg === 'pass finished' && (l.pass as number) >= last + 3, 30_000);
      expect(sink.received.length).toBe(n);
    } finally {
      svc.child.kill('SIGTERM');
      expect((await svc.exited).code).toBe(0);
    }
  });

  test("a configuration that derives token usage and passes the receiver's through is refused, as is an exporter with nothing to send", async () => {
    const root = tempDir();
    const both = join(root, 'both.yaml');
    writeFileSync(
      both,
      pipelineYaml(root, { endpoint: '127.0.0.1:1' }, { metrics: 'derived' })
        .replace('service:\n  pipelines:\n', 'service:\n  pipelines:\n    metrics/raw:\n      receivers: [claude_code_otlp]\n      exporters: [otlp/sink]\n')
        .replace('processors:\n', '  claude_code_otlp:\nprocessors:\n'),
    );
    const v = await runCli(['validate', '--config', both]);
    expect(v.code).toBe(2);
    expect(v.stderr).toMatch(/claude_code\.token\.usage for the same tokens/);
    const off = join(root, 'off.yaml');
    writeFileSync(off, pipelineYaml(root, { endpoint: '127.0.0.1:1', logs: false, metrics: false }));
    const o = await runCli(['validate', '--config', off]);
    expect(o.code).toBe(2);
    expect(o.stderr).toMatch(/exporters\.otlp\/sink\.logs: logs and metrics are both false/);
    expect(readFileSync(off, 'utf8')).toContain('logs: false');
  });
});
