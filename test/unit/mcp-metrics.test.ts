/**
 * agent.mcp.calls and agent.mcp.duration, derived from landed transcripts by token_metrics: one
 * call per answered mcp__ tool use, counted in the file its result lands in, whatever file its
 * request is in; in a pipeline that also receives the runtime's metrics, only these are derived.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SessionDataBuilder } from '../../src/formats/session-data/encode.js';
import type { SdRecord } from '../../src/formats/session-data/types.js';
import { landedName, streamDir } from '../../src/storage/layout.js';
import { writeOnce } from '../../src/storage/write-once.js';
import { deriveTokenUsage } from '../../src/processors/token-metrics/derive.js';
import { mcpPoints } from '../../src/otlp/mcp-usage.js';
import { tokenPoints } from '../../src/otlp/token-usage.js';
import { METRICS_DIR } from '../../src/storage/metrics-spool.js';
import { parseConfig } from '../../src/service/config.js';
import { REGISTRY } from '../../src/service/registry.js';
import { metricsSourceOf, tokenMetricsMode } from '../../src/service/pipelines.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const S = 'sess-mcp';
const T0 = Date.parse('2026-06-01T09:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();
const STAMP = '20260601T100000.000000000Z';

function land(root: string, seq: number, records: Partial<SdRecord>[]): void {
  const b = new SessionDataBuilder({
    seq,
    at: '2026-06-01T10:00:00.000000000Z',
    kind: 'transcript',
    adapter: 'claude-code-local/0.1.0',
    dialect: 'claude-code/1',
    src: 'p/main.jsonl',
    session: S,
    stream: 'main',
  } as never);
  records.forEach((r, i) => b.add({ ord: seq * 100 + i, off: i, sha: '000000000000', bytes: 9, parts: [], ...r }));
  writeOnce(join(streamDir(root, S, 'main'), landedName('transcript', STAMP, seq)), b.finish().bytes);
}

/** A finished model call asking for tools, and the results answering them. */
const ask = (call: string, ms: number, tools: [string, string][]): Partial<SdRecord> => ({
  id: `${call}-a`,
  call,
  from: 'agent',
  time: iso(ms),
  model: 'claude-opus-5-5',
  usage: { in: 10, out: 5, cache_read: 0, cache_write: 0 },
  flags: ['finished'],
  parts: tools.map(([id, name]) => ({ k: 'call', state: 'available', bytes: 2, id, name, data: {} })),
});
const answer = (id: string, ms: number, failed?: boolean, flags?: string[]): Partial<SdRecord> => ({
  id: `r-${id}`,
  from: 'external',
  time: iso(ms),
  ...(flags ? { flags } : {}),
  parts: [{ k: 'result', state: 'available', bytes: 2, of: id, text: 'ok', ...(failed === undefined ? {} : { failed }) }],
});

function spooled(root: string) {
  const dir = join(root, METRICS_DIR);
  return readdirSync(dir)
    .filter((n) => n.endsWith('.pb'))
    .map((n) => readFileSync(join(dir, n)));
}

describe('MCP metrics derived from what landed', () => {
  function scenario(root: string) {
    // Two calls in one batch (one request record each side of a file boundary), then one that fails, one interrupted, one not MCP.
    land(root, 1, [
      ask('m1', T0, [
        ['t-echo', 'mcp__lab__echo'],
        ['t-slow', 'mcp__lab__slow'],
      ]),
      answer('t-echo', T0 + 100),
    ]);
    land(root, 2, [
      answer('t-slow', T0 + 600),
      ask('m2', T0 + 700, [
        ['t-fail', 'mcp__lab__fail'],
        ['t-odd', 'mcp__a__b__c'],
        ['t-bash', 'Bash'],
      ]),
      answer('t-fail', T0 + 730, true),
      answer('t-odd', T0 + 800, true, ['interrupted']),
      answer('t-bash', T0 + 900),
    ]);
  }

  test('every answered MCP call once, by server, tool and outcome, with its request-to-result milliseconds', async () => {
    const root = tempDir('aszcol-mcp-');
    scenario(root);
    const r = await deriveTokenUsage({ root, lookbackMs: 0, graceMs: 0 });
    expect(r.problems).toEqual([]);
    expect(r.mcp_calls).toBe(4);
    const points = spooled(root).flatMap((b) => mcpPoints(b));
    const calls = points.filter((p) => p.metric === 'agent.mcp.calls').map((p) => [p.server, p.tool, p.outcome, p.value]);
    expect(calls.sort()).toEqual([
      ['', 'mcp__a__b__c', 'interrupted', 1],
      ['lab', 'echo', 'returned', 1],
      ['lab', 'fail', 'failed', 1],
      // The slow call's request is in file 1, its result in file 2: counted once, in file 2.
      ['lab', 'slow', 'returned', 1],
    ]);
    const ms = Object.fromEntries(points.filter((p) => p.metric === 'agent.mcp.duration').map((p) => [p.tool, p.value]));
    expect(ms).toEqual({ echo: 100, slow: 600, fail: 30, mcp__a__b__c: 100 });
    // A second pass derives nothing again.
    const again = await deriveTokenUsage({ root, lookbackMs: 0, graceMs: 0 });
    expect(again.mcp_calls).toBe(0);
    expect(spooled(root).flatMap((b) => mcpPoints(b))).toHaveLength(points.length);
  });

  test('with the runtime’s token usage received in the same pipeline, only MCP metrics are derived', async () => {
    const root = tempDir('aszcol-mcp-only-');
    scenario(root);
    const r = await deriveTokenUsage({ root, lookbackMs: 0, graceMs: 0, tokens: false });
    expect(r.counted).toBe(0);
    expect(spooled(root).flatMap((b) => tokenPoints(b))).toEqual([]);
    expect(
      spooled(root)
        .flatMap((b) => mcpPoints(b))
        .filter((p) => p.metric === 'agent.mcp.calls'),
    ).toHaveLength(4);
  });
});

describe('a metrics pipeline holding claude_code_otlp and token_metrics', () => {
  const ENV = { HOME: '/home/someone' } as NodeJS.ProcessEnv;
  const BOTH = `
receivers:
  claude_code_local:
  claude_code_otlp:
processors:
  token_metrics:
exporters:
  otlp/oap: { endpoint: 127.0.0.1:11800 }
service:
  pipelines:
    metrics: { receivers: [claude_code_local, claude_code_otlp], processors: [token_metrics], exporters: [otlp/oap] }
`;

  test('is valid, sends the received metrics and the derived ones, and its processor derives no token usage', () => {
    const cfg = parseConfig(BOTH, ENV, 'test.yaml', REGISTRY);
    expect(metricsSourceOf(cfg, 'otlp/oap')).toBe('both');
    expect(tokenMetricsMode(cfg, 'token_metrics')).toBe('both');
  });

  test('beside a pipeline that derives token usage, it is refused: the tokens would be counted twice', () => {
    const yaml = BOTH.replace('exporters:\n  otlp/oap', 'exporters:\n  otlp/b: { endpoint: 127.0.0.1:4317 }\n  otlp/oap').replace(
      '    metrics: {',
      '    metrics/tokens: { receivers: [claude_code_local], processors: [token_metrics/t], exporters: [otlp/b] }\n    metrics: {',
    );
    expect(() =>
      parseConfig(yaml.replace('processors:\n  token_metrics:', 'processors:\n  token_metrics:\n  token_metrics/t:'), ENV, 'test.yaml', REGISTRY),
    ).toThrow(/passes claude_code_otlp metrics through while pipeline metrics\/tokens derives token usage.*derives only MCP metrics/);
  });
});
