/**
 * End to end, the way aszcol is deployed: the real Claude Code (through ../shared/lab, the work
 * script: a parallel batch, a delegated subagent, a file written and edited, MCP calls) with its own
 * OTLP export on → the aszcol service (both receivers, the assembler, metrics, the otlp exporter,
 * the view) → the test OAP, which applies SkyWalking's own rules (test/oap). Once over gRPC and
 * once over OTLP/HTTP: the first sends the token usage derived from the transcripts, the second
 * what Claude Code exported, passed through. Ground truth: the mock API's request log, and the
 * document our own page serves.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { listConversations, listRounds } from '../../src/storage/chain.js';
import { landedSessions, listLanded } from '../../src/storage/landed-files.js';
import { SHARED } from '../helpers/cli.js';
import { labRun, readRequestLog, type LabOptions } from '../helpers/lab.js';
import { startService } from '../helpers/service.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { TestOap } from '../oap/server.js';

afterAll(cleanupTemp);

const WORK_SCRIPT = join(SHARED, 'lab', 'scripts', 'work.json');
const TYPES = { input: 'in', output: 'out', cacheRead: 'cache_read', cacheCreation: 'cache_write' } as const;

interface Leg {
  name: string;
  /** How Claude Code exports to our receiver, and how our exporter reaches the OAP. */
  protocol: 'grpc' | 'http';
  /** Which token usage the metrics pipeline sends. */
  metrics: 'derived' | 'received';
}

function config(base: string, oap: TestOap, leg: Leg): string {
  const root = join(base, 'data');
  const endpoint = leg.protocol === 'grpc' ? oap.grpcAddress : `http://${oap.httpAddress}`;
  const metrics =
    leg.metrics === 'derived'
      ? '    metrics: { receivers: [claude_code_local], processors: [token_metrics], exporters: [otlp/oap] }\n'
      : '    metrics: { receivers: [claude_code_otlp], exporters: [otlp/oap] }\n';
  return (
    `storage:\n  root: ${JSON.stringify(root)}\n` +
    `receivers:\n  claude_code_local:\n    source_root: ${JSON.stringify(join(base, 'home', 'projects'))}\n    exclude: []\n    interval: 300ms\n` +
    `  claude_code_otlp:\n    protocols:\n      ${leg.protocol}: { endpoint: "127.0.0.1:0" }\n` +
    'processors:\n  assembler: {}\n  token_metrics: { lookback: none, grace: 1s }\n' +
    `exporters:\n  otlp/oap:\n    protocol: ${leg.protocol}\n    endpoint: ${JSON.stringify(endpoint)}\n    retry_on_failure: { initial_interval: 200ms, max_interval: 1s }\n` +
    'extensions:\n  view: { endpoint: "127.0.0.1:0" }\n' +
    'service:\n  extensions: [view]\n  pipelines:\n' +
    '    sessions: { receivers: [claude_code_local, claude_code_otlp], processors: [assembler], exporters: [otlp/oap] }\n' +
    metrics +
    '  telemetry:\n    metrics: { address: "" }\n'
  );
}

/** Every landed file and round under the root, by the name the exporter gives it. */
function filesOnDisk(root: string): string[] {
  const out: string[] = [];
  for (const s of landedSessions(root)) out.push(...listLanded(root, s).map((l) => l.rel));
  for (const c of listConversations(root)) out.push(...listRounds(root, c).map((r) => `_conversations/${c}/rounds/${r.name}`));
  return out.sort();
}

/** Tokens per model and type from the mock's log: every answered provider call once. */
function tokensFromLog(log: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const r of readRequestLog(log)) for (const [type, k] of Object.entries(TYPES)) out[`${r.model}/${type}`] = (out[`${r.model}/${type}`] ?? 0) + r.usage[k];
  return out;
}

/** Tokens per model and type as the OAP's meter_ai_agent_tokens_by_model would sum them. */
function tokensByModel(oap: TestOap): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of oap.points)
    if (p.feeds.includes('meter_ai_agent_tokens_by_model'))
      out[`${p.labels.model}/${p.labels.type}`] = (out[`${p.labels.model}/${p.labels.type}`] ?? 0) + p.value;
  return out;
}

