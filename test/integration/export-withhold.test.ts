/**
 * Withholding in the export: a root whose every category carries a marker of its own — the
 * person's prompt, a tool's input and output in the transcript, the system prompt and a tool
 * schema in the provider bodies, and the runtime's own events and spans carrying the prompt, the
 * tool's parameters and its output (as Claude Code 2.1.328 sends them with OTEL_LOG_USER_PROMPTS,
 * OTEL_LOG_TOOL_DETAILS and the beta spans) — pushed through real loopback receivers (the
 * exporter's sink, independent of the exporter's code, and the test OAP). With `hide`, no marker
 * of a withheld category leaves the machine; every line not withheld arrives byte for byte; each
 * altered file says what was taken out and carries the landed file's digest; the receiver's own
 * digest and line checks still accept it; the root is untouched and still verifies.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OtlpReceiver, validateOtlpReceiverConfig } from '../../src/receivers/claude-code-otlp/index.js';
import { requestType } from '../../src/otlp/proto.js';
import { validateOtlpExporterConfig } from '../../src/exporters/otlp/config.js';
import { Pusher, type PushReport } from '../../src/exporters/otlp/pusher.js';
import { PushState } from '../../src/storage/push-state.js';
import { verifyRoot } from '../../src/storage/verify.js';
import { parseConfig } from '../../src/service/config.js';
import { REGISTRY } from '../../src/service/registry.js';
import type { WithholdCategory } from '../../src/formats/view/withhold.js';
import { ccLogRecord, httpPost, logsRequest } from '../helpers/otlp.js';
import { runCli } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { TestOap } from '../oap/server.js';
import { attrs, sinkForTests } from './export-sink.js';
import { rootFiles } from './export-root.js';

afterAll(cleanupTemp);

/** Each marker appears only where its category puts it. */
const MARKERS: Record<string, WithholdCategory> = {
  'prompt-mk-a9d3': 'user_prompts', // the transcript's prompt (and every request body after it)
  'otlp-prompt-mk-51f0': 'user_prompts', // the user_prompt event's `prompt`
  'span-prompt-mk-2c7d': 'user_prompts', // the interaction span's `user_prompt`
  'in-mk-3f08': 'tool_inputs', // the Bash call's input
  'otlp-in-mk-8e21': 'tool_inputs', // the tool_result event's `tool_parameters` and `tool_input`
  'out-mk-c6e4': 'tool_outputs', // the Bash result
  'span-out-mk-90ab': 'tool_outputs', // the tool span's `tool.output` event
  'sys-mk-5b1e': 'system_prompt', // only in the request bodies
  'schema-mk-77c2': 'tool_schemas', // only in the request bodies
  'inline-body-mk-e3f1': 'api_bodies', // an inline api_request_body event's `body`: a whole request, gone with any category
};
const ALL: WithholdCategory[] = ['user_prompts', 'tool_inputs', 'tool_outputs', 'api_bodies', 'system_prompt', 'tool_schemas'];

const SCENARIO = `provider_bodies: true
system_prompt: |
  You run the shop. sys-mk-5b1e
tools:
  - name: Bash
    description: Runs a command. schema-mk-77c2
    input_schema: { type: object, properties: { command: { type: string } }, required: [command] }
steps:
  - input: please check prompt-mk-a9d3
  - call: { text: Checking., tool: { name: Bash, input: { command: echo in-mk-3f08 }, result: out-mk-c6e4 } }
  - call: { text: 'Done.' }
`;

const sv = (key: string, v: string) => ({ key, value: { stringValue: v } });

