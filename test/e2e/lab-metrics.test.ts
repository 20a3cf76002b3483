/**
 * Against the real client: Claude Code (through ../shared/lab) with its own OTLP export pointed at
 * a receiver of the test's own. The token usage aszcol derives from the transcripts Claude Code
 * wrote equals, per model and type, what Claude Code itself exported, and what the scripted API
 * was asked to answer (the lab's request log); and the derived metric has the exported one's shape.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { labRun, readRequestLog } from '../helpers/lab.js';
import { runCli } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { attrs, OtlpSink } from '../integration/export-sink.js';

afterAll(cleanupTemp);

const CC_SCOPE = 'com.anthropic.claude_code';
const TYPES: Record<string, 'in' | 'out' | 'cache_read' | 'cache_write'> = {
  input: 'in',
  output: 'out',
  cacheRead: 'cache_read',
  cacheCreation: 'cache_write',
};

interface Metric {
  scope: string;
  name: string;
  description?: string;
  unit?: string;
  sum?: { aggregationTemporality: number; isMonotonic: boolean; dataPoints: any[] };
}

function metrics(sink: OtlpSink, from: number, to = sink.received.length): Metric[] {
  const out: Metric[] = [];
  for (const r of sink.received.slice(from, to)) {
    if (!r.accepted || r.signal !== 'metrics') continue;
    for (const rm of r.request.resourceMetrics ?? [])
      for (const sm of rm.scopeMetrics ?? []) for (const m of sm.metrics ?? []) out.push({ scope: sm.scope?.name ?? '', ...m });
  }
  return out;
}

function usageBy(ms: Metric[], scope: (s: string) => boolean, key: (a: Record<string, unknown>) => string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of ms) {
    if (m.name !== 'claude_code.token.usage' || !scope(m.scope)) continue;
    for (const p of m.sum?.dataPoints ?? []) {
      const k = key(attrs(p.attributes));
      out[k] = (out[k] ?? 0) + Number(p.asDouble ?? p.asInt ?? 0);
    }
  }
  return out;
}

describe("derived token usage against Claude Code's own export", () => {
  const base = tempDir('aszcol-lab-metrics-');
  const home = join(base, 'home');
  const work = join(base, 'work');
  const root = join(base, 'data');
  const log = join(base, 'requests.jsonl');
  const sink = new OtlpSink();
  let ccTo = 0;

  beforeAll(async () => {
    await sink.start();
    // Claude Code exports its own metrics here while it runs (and flushes them as it exits).
    for (const prompt of ['PARALLEL please', 'DELEGATE this']) {
      await labRun({
        configDir: home,
        cwd: work,
        prompt,
        tools: prompt.startsWith('DELEGATE') ? 'Bash,Agent' : 'Bash',
        log,
        otlp: `http://${sink.httpAddress}`,
        protocol: 'http/protobuf',
      });
    }
    ccTo = sink.received.length;
  }, 300_000);

  afterAll(async () => {
    await sink.close();
  });

  test("per model and type, the derived sums equal the exported ones and the API log's; the metric has the exported one's shape", async () => {
    const exported = metrics(sink, 0, ccTo);
    const ccUsage = exported.filter((m) => m.name === 'claude_code.token.usage' && m.scope === CC_SCOPE);
    expect(ccUsage.length).toBeGreaterThan(0);
    // Calls that never reach a transcript (the runtime's auxiliary ones) cannot be derived; this run must have none to compare whole.
    const sources = new Set(ccUsage.flatMap((m) => m.sum!.dataPoints.map((p) => attrs(p.attributes).query_source)));
    expect([...sources].filter((s) => s !== 'main' && s !== 'subagent')).toEqual([]);

    const cfg = join(base, 'aszcol.yaml');
    writeFileSync(
      cfg,
      `storage:\n  root: ${JSON.stringify(root)}\nreceivers:\n  claude_code_local:\n    source_root: ${JSON.stringify(join(home, 'projects'))}\n    exclude: []\n` +
        `processors:\n  token_metrics:\n    lookback: none\nexporters:\n  otlp/sink:\n    protocol: grpc\n    endpoint: ${sink.grpcAddress}\n    logs: false\n` +
        'service:\n  pipelines:\n    metrics:\n      receivers: [claude_code_local]\n      processors: [token_metrics]\n      exporters: [otlp/sink]\n',
    );
    expect((await runCli(['collect', '--once', '--config', cfg])).code).toBe(0);
    const p = await runCli(['push', '--once', '--config', cfg, '--json']);
    expect(p.stderr).toBe('');
    expect(p.code).toBe(0);
    const derived = metrics(sink, ccTo).filter((m) => m.name === 'claude_code.token.usage');
    expect(derived.length).toBeGreaterThan(0);

    const byModelType = (a: Record<string, unknown>) => `${a.model}/${a.type}`;
    const fromCc = usageBy(exported, (s) => s === CC_SCOPE, byModelType);
    const fromUs = usageBy(derived, () => true, byModelType);
    expect(fromUs).toEqual(fromCc);
    // The scripted API's own log: every finished provider call once, with the usage the runtime was told.
    const fromLog: Record<string, number> = {};
    for (const r of readRequestLog(log))
      for (const [type, f] of Object.entries(TYPES)) fromLog[`${r.model}/${type}`] = (fromLog[`${r.model}/${type}`] ?? 0) + r.usage[f];
    expect(fromUs).toEqual(fromLog);
    expect(Object.values(fromUs).some((v) => v > 0)).toBe(true);
    // Per session and query source as well.
    const bySession = (a: Record<string, unknown>) => `${a['session.id']}/${a.query_source}/${a.model}/${a.type}`;
    expect(usageBy(derived, () => true, bySession)).toEqual(usageBy(exported, (s) => s === CC_SCOPE, bySession));

    // The same metric: name, description, unit, a monotonic delta sum of doubles; every label we send is one Claude Code sends.
    const cc = ccUsage[0]!,
      us = derived[0]!;
    expect({ d: us.description, u: us.unit, t: us.sum!.aggregationTemporality, m: us.sum!.isMonotonic }).toEqual({
      d: cc.description,
      u: cc.unit,
      t: cc.sum!.aggregationTemporality,
      m: cc.sum!.isMonotonic,
    });
    expect(us.sum!.dataPoints.every((x) => x.value === 'asDouble')).toBe(cc.sum!.dataPoints.every((x) => x.value === 'asDouble'));
    const ccKeys = new Set(cc.sum!.dataPoints.flatMap((x) => x.attributes.map((a: { key: string }) => a.key)));
    for (const x of us.sum!.dataPoints)
      for (const a of x.attributes) expect({ key: a.key, exported: ccKeys.has(a.key) }).toEqual({ key: a.key, exported: true });
  });
});
