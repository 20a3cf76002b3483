/**
 * What the model saw, sent inline: the real Claude Code CLI with `OTEL_LOG_RAW_API_BODIES=1` sends
 * every API request and response body as an OTLP log event (`claude_code.api_request_body` /
 * `claude_code.api_response_body`), over gRPC and over HTTP, to aszcol's OTLP receiver; assembly
 * joins each to its call like the `file:` dump. Ground truth is the mock's: its own copy of every
 * request body it received (`--log-bodies`) and its request log. A second session runs with the
 * runtime's content limit lowered (CLAUDE_CODE_OTEL_CONTENT_MAX_LENGTH) so it cuts every request
 * body: those are listed as truncated, read as far as they go, and say so.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { OtlpReceiver, validateOtlpReceiverConfig } from '../../src/receivers/claude-code-otlp/index.js';
import type { CallsAnswer } from '../../src/extensions/view/figures-api.js';
import type { ViewDocument } from '../../src/formats/view/types.js';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import { bodyText } from '../../src/formats/session-data/inline-provider-body.js';
import { labRun, readRequestLog, WORK_SCRIPT, type LoggedRequest } from '../helpers/lab.js';
import { collectAndParse, runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

interface MockLine extends LoggedRequest {
  system_chars: number;
  offered_tools: string[];
  messages: number;
  max_tokens: number;
}

/** Low enough that every request body (about 50,000 characters) is cut, high enough that every response body (under 1,000) is not. */
const CONTENT_LIMIT = 20_000;

type Protocol = 'grpc' | 'http/protobuf';