/** The runtime's own events and spans for the session, with content in the attributes 2.1.328 puts it in. */
async function landRuntimeExport(root: string, session: string): Promise<void> {
  const r = new OtlpReceiver(validateOtlpReceiverConfig({ protocols: { http: { endpoint: '127.0.0.1:0' } } }), { storageRoot: root });
  await r.start();
  try {
    const t0 = Date.UTC(2026, 5, 1, 9, 0, 1);
    const logs = logsRequest([
      ccLogRecord(session, { name: 'user_prompt', seq: 1, timeMs: t0, attrs: [sv('prompt.id', 'p1'), sv('prompt', 'otlp-prompt-mk-51f0')] }),
      ccLogRecord(session, { name: 'api_request', seq: 2, timeMs: t0 + 100, attrs: [sv('prompt.id', 'p1'), sv('request_id', 'req_1')] }),
      ccLogRecord(session, {
        name: 'tool_result',
        seq: 3,
        timeMs: t0 + 200,
        attrs: [
          sv('tool_use_id', 'toolu_1'),
          sv('tool_parameters', '{"full_command":"echo otlp-in-mk-8e21"}'),
          sv('tool_input', '{"command":"echo otlp-in-mk-8e21"}'),
        ],
      }),
      ccLogRecord(session, {
        name: 'api_request_body',
        seq: 4,
        timeMs: t0 + 300,
        attrs: [sv('request_id', 'req_1'), sv('body', '{"system":"inline-body-mk-e3f1","messages":[]}')],
      }),
    ]);
    const T = requestType('traces');
    const span = (id: number, name: string, attributes: object[], events: object[] = []) => ({
      traceId: Buffer.alloc(16, 1),
      spanId: Buffer.alloc(8, id),
      name,
      startTimeUnixNano: String(BigInt(t0) * 1_000_000n),
      endTimeUnixNano: String(BigInt(t0 + 300) * 1_000_000n),
      attributes: [sv('session.id', session), ...attributes],
      events,
    });
    const traces = Buffer.from(
      T.encode(
        T.fromObject({
          resourceSpans: [
            {
              scopeSpans: [
                {
                  spans: [
                    span(2, 'claude_code.interaction', [sv('user_prompt', 'span-prompt-mk-2c7d')]),
                    span(3, 'claude_code.tool', [sv('tool_use_id', 'toolu_1')], [{ name: 'tool.output', attributes: [sv('output', 'span-out-mk-90ab')] }]),
                    span(4, 'claude_code.llm_request', [sv('request_id', 'req_1')]),
                  ],
                },
              ],
            },
          ],
        }),
      ).finish(),
    );
    const PB = { 'content-type': 'application/x-protobuf' };
    expect((await httpPost(r.addresses().http!, '/v1/logs', logs, PB)).status).toBe(200);
    expect((await httpPost(r.addresses().http!, '/v1/traces', traces, PB)).status).toBe(200);
    expect(await r.landed(15_000)).toBe(true);
  } finally {
    await r.shutdown();
  }
}

async function cli(args: string[]): Promise<void> {
  const r = await runCli(args);
  if (r.code !== 0) throw new Error(`aszcol ${args.join(' ')} exited ${r.code}: ${r.stderr || r.stdout}`);
}

interface Sent {
  rel: string;
  body: string;
  a: Record<string, unknown>;
}