async function runLeg(leg: Leg): Promise<void> {
  const base = tempDir(`aszcol-e2e-oap-${leg.name}-`);
  const oap = new TestOap();
  await oap.start();
  const cfgPath = join(base, 'aszcol.yaml');
  writeFileSync(cfgPath, config(base, oap, leg));
  const svc = startService(['--config', cfgPath], { killAfterMs: 280_000 });
  try {
    const addr = await svc.addresses();
    const receiver = addr[`receivers/claude_code_otlp.${leg.protocol}`];
    const view = addr['extensions/view.view'];
    expect({ receiver: !!receiver, view: !!view }).toEqual({ receiver: true, view: true });
    const log = join(base, 'requests.jsonl');
    const common = {
      configDir: join(base, 'home'),
      cwd: join(base, 'work'),
      script: WORK_SCRIPT,
      log,
      otlp: `http://${receiver}`,
      protocol: leg.protocol === 'grpc' ? 'grpc' : 'http/protobuf',
      mcp: join(base, 'mcp.jsonl'),
      tools: 'Bash,Agent,Write,Edit,mcp__lab',
    };
    // EDITFILE and MCPCALL answer by the session's first prompt, so each is a session of its own; DELEGATE continues the first.
    const first = await labRun({ ...common, prompt: 'PARALLEL please' } as LabOptions);
    await labRun({ ...common, prompt: 'DELEGATE this', resume: first.session_id } as LabOptions);
    const edit = await labRun({ ...common, prompt: 'EDITFILE now' } as LabOptions);
    const mcp = await labRun({ ...common, prompt: 'MCPCALL now' } as LabOptions);
    const conversations = [first.session_id, edit.session_id, mcp.session_id];
    const truth = tokensFromLog(log);
    expect(Object.values(truth).some((v) => v > 0)).toBe(true);

    // The service lands, parses and sends on its own; wait (bounded) until the OAP holds every file on disk,
    // rebuilds the conversation our page serves, and its token meters have every call of the log.
    const pages = new Map<string, { status: number; body: unknown }>();
    const holdsAll = () => {
      const held = new Set(oap.accepted().map((f) => f.file));
      return filesOnDisk(join(base, 'data')).every((f) => held.has(f));
    };
    const pagesMatch = async () => {
      for (const c of conversations) {
        const r = await fetch(`http://${view}/api/c/${c}/view`);
        pages.set(c, { status: r.status, body: r.status === 200 ? await r.json() : await r.text() });
      }
      return conversations.every(
        (c) => pages.get(c)!.status === 200 && JSON.stringify(oap.tables.view('Claude Code', c)) === JSON.stringify(pages.get(c)!.body),
      );
    };
    for (let i = 0; i < 180; i++) {
      if (holdsAll() && JSON.stringify(tokensByModel(oap)) === JSON.stringify(truth) && (await pagesMatch())) break;
      await new Promise((res) => setTimeout(res, 500));
    }

    // Every file accepted, none rejected or dropped, by the rule and builder the OAP runs.
    expect(oap.notStored()).toEqual([]);
    expect(oap.rejectedCounts()).toEqual({});
    const onDisk = filesOnDisk(join(base, 'data'));
    expect(onDisk.some((f) => f.includes('/rounds/'))).toBe(true);
    expect(onDisk.filter((f) => !new Set(oap.accepted().map((a) => a.file)).has(f))).toEqual([]);
    expect(tokensByModel(oap)).toEqual(truth);
    // The conversation the OAP's view route would answer is the document our page serves.
    expect(oap.tables.conversations('Claude Code')).toEqual([...conversations].sort());
    for (const c of conversations) {
      const page = pages.get(c);
      expect({ c, status: page?.status }).toEqual({ c, status: 200 });
      expect(oap.tables.view('Claude Code', c)).toEqual(page!.body);
    }

    // Every metric point feeds at least one OAP meter; the token meters add up to the API's log.
    expect(oap.points.length).toBeGreaterThan(0);
    expect(oap.points.filter((p) => !p.feeds.length).map((p) => ({ metric: p.metric, why: p.why }))).toEqual([]);
    expect(tokensByModel(oap)).toEqual(truth);

    // Logs and metrics under one service and one instance, in the AI_AGENT layer.
    const senders = new Set([...oap.files.map((f) => `${f.service} | ${f.instance}`), ...oap.points.map((p) => `${p.service} | ${p.instance}`)]);
    expect([...senders]).toEqual([`Claude Code | ${[...senders][0]!.split(' | ')[1]}`]);
    expect(oap.points.every((p) => p.labels.service_layer === 'AI_AGENT')).toBe(true);
    expect(oap.requests.every((r) => r.transport === leg.protocol)).toBe(true);
    expect(oap.refused).toEqual([]);
    // The work script really ran: three MCP calls in the MCP server's own log.
    expect(readFileSync(join(base, 'mcp.jsonl'), 'utf8').trim().split('\n')).toHaveLength(3);
  } finally {
    svc.child.kill('SIGTERM');
    await svc.exited;
    await oap.close();
  }
}

describe('Claude Code → aszcol → a SkyWalking OAP applying its own rules', () => {
  test('over gRPC, with the token usage derived from the transcripts', () => runLeg({ name: 'grpc', protocol: 'grpc', metrics: 'derived' }), 300_000);
  test("over OTLP/HTTP, with Claude Code's own metrics passed through", () => runLeg({ name: 'http', protocol: 'http', metrics: 'received' }), 300_000);
});
