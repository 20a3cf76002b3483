/**
 * Where the time and the money went, with the real Claude Code CLI: its transcripts collected and
 * its own OTLP export (events and spans, `--traces 1`) received, over gRPC and over HTTP, in one
 * storage root; parsed; then read back through `aszcol conversation ID --calls/--tools --json`.
 * Ground truth is the lab's, never ours: the mock API's request log (when it received and
 * answered each request), the lab MCP server's own log (each call's start, end and outcome), the
 * scripts (a 900 ms API answer, a `sleep 0.5`, a refused Write) and the runtime's own
 * `claude_code.cost.usage` metric points.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OtlpReceiver, validateOtlpReceiverConfig } from '../../src/receivers/claude-code-otlp/index.js';
import { otlpTypes } from '../../src/otlp/proto.js';
import type { CallsAnswer, ToolsAnswer } from '../../src/extensions/view/figures-api.js';
import { labRun, readRequestLog, WORK_SCRIPT, type LoggedRequest } from '../helpers/lab.js';
import { collectAndParse, runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

/** How far the runtime's own API duration may exceed the mock's received→answered time: connection, streaming the answer, the runtime's bookkeeping, on a loaded 2-core machine. */
const API_SLACK_MS = 1500;

interface McpLogLine {
  tool: string;
  started_at: string;
  ended_at: string;
  is_error: boolean;
}

/** Sums the runtime's own `claude_code.cost.usage` points for one session over the metrics the receiver spooled. */
function costPoints(root: string, session: string): { sum: number; points: number } {
  const T = otlpTypes().ExportMetricsServiceRequest;
  let sum = 0,
    points = 0;
  for (const name of readdirSync(join(root, '_metrics')).filter((n) => n.endsWith('-otlp.pb'))) {
    const o = T.toObject(T.decode(readFileSync(join(root, '_metrics', name))), { longs: Number }) as {
      resourceMetrics?: {
        scopeMetrics?: {
          metrics?: { name: string; sum?: { dataPoints?: { asDouble?: number; attributes?: { key: string; value: { stringValue?: string } }[] }[] } }[];
        }[];
      }[];
    };
    for (const rm of o.resourceMetrics ?? [])
      for (const sm of rm.scopeMetrics ?? [])
        for (const m of sm.metrics ?? []) {
          if (m.name !== 'claude_code.cost.usage') continue;
          for (const p of m.sum?.dataPoints ?? []) {
            if (p.attributes?.find((a) => a.key === 'session.id')?.value.stringValue !== session) continue;
            sum += p.asDouble ?? 0;
            points++;
          }
        }
  }
  return { sum, points };
}

type Protocol = 'grpc' | 'http/protobuf';