describe('the otlp exporter withholds what hide names from every file it sends', () => {
  const sink = sinkForTests();
  const dir = tempDir('aszcol-export-withhold-');
  const root = dir;
  let before = new Map<string, string>();

  beforeAll(async () => {
    const yaml = join(dir, 'marked.yaml');
    writeFileSync(yaml, SCENARIO);
    await cli(['scenario', 'build', yaml, '--out', dir, '--at', '2026-06-01T09:00:00Z']);
    const config = join(dir, 'aszcol.yaml');
    await cli(['collect', '--once', '--config', config]);
    const session = readdirSync(root).find((n) => /^[0-9a-f-]{36}$/.test(n))!;
    await landRuntimeExport(root, session);
    await cli(['parse', '--config', config]);
    before = rootFiles(root);
  }, 120_000);

  /** One push of the whole root to the sink with its own push.state; what arrived, record by record. */
  async function push(
    hide: WithholdCategory[] | undefined,
    protocol: 'grpc' | 'http' = 'grpc',
  ): Promise<{ sent: Sent[]; report: PushReport; stateDir: string }> {
    const since = sink.received.length;
    const stateDir = tempDir('aszcol-export-withhold-state-');
    const endpoint = protocol === 'grpc' ? sink.grpcAddress : `http://${sink.httpAddress}`;
    const cfg = validateOtlpExporterConfig({ endpoint, ...(hide ? { hide } : {}) }, 'exporters.otlp/sink');
    const pusher = new Pusher({ root, cfg, logs: true, metrics: undefined, stateDir });
    try {
      const report = await pusher.pass({ force: true });
      expect(report.problems).toEqual([]);
      return { sent: sentSince(since), report, stateDir };
    } finally {
      pusher.close();
    }
  }

  /** Every log record the sink accepted since its `since`-th request, with its file and attributes. */
  function sentSince(since: number): Sent[] {
    const sent: Sent[] = [];
    for (const r of sink.received.slice(since).filter((x) => x.accepted && x.signal === 'logs'))
      for (const rl of r.request.resourceLogs)
        for (const sl of rl.scopeLogs)
          for (const rec of sl.logRecords) {
            const a = attrs(rec.attributes);
            sent.push({ rel: a['asz.file'] as string, body: rec.body.stringValue as string, a });
          }
    return sent;
  }

  const leaks = (sent: Sent[], marker: string) => sent.filter((x) => x.body.includes(marker) || JSON.stringify(x.a).includes(marker)).map((x) => x.rel);

  test('without hide every marker is in what was sent (the markers are there to find), and nothing says withheld', async () => {
    const { sent, report } = await push(undefined);
    expect(sent.length).toBe(before.size);
    for (const m of Object.keys(MARKERS)) expect({ m, found: leaks(sent, m).length > 0 }).toEqual({ m, found: true });
    for (const x of sent) expect(Object.keys(x.a).filter((k) => k.startsWith('asz.withheld'))).toEqual([]);
    expect(report.withheld).toEqual({ files: 0, records: 0 });
  });

  test('hiding every category: no marker leaves, unaltered lines travel byte for byte, altered files name what and carry the landed digest', async () => {
    const { sent, report, stateDir } = await push(ALL);
    expect(sent.length).toBe(before.size);
    for (const m of Object.keys(MARKERS)) expect({ m, leaks: leaks(sent, m) }).toEqual({ m, leaks: [] });
    let altered = 0;
    for (const x of sent) {
      const disk = readFileSync(join(root, x.rel));
      const body = Buffer.from(x.body, 'utf8');
      expect(x.a['asz.withheld.hide']).toBe(ALL.join(','));
      // The receiver's own checks hold on what it got: the body's digest and line count.
      expect({ rel: x.rel, digest: x.a['asz.file.digest'] }).toEqual({ rel: x.rel, digest: createHash('sha256').update(body).digest('hex') });
      expect(x.a['asz.lines']).toBe(x.body.split('\n').length - 1);
      if (body.equals(disk)) {
        expect(x.a['asz.withheld']).toBeUndefined();
        continue;
      }
      altered++;
      expect(x.rel).toMatch(/\.sd$/); // rounds hold no content of these categories: they travel unchanged
      expect(x.a['asz.withheld.file.digest']).toBe(before.get(x.rel));
      expect(x.a['asz.withheld.file.bytes']).toBe(disk.length);
      const sentLines = x.body.split('\n');
      const diskLines = disk.toString('utf8').split('\n');
      expect(sentLines.length).toBe(diskLines.length);
      let changed = 0;
      for (let k = 0; k < diskLines.length - 2; k++) {
        if (sentLines[k] === diskLines[k]) continue;
        changed++;
        // A withheld record keeps its envelope; every part it withholds keeps kind and bytes, loses text and data.
        const got = JSON.parse(sentLines[k]!) as { ord: number; parts: { k: string; bytes: number; state: string; text?: string; data?: unknown }[] };
        const had = JSON.parse(diskLines[k]!) as typeof got;
        expect(got.ord).toBe(had.ord);
        expect(got.parts.map((p) => [p.k, p.bytes])).toEqual(had.parts.map((p) => [p.k, p.bytes]));
        for (const p of got.parts.filter((p) => p.state === 'omitted')) expect([p.text, p.data]).toEqual([undefined, undefined]);
      }
      expect(changed).toBe(x.a['asz.withheld.records']);
      const closing = JSON.parse(sentLines.at(-2)!) as { t: string; digest: string };
      expect(closing.digest).toBe(
        createHash('sha256')
          .update(sentLines.slice(0, -2).join('\n') + '\n')
          .digest('hex'),
      );
      expect((x.a['asz.withheld'] as string).split(',').every((c) => ALL.includes(c as WithholdCategory))).toBe(true);
    }
    // The transcript, the provider bodies, the runtime's events and its spans.
    expect(altered).toBeGreaterThanOrEqual(4);
    expect(report.withheld.files).toBe(altered);
    // push.state records each file as landed, so a later pass does not send it again and verify agrees.
    const recorded = new PushState(stateDir).sent(`grpc://${sink.grpcAddress}`);
    for (const [rel, digest] of before) expect({ rel, digest: recorded.get(rel) }).toEqual({ rel, digest });
  });

  test('hiding only api_bodies keeps the bodies off the wire and sends the transcript whole', async () => {
    const { sent } = await push(['api_bodies'], 'http');
    for (const m of ['sys-mk-5b1e', 'schema-mk-77c2']) expect({ m, leaks: leaks(sent, m) }).toEqual({ m, leaks: [] });
    const transcript = sent.find((x) => x.rel.includes('/transcript-'))!;
    expect(Buffer.from(transcript.body, 'utf8').equals(readFileSync(join(root, transcript.rel)))).toBe(true);
    expect(transcript.body).toContain('prompt-mk-a9d3');
    const bodies = sent.find((x) => x.rel.includes('/provider_body/'))!;
    expect(bodies.a['asz.withheld']).toBe('api_bodies');
  });

  test('hiding only tool_outputs takes every copy of the output (an inline request body too), and only what it must', async () => {
    const { sent } = await push(['tool_outputs']);
    for (const m of ['out-mk-c6e4', 'span-out-mk-90ab', 'inline-body-mk-e3f1']) expect({ m, leaks: leaks(sent, m) }).toEqual({ m, leaks: [] });
    // The prompt is no tool output: the transcript still carries it, and the prompt event travels unchanged.
    for (const m of ['prompt-mk-a9d3', 'otlp-prompt-mk-51f0']) expect({ m, found: leaks(sent, m).length > 0 }).toEqual({ m, found: true });
  });

  test('the test OAP stores every withheld file, and each file again when hide changes: its digest and line checks pass on what it got', async () => {
    const oap = new TestOap();
    await oap.start();
    try {
      const stateDir = tempDir('aszcol-export-withhold-oap-');
      const cfg = validateOtlpExporterConfig({ endpoint: `http://${oap.httpAddress}`, hide: ALL }, 'exporters.otlp/oap');
      const pusher = new Pusher({ root, cfg, logs: true, metrics: undefined, stateDir });
      try {
        expect((await pusher.pass({ force: true })).problems).toEqual([]);
      } finally {
        pusher.close();
      }
      expect(oap.notStored()).toEqual([]);
      expect(oap.accepted().length).toBe(before.size);
      // Nothing withheld any more: every file goes again, whole, and the OAP stores each copy too.
      const whole = new Pusher({
        root,
        cfg: validateOtlpExporterConfig({ endpoint: `http://${oap.httpAddress}`, hide: [] }, 'exporters.otlp/oap'),
        logs: true,
        metrics: undefined,
        stateDir,
      });
      try {
        expect((await whole.pass({ force: true })).problems).toEqual([]);
      } finally {
        whole.close();
      }
      expect(oap.notStored()).toEqual([]);
      expect(oap.accepted().length).toBe(2 * before.size);
    } finally {
      await oap.close();
    }
  });

  test('a changed hide sends again what went under another one; an unchanged hide sends nothing again', async () => {
    const stateDir = tempDir('aszcol-export-withhold-again-');
    const endpoint = sink.grpcAddress;
    const logLines: { msg: string; fields?: Record<string, unknown> }[] = [];
    const pass = async (hide: WithholdCategory[]) => {
      const since = sink.received.length;
      const cfg = validateOtlpExporterConfig({ endpoint, hide }, 'exporters.otlp/sink');
      const pusher = new Pusher({ root, cfg, logs: true, metrics: undefined, stateDir, log: (_level, msg, fields) => logLines.push({ msg, fields }) });
      try {
        const report = await pusher.pass({ force: true });
        expect(report.problems).toEqual([]);
        return { sent: sentSince(since), report };
      } finally {
        pusher.close();
      }
    };
    const state = () => new PushState(stateDir);
    const key = `grpc://${endpoint}`;

    const hidden = await pass(ALL);
    expect(hidden.sent.length).toBe(before.size);
    expect(leaks(hidden.sent, 'prompt-mk-a9d3')).toEqual([]);
    // push.state says under which hide each file went (in the canonical order it writes).
    for (const rel of before.keys()) expect({ rel, hide: state().hideOf(key, rel) }).toEqual({ rel, hide: [...ALL].sort() });
    expect(readFileSync(state().path, 'utf8')).toContain(`hide ${[...ALL].sort().join(',')}\n`);
    expect((await pass([...ALL].reverse())).sent).toEqual([]); // the same set, named in another order

    // Nothing withheld now: every file goes again, whole, and the receiver gets what it lacked.
    const whole = await pass([]);
    expect(whole.sent.map((x) => x.rel).sort()).toEqual([...before.keys()].sort());
    for (const x of whole.sent)
      expect({ rel: x.rel, same: Buffer.from(x.body, 'utf8').equals(readFileSync(join(root, x.rel))) }).toEqual({ rel: x.rel, same: true });
    for (const m of Object.keys(MARKERS)) expect({ m, found: leaks(whole.sent, m).length > 0 }).toEqual({ m, found: true });
    expect(logLines.filter((l) => l.msg.includes('go again')).map((l) => l.fields?.files)).toEqual([before.size]);
    for (const rel of before.keys()) expect({ rel, hide: state().hideOf(key, rel) }).toEqual({ rel, hide: [] });
    expect((await pass([])).sent).toEqual([]);

    // Withholding again: the files go once more, withheld, each saying so.
    const narrowed = await pass(['tool_outputs']);
    expect(narrowed.sent.length).toBe(before.size);
    expect(leaks(narrowed.sent, 'out-mk-c6e4')).toEqual([]);
    for (const x of narrowed.sent) expect(x.a['asz.withheld.hide']).toBe('tool_outputs');
    const reread = state();
    for (const rel of before.keys()) expect({ rel, hide: reread.hideOf(key, rel) }).toEqual({ rel, hide: ['tool_outputs'] });
    expect((await pass(['tool_outputs'])).sent).toEqual([]);
  });

  test('nothing landed is altered: the root holds the same bytes and verifies', () => {
    expect(rootFiles(root)).toEqual(before);
    expect(verifyRoot(root).problems).toEqual([]);
  });
});