function scenario(protocol: Protocol) {
  const base = tempDir(`aszcol-e2e-inline-bodies-${protocol === 'grpc' ? 'grpc' : 'http'}-`);
  const home = join(base, 'home');
  const root = join(base, 'data');
  const mockBodies = join(base, 'mock-bodies');
  const log = join(base, 'requests.jsonl');
  let config = '';
  let whole = '';
  let cut = '';
  let truth: MockLine[] = [];
  const cli = async <T>(args: string[]) => {
    const r = await runCli([...args, '--config', config]);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout) as T;
  };
  const calls = (id: string) => cli<CallsAnswer>(['conversation', id, '--calls', '--json']);
  /** The inline request bodies a session's OTLP export landed, by request id of the response that shares their request_body_id. */
  const landedRequests = (session: string) => {
    const dir = join(root, session, 'otlp');
    const events = readdirSync(dir)
      .filter((n) => n.startsWith('otlp_log') && n.endsWith('.sd'))
      .flatMap((n) => readSessionData(join(dir, n)).records)
      .map((r) => ({ r, d: r.parts.find((p) => p.k === 'data')?.data as { event?: string; attributes: Record<string, unknown> } }));
    const requestOf = new Map(
      events.filter((x) => x.d.event === 'claude_code.api_response_body').map((x) => [x.d.attributes.request_body_id, x.d.attributes.request_id]),
    );
    return new Map(
      events.filter((x) => x.d.event === 'claude_code.api_request_body').map((x) => [requestOf.get(x.d.attributes.request_body_id) as string, x.r]),
    );
  };

  beforeAll(async () => {
    config = writeConfig(base, root, join(home, 'projects'));
    const endpoints = protocol === 'grpc' ? { grpc: { endpoint: '127.0.0.1:0' } } : { http: { endpoint: '127.0.0.1:0' } };
    const r = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: endpoints }), { storageRoot: root });
    await r.start();
    try {
      const otlp = `http://${protocol === 'grpc' ? r.addresses().grpc : r.addresses().http}`;
      const run = (prompt: string, tools: string, env: string) =>
        labRun({ configDir: home, cwd: join(base, 'work'), prompt, tools, script: WORK_SCRIPT, log, logBodies: mockBodies, otlp, protocol, env }).then(
          (x) => x.session_id,
        );
      whole = await run('SLOWTOOL please', 'Bash', 'OTEL_LOG_RAW_API_BODIES=1');
      cut = await run('EDITFILE please', 'Write,Edit', `OTEL_LOG_RAW_API_BODIES=1,CLAUDE_CODE_OTEL_CONTENT_MAX_LENGTH=${CONTENT_LIMIT}`);
      expect(await r.landed(15_000)).toBe(true);
    } finally {
      await r.shutdown();
    }
    await collectAndParse(config);
    truth = readRequestLog(log) as MockLine[];
  }, 300_000);

  test('every inline request body is the body the mock received (less the betas the runtime sends as a header)', async () => {
    const landed = landedRequests(whole);
    const mine = (await calls(whole)).calls;
    expect(mine.length).toBeGreaterThanOrEqual(2);
    expect([...landed.keys()].sort()).toEqual(mine.map((c) => c.request_id).sort());
    for (const [request, record] of landed) {
      const text = bodyText(record);
      if (!('body' in text)) throw new Error(`request ${request}: ${text.problem}`);
      expect(text.partial).toBeUndefined();
      const { betas: _betas, ...sent } = JSON.parse(text.body) as Record<string, unknown>;
      expect(sent).toEqual(JSON.parse(readFileSync(join(mockBodies, `${request}.json`), 'utf8')));
    }
  });

  test("every call's manifest is what the mock received and answered: system characters, tool names, message count, max_tokens, stop reason, usage", async () => {
    for (const c of (await calls(whole)).calls) {
      const t = truth.find((q) => q.message_id === c.message_id)!;
      expect(t).toBeDefined();
      const req = c.manifest!.request!;
      expect(req.system.chars).toBe(t.system_chars);
      expect(req.tools.names).toEqual(t.offered_tools);
      expect(req.messages.count).toBe(t.messages);
      expect(req.parameters.max_tokens).toBe(t.max_tokens);
      expect(c.manifest!.response).toMatchObject({ message_id: t.message_id, stop_reason: t.stop_reason, usage: { input: t.usage.in, output: t.usage.out } });
      expect(c.manifest!.problems).toBeUndefined();
    }
  });

  test('the context change from one call to the next, as with the file form: the tool call and its result added, nothing else changed', async () => {
    const [first, next] = (await calls(whole)).calls;
    expect(first!.context_change).toBeUndefined();
    expect(next!.context_change).toMatchObject({
      previous: first!.message_id,
      messages_kept: first!.manifest!.request!.messages.count,
      messages_added: 2,
      messages_dropped: 0,
      tools_added: [],
      tools_removed: [],
      system_changed: false,
    });
    expect(next!.context_change!.added.map((m) => m.role)).toEqual(['assistant', 'user']);
  });

  test('the document lists each call its request and response, counts them, and leaves nothing unresolved', async () => {
    const doc = await cli<ViewDocument>(['conversation', whole, '--json']);
    const n = (await calls(whole)).calls.length;
    expect(doc.summary).toMatchObject({ provider_bodies: 2 * n, captured_prompts: n });
    expect(doc.unresolved).toEqual([]);
  });

  test('bodies the runtime cut: listed as truncated, the request manifest read from what arrived and saying why, the response whole', async () => {
    const doc = await cli<ViewDocument>(['conversation', cut, '--json']);
    const listed = JSON.stringify(doc);
    expect(listed).toContain('"truncated":true');
    expect(doc.unresolved).toEqual([]);
    const mine = (await calls(cut)).calls;
    expect(mine.length).toBeGreaterThanOrEqual(2);
    for (const c of mine) {
      const t = truth.find((q) => q.message_id === c.message_id)!;
      const received = readFileSync(join(mockBodies, `${t.request_id}.json`), 'utf8');
      expect(received.length).toBeGreaterThan(CONTENT_LIMIT);
      expect(c.manifest!.problems).toEqual([expect.stringMatching(new RegExp(`cut this body at \\d+ of \\d+ characters \\(body_truncated\\)`))]);
      // What arrived is the start of what was sent: its model and never more messages than the mock received.
      expect(c.manifest!.request!.model).toBe(t.model);
      expect(c.manifest!.request!.messages.count).toBeLessThanOrEqual(t.messages);
      expect(c.manifest!.response).toMatchObject({ message_id: t.message_id, stop_reason: t.stop_reason, usage: { input: t.usage.in, output: t.usage.out } });
    }
  });
}

describe('provider bodies sent inline over gRPC, joined to their calls', () => scenario('grpc'));
describe('provider bodies sent inline over HTTP, joined to their calls', () => scenario('http/protobuf'));