function scenario(protocol: Protocol) {
  const base = tempDir(`aszcol-e2e-telemetry-${protocol === 'grpc' ? 'grpc' : 'http'}-`);
  const home = join(base, 'home');
  const work = join(base, 'work');
  const root = join(base, 'data');
  const log = join(base, 'requests.jsonl');
  const mcpLog = join(base, 'mcp.jsonl');
  const sessions: Record<'slowapi' | 'slowtool' | 'denyme' | 'mcpcall', string> = { slowapi: '', slowtool: '', denyme: '', mcpcall: '' };
  let requests: LoggedRequest[] = [];
  let config = '';

  const answers = new Map<string, CallsAnswer & ToolsAnswer>();
  /** The CLI's answer, asked once per session and table. */
  const cli = async (session: string, which: '--calls' | '--tools') => {
    const key = `${session} ${which}`;
    if (!answers.has(key)) {
      const r = await runCli(['conversation', session, which, '--json', '--config', config]);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      answers.set(key, JSON.parse(r.stdout) as CallsAnswer & ToolsAnswer);
    }
    return answers.get(key)!;
  };

  beforeAll(async () => {
    config = writeConfig(base, root, join(home, 'projects'));
    const endpoints = protocol === 'grpc' ? { grpc: { endpoint: '127.0.0.1:0' } } : { http: { endpoint: '127.0.0.1:0' } };
    const r = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: endpoints }), { storageRoot: root });
    await r.start();
    try {
      const otlp = `http://${protocol === 'grpc' ? r.addresses().grpc : r.addresses().http}`;
      const run = (prompt: string, extra: { tools?: string; mcp?: string } = {}) =>
        labRun({ configDir: home, cwd: work, prompt, log, otlp, protocol, traces: '1', script: WORK_SCRIPT, ...extra }).then((x) => x.session_id);
      sessions.slowapi = await run('SLOWAPI please');
      sessions.slowtool = await run('SLOWTOOL please', { tools: 'Bash' });
      sessions.denyme = await run('DENYME please', { tools: 'Bash' });
      sessions.mcpcall = await run('MCPCALL please', { mcp: mcpLog });
      expect(await r.landed(15_000)).toBe(true);
    } finally {
      await r.shutdown();
    }
    await collectAndParse(config);
    requests = readRequestLog(log);
  }, 300_000);

  test('the slow API answer: its call lasted at least the 900 ms the mock held it back, and no longer than the mock took plus the slack', async () => {
    const a = await cli(sessions.slowapi, '--calls');
    const truth = requests.find((q) => a.calls.some((c) => c.message_id === q.message_id))!;
    const call = a.calls.find((c) => c.message_id === truth.message_id)!;
    const mockMs = Date.parse(truth.answered_at!) - Date.parse(truth.received_at!);
    expect(mockMs).toBeGreaterThanOrEqual(900);
    expect(call).toMatchObject({ request_id: truth.request_id, sources: { duration_ms: 'event', ttft_ms: 'event', cost_usd: 'event', usage: 'event' } });
    expect(call.duration_ms).toBeGreaterThanOrEqual(900);
    expect(call.duration_ms).toBeLessThanOrEqual(mockMs + API_SLACK_MS);
    expect(call.ttft_ms).toBeGreaterThan(0);
    expect(call.ttft_ms).toBeLessThanOrEqual(call.duration_ms!);
    // The usage the runtime billed is the usage the mock answered with.
    expect(call.usage).toEqual({ input: truth.usage.in, output: truth.usage.out, cache_read: truth.usage.cache_read, cache_creation: truth.usage.cache_write });
    expect(call.unavailable).toBeUndefined();
  });

  test('every call of every session is joined to its request id, exactly the ones the mock answered', async () => {
    const all = [];
    for (const s of Object.values(sessions)) all.push(...(await cli(s, '--calls')).calls);
    expect(all.map((c) => c.message_id).sort()).toEqual(requests.map((q) => q.message_id).sort());
    for (const s of Object.values(sessions)) {
      const a = await cli(s, '--calls');
      for (const c of a.calls) {
        const truth = requests.find((q) => q.message_id === c.message_id);
        expect(truth).toBeDefined();
        expect(c.request_id).toBe(truth!.request_id);
        expect(c.cost_usd).toBeGreaterThan(0);
      }
    }
  });

  test('the sleep step ran at least 500 ms, and succeeded', async () => {
    const a = await cli(sessions.slowtool, '--tools');
    const bash = a.tools.find((t) => t.name === 'Bash')!;
    expect(bash).toMatchObject({ success: true, decision: 'accept', decision_source: 'config', sources: { duration_ms: 'event' } });
    expect(bash.duration_ms).toBeGreaterThanOrEqual(500);
    expect(bash.result_bytes).toBeGreaterThanOrEqual(0);
  });

  test('the refused Write carries a reject decision and says it never ran', async () => {
    const a = await cli(sessions.denyme, '--tools');
    const write = a.tools.find((t) => t.name === 'Write')!;
    expect(write).toMatchObject({ decision: 'reject', decision_source: 'config', unavailable: ['duration_ms'] });
    expect(write.unavailable_reason).toBe('the tool was refused and never ran');
  });

  test('the MCP calls: names split into server and tool; the slow one at least the 400 ms the server logged, the failing one unsuccessful', async () => {
    const a = await cli(sessions.mcpcall, '--tools');
    const server = readFileSync(mcpLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as McpLogLine);
    const slowLogged = server.find((l) => l.tool === 'slow')!;
    const slow = a.tools.find((t) => t.name === 'mcp__lab__slow')!;
    expect(slow).toMatchObject({ mcp_server: 'lab', mcp_tool: 'slow', success: true });
    expect(slow.duration_ms).toBeGreaterThanOrEqual(400);
    expect(slow.duration_ms).toBeGreaterThanOrEqual(Date.parse(slowLogged.ended_at) - Date.parse(slowLogged.started_at));
    const fail = a.tools.find((t) => t.name === 'mcp__lab__fail')!;
    expect(server.find((l) => l.tool === 'fail')!.is_error).toBe(true);
    expect(fail).toMatchObject({ mcp_server: 'lab', mcp_tool: 'fail', success: false });
    expect(a.tools.find((t) => t.name === 'mcp__lab__echo')).toMatchObject({ mcp_server: 'lab', mcp_tool: 'echo', success: true });
  });

  test("each conversation's cost equals the sum of the runtime's own claude_code.cost.usage points for that session", async () => {
    for (const s of Object.values(sessions)) {
      const a = await cli(s, '--calls');
      const truth = costPoints(root, s);
      expect(truth.points).toBeGreaterThan(0);
      expect(a.totals.cost_usd).toBeCloseTo(truth.sum, 6);
      expect(a.totals.api_calls).toBe(a.calls.length);
      expect(a.totals.api_ms).toBe(a.calls.reduce((n, c) => n + (c.duration_ms ?? 0), 0));
    }
  });
}

describe('Claude Code telemetry joined to the steps, over gRPC', () => scenario('grpc'));
describe('Claude Code telemetry joined to the steps, over HTTP/protobuf', () => scenario('http/protobuf'));