describe('hide on the otlp exporter', () => {
  const yaml = (exporter: string, view: string) =>
    `storage: { root: /tmp/x }\nreceivers: { claude_code_local: {} }\nexporters:\n  otlp/oap: { endpoint: "127.0.0.1:11800"${exporter} }\n` +
    `extensions:\n  view: {${view}}\nservice:\n  extensions: [view]\n  pipelines:\n    sessions: { receivers: [claude_code_local], exporters: [otlp/oap] }\n`;
  const exporterOf = (text: string) =>
    parseConfig(text, {}, 'test.yaml', REGISTRY).components.find((c) => c.id === 'otlp/oap')!.config as { hide?: string[]; hideFrom?: string };

  test('unset, it is what the view withholds, and says so; hide: [] sends everything; its own list wins', () => {
    expect(exporterOf(yaml('', ' hide: [tool_outputs, user_prompts] '))).toMatchObject({ hide: ['user_prompts', 'tool_outputs'], hideFrom: 'extensions.view' });
    expect(exporterOf(yaml(', hide: []', ' hide: [user_prompts] '))).toMatchObject({ hide: [] });
    expect(exporterOf(yaml(', hide: []', ' hide: [user_prompts] ')).hideFrom).toBeUndefined();
    expect(exporterOf(yaml(', hide: [api_bodies]', ' hide: [user_prompts] '))).toMatchObject({ hide: ['api_bodies'] });
    expect(exporterOf(yaml('', '')).hide).toBeUndefined();
  });

  test('a category it does not know, a repeat or a non-list is refused at its exact path', () => {
    const v = (hide: unknown) => () => validateOtlpExporterConfig({ endpoint: '127.0.0.1:11800', hide }, 'exporters.otlp/oap');
    expect(v(['user_prompts', 'bodies'])).toThrow(
      /exporters\.otlp\/oap\.hide\[1\].*"bodies" is not a category that can be withheld; one of user_prompts, tool_inputs/,
    );
    expect(v(['api_bodies', 'api_bodies'])).toThrow(/exporters\.otlp\/oap\.hide\[1\].*"api_bodies" is listed twice/);
    expect(v('api_bodies')).toThrow(/exporters\.otlp\/oap\.hide.*must be a list of strings/);
  });
});
