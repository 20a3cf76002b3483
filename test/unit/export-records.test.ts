import { afterAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import protobuf from 'protobufjs';
import { SessionDataBuilder } from '../../src/formats/session-data/encode.js';
import type { SdRecord } from '../../src/formats/session-data/types.js';
import { encodeRound } from '../../src/formats/session-flow/encode.js';
import type { RoundHeader } from '../../src/formats/session-flow/types.js';
import { describeLanded, describeRound, timeNs, UnsendableFileError } from '../../src/exporters/otlp/records.js';
import { encodeLogsRequest, withIdentity } from '../../src/exporters/otlp/encode.js';
import { endpointKey, validateOtlpExporterConfig } from '../../src/exporters/otlp/config.js';
import { TokenBucket, type Clock } from '../../src/exporters/otlp/rate.js';
import { grpcRetryDelayMs, readResponse, retryAfterMs, stopsPass } from '../../src/exporters/otlp/transport.js';
import { resourceAttributes, runtimeOfAdapter, scope, SCOPE_NAME } from '../../src/otlp/identity.js';
import { PushState, PushStateError } from '../../src/storage/push-state.js';
import { otlpTypes } from '../../src/otlp/proto.js';
import { ConfigError } from '../../src/util/errors.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const SESSION = 'Ab12-session';
const rec = (ord: number, extra: Partial<SdRecord> = {}): SdRecord => ({ ord, off: ord * 100, sha: 'abcdefabcdef', bytes: 99, parts: [], ...extra });

function landed(records: SdRecord[], header: Record<string, unknown> = {}): Buffer {
  const b = new SessionDataBuilder({
    seq: 7,
    at: '2026-06-01T09:05:00.000000000Z',
    kind: 'transcript',
    adapter: 'claude-code-local/0.1.0',
    dialect: 'claude-code/1',
    src: 'p/x.jsonl',
    session: SESSION,
    stream: 'main',
    ...header,
  } as never);
  for (const r of records) b.add(r);
  return b.finish().bytes;
}

const attrsOf = (list: { key: string; value: { stringValue?: string; intValue?: number } }[]) =>
  Object.fromEntries(list.map((a) => [a.key, a.value.stringValue ?? a.value.intValue]));

describe('a landed file as a record', () => {
  test('carries the contract attributes in its table order, times from the records only', () => {
    const bytes = landed([
      rec(1, { time: '2026-06-01T09:00:02.500Z' }),
      // A time-like key inside a part's data is content, not the record's time.
      rec(2, { parts: [{ k: 'data', state: 'available', bytes: 10, data: { time: '2099-01-01T00:00:00Z' } }] }),
      rec(3, { time: '2026-06-01T09:00:01.250Z', parts: [{ k: 'text', state: 'available', bytes: 30, text: '"time":"2098-01-01T00:00:00Z"' }] }),
      rec(4, { time: '2026-06-01T11:00:03+02:00' }),
    ]);
    const f = describeLanded('Ab12-session/streams/main/transcript-x.sd', bytes);
    expect(f.attributes.map((a) => a.key)).toEqual([
      'asz.format',
      'asz.format.version',
      'asz.file',
      'asz.file.kind',
      'asz.file.digest',
      'asz.lines',
      'asz.session',
      'asz.from_time',
      'asz.through_time',
      'asz.seq',
      'asz.stream',
    ]);
    expect(attrsOf(f.attributes)).toEqual({
      'asz.format': 'sd',
      'asz.format.version': 'sd/1',
      'asz.file': 'Ab12-session/streams/main/transcript-x.sd',
      'asz.file.kind': 'transcript',
      'asz.file.digest': createHash('sha256').update(bytes).digest('hex'),
      'asz.lines': 6,
      'asz.session': SESSION,
      // The offset time is given in UTC; the others as the runtime wrote them.
      'asz.from_time': '2026-06-01T09:00:01.250Z',
      'asz.through_time': '2026-06-01T09:00:03Z',
      'asz.seq': 7,
      'asz.stream': 'main',
    });
    expect(f.timeNs).toBe(timeNs('2026-06-01T09:00:03Z'));
    expect(f.bytes).toBe(bytes);
  });

  test('a file with no record time has no time attributes and takes the time later; a run file names its run', () => {
    const f = describeLanded('s/runs/wf/journal-x.sd', landed([rec(1)], { kind: 'journal', stream: undefined, batch: 'wf_1' }));
    const a = attrsOf(f.attributes);
    expect(a['asz.from_time']).toBeUndefined();
    expect(a['asz.through_time']).toBeUndefined();
    expect(a['asz.run']).toBe('wf_1');
    expect(a['asz.stream']).toBeUndefined();
    expect(f.timeNs).toBeUndefined();
  });

  test('refuses what does not hold together, saying why', () => {
    const good = landed([rec(1, { time: '2026-06-01T09:00:00Z' })]);
    const cut = good.subarray(0, good.length - 5);
    expect(() => describeLanded('a.sd', cut)).toThrow(/cut short/);
    const edited = Buffer.from(good.toString().replace('"ord":1', '"ord":2'));
    expect(() => describeLanded('a.sd', edited)).toThrow(/digest .* does not match/);
    const notUtf8 = Buffer.concat([good.subarray(0, 20), Buffer.from([0xff, 0xfe]), good.subarray(22)]);
    expect(() => describeLanded('a.sd', notUtf8)).toThrow(UnsendableFileError);
    expect(() => describeLanded('a.sd', notUtf8)).toThrow(/not UTF-8/);
    expect(() => describeLanded('a.sd', Buffer.alloc(0))).toThrow(/empty/);
  });
});

function round(extra: Partial<RoundHeader> = {}): Buffer {
  const header: RoundHeader = {
    t: 'header',
    schema: 'sf/1',
    conversation: 'conv-1',
    session: SESSION,
    round: 2,
    previous: 'ff'.repeat(32),
    from_seq: 3,
    through_seq: 9,
    input_digest: 'ab'.repeat(32),
    parser: 'aszcol-v1',
    policy: 'v1+idle=10m0s',
    from_time: '2026-06-01T09:00:00.000Z',
    through_time: '2026-06-01T09:10:00.000Z',
    session_from_time: '2026-06-01T08:00:00.000Z',
    session_through_time: '2026-06-01T09:10:00.000Z',
    title: 'Fix the bug',
    talks: 3,
    steps: 40,
    streams: 2,
    segments: 1,
    unresolved: 4,
    changes: 0,
    lines_added: 0,
    lines_removed: 0,
    llm_calls: 9,
    subagents: 1,
    bash_runs: 2,
    ...extra,
  };
  return Buffer.from(encodeRound(header, [{ t: 'node', id: 'session', revision: 2, kind: 'session' }]).text);
}

describe('a round as a record', () => {
  test("carries the round header's pair, the session's pair and the conversation counts; stamped with the session's last activity", () => {
    const bytes = round();
    const f = describeRound('_conversations/conv-1/rounds/r000002-aaaaaaaaaaaa.sf', bytes);
    expect(f.attributes.map((a) => a.key)).toEqual([
      'asz.format',
      'asz.format.version',
      'asz.file',
      'asz.file.kind',
      'asz.file.digest',
      'asz.lines',
      'asz.session',
      'asz.from_time',
      'asz.through_time',
      'asz.session.from_time',
      'asz.session.through_time',
      'asz.conversation.title',
      'asz.conversation.talks',
      'asz.conversation.steps',
      'asz.conversation.streams',
      'asz.conversation.segments',
      'asz.conversation.unresolved',
      'asz.conversation.changes',
      'asz.conversation.lines_added',
      'asz.conversation.lines_removed',
      'asz.conversation.llm_calls',
      'asz.conversation.subagents',
      'asz.conversation.bash_runs',
      'asz.conversation',
      'asz.round',
    ]);
    expect(attrsOf(f.attributes)).toMatchObject({
      'asz.format': 'sf',
      'asz.format.version': 'sf/1',
      'asz.file.kind': 'round',
      'asz.lines': 3,
      'asz.session': SESSION,
      'asz.from_time': '2026-06-01T09:00:00.000Z',
      'asz.through_time': '2026-06-01T09:10:00.000Z',
      'asz.session.from_time': '2026-06-01T08:00:00.000Z',
      'asz.session.through_time': '2026-06-01T09:10:00.000Z',
      'asz.conversation.title': 'Fix the bug',
      'asz.conversation.talks': 3,
      'asz.conversation.steps': 40,
      'asz.conversation.streams': 2,
      'asz.conversation.segments': 1,
      'asz.conversation.unresolved': 4,
      'asz.conversation.llm_calls': 9,
      'asz.conversation.subagents': 1,
      'asz.conversation.bash_runs': 2,
      'asz.conversation': 'conv-1',
      'asz.round': 2,
      'asz.file.digest': createHash('sha256').update(bytes).digest('hex'),
    });
    expect(f.timeNs).toBe(timeNs('2026-06-01T09:10:00.000Z'));
  });

  test('workspace changes travel only when measured: the three attributes with their values, never a 0 for unknown', () => {
    // A header without the counts (written before they were measured) sends none of them.
    const bytes = round({ changes: undefined, lines_added: undefined, lines_removed: undefined } as never);
    const unknown = attrsOf(describeRound('r.sf', bytes).attributes);
    for (const k of ['changes', 'lines_added', 'lines_removed']) expect(unknown).not.toHaveProperty(`asz.conversation.${k}`);
    // The parse step measures them from the transcript's own patches: a header's counts travel.
    expect(attrsOf(describeRound('r.sf', round({ changes: 2, lines_added: 5, lines_removed: 1 })).attributes)).toMatchObject({
      'asz.conversation.changes': 2,
      'asz.conversation.lines_added': 5,
      'asz.conversation.lines_removed': 1,
    });
    const measured = describeRound('r.sf', bytes, { changes: 3, linesAdded: 42, linesRemoved: 7 });
    const keys = measured.attributes.map((a) => a.key);
    // asz 0.6's order: the five counts, the workspace three, the activity three.
    expect(keys.slice(keys.indexOf('asz.conversation.unresolved') + 1, keys.indexOf('asz.conversation'))).toEqual([
      'asz.conversation.changes',
      'asz.conversation.lines_added',
      'asz.conversation.lines_removed',
      'asz.conversation.llm_calls',
      'asz.conversation.subagents',
      'asz.conversation.bash_runs',
    ]);
    expect(attrsOf(measured.attributes)).toMatchObject({
      'asz.conversation.changes': 3,
      'asz.conversation.lines_added': 42,
      'asz.conversation.lines_removed': 7,
    });
    // A measured zero is a fact and travels.
    expect(attrsOf(describeRound('r.sf', bytes, { changes: 0, linesAdded: 0, linesRemoved: 0 }).attributes)['asz.conversation.changes']).toBe(0);
  });

  test('a round whose commit does not match is refused', () => {
    const bytes = Buffer.from(round().toString().replace('"steps":40', '"steps":41'));
    expect(() => describeRound('r.sf', bytes)).toThrow(/commit line's digest/);
  });
});

describe('the request', () => {
  test('decodes with the plain OTLP types to the same resources, scope, attributes, times and bodies (bodies as strings, unchanged)', () => {
    const body1 = landed([rec(1, { time: '2026-06-01T09:00:02.5Z', parts: [{ k: 'text', state: 'available', bytes: 9, text: 'héllo ✓ 𝄞' }] })]);
    const body2 = round();
    const f1 = describeLanded('a/streams/main/transcript-1.sd', body1);
    const f2 = describeRound('_conversations/c/rounds/r000002-x.sf', body2);
    const id = { serviceName: '', instanceId: 'me@here', layer: 'AI_AGENT' };
    const bytes = encodeLogsRequest([
      {
        resource: resourceAttributes(id, 'Claude Code'),
        scope: scope(),
        items: [{ body: f1.bytes, timeNs: f1.timeNs, observedNs: 1n, attributes: f1.attributes }],
      },
      {
        resource: resourceAttributes(id, 'Mock Agent'),
        scope: scope(),
        items: [{ body: f2.bytes, timeNs: undefined, observedNs: 123456789012345678n, attributes: f2.attributes }],
      },
    ]);
    const T = otlpTypes().ExportLogsServiceRequest;
    const o = T.toObject(T.decode(bytes), { longs: String }) as any;
    expect(o.resourceLogs).toHaveLength(2);
    const res = attrsOf(o.resourceLogs[0].resource.attributes);
    expect(res).toEqual({
      'service.name': 'Claude Code',
      'service.instance.id': 'me@here',
      'service.layer': 'AI_AGENT',
      'telemetry.sdk.name': 'aszcol',
      'telemetry.sdk.version': expect.stringMatching(/^\d+\.\d+\.\d+/),
      'telemetry.sdk.language': 'nodejs',
    });
    expect(attrsOf(o.resourceLogs[1].resource.attributes)['service.name']).toBe('Mock Agent');
    expect(o.resourceLogs[0].scopeLogs[0].scope).toEqual({ name: SCOPE_NAME, version: res['telemetry.sdk.version'] });
    const r1 = o.resourceLogs[0].scopeLogs[0].logRecords[0];
    const r2 = o.resourceLogs[1].scopeLogs[0].logRecords[0];
    expect(r1.body.stringValue).toBe(body1.toString('utf8'));
    expect(Buffer.from(r1.body.stringValue, 'utf8').equals(body1)).toBe(true);
    expect(r2.body.stringValue).toBe(body2.toString('utf8'));
    expect(r1.timeUnixNano).toBe(String(timeNs('2026-06-01T09:00:02.5Z')));
    expect(r1.observedTimeUnixNano).toBe('1');
    expect(r2.timeUnixNano).toBeUndefined();
    expect(r2.observedTimeUnixNano).toBe('123456789012345678');
    expect(r1.attributes.map((a: any) => a.key)).toEqual(f1.attributes.map((a) => a.key));
    expect(Number(attrsOf(r2.attributes)['asz.round'])).toBe(2);
  });

  test("a spooled metrics request (Claude Code's own, or derived) goes under the exporter's identity; points and the runtime's other resource attributes unchanged", () => {
    const T = otlpTypes().ExportMetricsServiceRequest;
    const ccResource = [
      { key: 'service.name', value: { stringValue: 'claude-code' } },
      { key: 'service.version', value: { stringValue: '2.1.328' } },
      { key: 'telemetry.sdk.name', value: { stringValue: 'opentelemetry' } },
      { key: 'host.arch', value: { stringValue: 'arm64' } },
    ];
    const point = {
      asDouble: 3,
      attributes: [
        { key: 'session.id', value: { stringValue: 's-1' } },
        { key: 'type', value: { stringValue: 'input' } },
      ],
    };
    const src = Buffer.from(
      T.encode(
        T.fromObject({
          resourceMetrics: [
            {
              resource: { attributes: ccResource },
              scopeMetrics: [{ scope: { name: 'com.anthropic.claude_code' }, metrics: [{ name: 'claude_code.token.usage', sum: { dataPoints: [point] } }] }],
            },
            { resource: { attributes: [] }, scopeMetrics: [{ scope: { name: 's' }, metrics: [{ name: 'm', sum: { dataPoints: [{ asDouble: 1 }] } }] }] },
          ],
        }),
      ).finish(),
    );
    const identity = resourceAttributes({ serviceName: '', instanceId: 'alice@box', layer: 'AI_AGENT' }, 'Claude Code');
    const o = T.toObject(T.decode(withIdentity(src, identity))) as any;
    const before = T.toObject(T.decode(src)) as any;
    for (const [n, rm] of (o.resourceMetrics as any[]).entries()) {
      expect(attrsOf(rm.resource.attributes)).toMatchObject({
        'service.name': 'Claude Code',
        'service.instance.id': 'alice@box',
        'service.layer': 'AI_AGENT',
        'telemetry.sdk.name': 'aszcol',
      });
      expect(rm.scopeMetrics).toEqual(before.resourceMetrics[n].scopeMetrics);
    }
    // The runtime's own facts stay; its service name and SDK do not.
    expect(attrsOf(o.resourceMetrics[0].resource.attributes)).toMatchObject({ 'service.version': '2.1.328', 'host.arch': 'arm64' });
    expect(o.resourceMetrics[0].resource.attributes.filter((a: any) => a.key === 'service.name')).toHaveLength(1);
  });

  test("the runtime is named from the landed header's adapter", () => {
    expect(runtimeOfAdapter('claude-code-local/0.1.0')).toBe('Claude Code');
    expect(runtimeOfAdapter('claude-code-otlp/0.1.0')).toBe('Claude Code');
    expect(runtimeOfAdapter('mock/1')).toBe('Mock Agent');
    expect(runtimeOfAdapter(undefined)).toBe('unknown_service');
  });
});

describe('configuration', () => {
  const v = (raw: unknown) => validateOtlpExporterConfig(raw, 'exporters.otlp/oap');
  const refused = (raw: unknown, path: string, re: RegExp) => {
    let err: unknown;
    try {
      v(raw);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as ConfigError).path).toBe(path);
    expect((err as ConfigError).reason).toMatch(re);
  };

  test('defaults', () => {
    const c = v({ endpoint: 'oap.skywalking:11800' });
    expect(c).toMatchObject({
      protocol: 'grpc',
      tls: false,
      compression: 'none',
      timeoutMs: 30_000,
      logs: true,
      metrics: true,
      batchBytes: 8 * 1024 * 1024,
      maxBytesPerMinute: 0,
      layer: 'AI_AGENT',
      serviceName: '',
      instanceId: '',
      headers: {},
    });
    expect(endpointKey(c)).toBe('grpc://oap.skywalking:11800');
    expect(endpointKey(v({ endpoint: '[::1]:4317', tls: true }))).toBe('grpcs://[::1]:4317');
    expect(endpointKey(v({ protocol: 'http', endpoint: 'https://oap:12800/base/' }))).toBe('https://oap:12800/base');
    expect(v({ endpoint: 'h:1', headers: { Authorization: 'Bearer x' }, batch_bytes: '1MiB', max_bytes_per_minute: '10MB', timeout: '2s' })).toMatchObject({
      headers: { authorization: 'Bearer x' },
      batchBytes: 1048576,
      maxBytesPerMinute: 10_000_000,
      timeoutMs: 2000,
    });
  });

  test("without a protocol, the endpoint says it: a URL is OTLP/HTTP (the OAP's core port), host:port is gRPC", () => {
    expect(v({ endpoint: 'http://oap:12800' })).toMatchObject({ protocol: 'http' });
    expect(endpointKey(v({ endpoint: 'https://oap:12800' }))).toBe('https://oap:12800');
    expect(v({ endpoint: 'oap:11800' })).toMatchObject({ protocol: 'grpc' });
  });

  test('the identity: a named service and instance are one line of text; white space, control characters and overlong names are refused at their path', () => {
    expect(v({ endpoint: 'h:1', service_name: 'Claude Code', instance_id: 'alice@example.com' })).toMatchObject({
      serviceName: 'Claude Code',
      instanceId: 'alice@example.com',
    });
    refused({ endpoint: 'h:1', service_name: '   ' }, 'exporters.otlp/oap.service_name', /only white space/);
    refused({ endpoint: 'h:1', instance_id: ' bob@box' }, 'exporters.otlp/oap.instance_id', /starts or ends with white space/);
    refused({ endpoint: 'h:1', instance_id: 'bob\nbox' }, 'exporters.otlp/oap.instance_id', /control characters/);
    refused({ endpoint: 'h:1', service_name: 'x'.repeat(256) }, 'exporters.otlp/oap.service_name', /256 characters is too long/);
    refused({ endpoint: 'h:1', layer: 'ai-agent' }, 'exporters.otlp/oap.layer', /upper case with underscores/);
  });

  test('every refusal names its exact path', () => {
    refused({}, 'exporters.otlp/oap.endpoint', /required/);
    refused({ protocol: 'grpc', endpoint: 'http://oap:11800' }, 'exporters.otlp/oap.endpoint', /host:port/);
    refused({ protocol: 'http', endpoint: 'oap:12800' }, 'exporters.otlp/oap.endpoint', /base URL/);
    refused({ protocol: 'http', endpoint: 'http://oap:12800/v1/logs' }, 'exporters.otlp/oap.endpoint', /appended/);
    refused({ protocol: 'udp', endpoint: 'h:1' }, 'exporters.otlp/oap.protocol', /one of grpc, http/);
    refused({ endpoint: 'h:1', logs: false, metrics: false }, 'exporters.otlp/oap.logs', /both false/);
    refused({ endpoint: 'h:1', layer: 'ai-agent' }, 'exporters.otlp/oap.layer', /upper case/);
    refused({ protocol: 'http', endpoint: 'http://h:1', tls: true }, 'exporters.otlp/oap.tls', /grpc only/);
    refused({ endpoint: 'h:1', batch_bytes: 0 }, 'exporters.otlp/oap.batch_bytes', /at least 1/);
    refused({ endpoint: 'h:1', headers: { 'content-type': 'x' } }, 'exporters.otlp/oap.headers.content-type', /transport/);
    refused({ endpoint: 'h:1', headers: { 'bad header': 'x' } }, 'exporters.otlp/oap.headers.bad header', /header name/);
    refused({ endpoint: 'h:1', colour: 'red' }, 'exporters.otlp/oap.colour', /unknown key/);
    refused({ endpoint: 'h:1', ca_file: '/nonexistent' }, 'exporters.otlp/oap.ca_file', /only over TLS/);
    refused({ endpoint: 'h:1', tls: true, ca_file: '/nonexistent/ca.pem' }, 'exporters.otlp/oap.ca_file', /cannot be read/);
    refused(
      { endpoint: 'h:1', retry_on_failure: { initial_interval: '10s', max_interval: '1s' } },
      'exporters.otlp/oap.retry_on_failure.max_interval',
      /at least/,
    );
  });

  test('spool_retention: on by default, keep as a duration or whole days, receivers to stop waiting for; each refusal at its path', () => {
    expect(v({ endpoint: 'h:1' }).spoolRetention).toEqual({ enabled: true, keepMs: 0, ignoreReceivers: [] });
    expect(v({ endpoint: 'h:1', spool_retention: { keep: '7d' } }).spoolRetention.keepMs).toBe(7 * 86_400_000);
    expect(
      v({ endpoint: 'h:1', spool_retention: { enabled: false, keep: '1h30m', ignore_receivers: ['grpc://old:4317', 'https://oap:12800/base', 'unknown'] } })
        .spoolRetention,
    ).toEqual({ enabled: false, keepMs: 5_400_000, ignoreReceivers: ['grpc://old:4317', 'https://oap:12800/base', 'unknown'] });
    const P = 'exporters.otlp/oap.spool_retention';
    refused({ endpoint: 'h:1', spool_retention: { keep_sent: '1h' } }, `${P}.keep_sent`, /unknown key; allowed here: enabled, keep, ignore_receivers/);
    refused({ endpoint: 'h:1', spool_retention: 'forever' }, P, /must be a mapping/);
    refused({ endpoint: 'h:1', spool_retention: { enabled: 'yes' } }, `${P}.enabled`, /true or false/);
    refused({ endpoint: 'h:1', spool_retention: { keep: 'a while' } }, `${P}.keep`, /duration such as 0s, 90m, 24h or 7d/);
    refused({ endpoint: 'h:1', spool_retention: { keep: -5 } }, `${P}.keep`, /duration/);
    refused({ endpoint: 'h:1', spool_retention: { ignore_receivers: 'grpc://old:4317' } }, `${P}.ignore_receivers`, /list of strings/);
    refused(
      { endpoint: 'h:1', spool_retention: { ignore_receivers: ['grpc://a:1', 'old:4317'] } },
      `${P}.ignore_receivers[1]`,
      /as push\.state does: grpc:\/\/host:port/,
    );
    refused(
      { endpoint: 'h:1', spool_retention: { ignore_receivers: ['http://oap:12800/'] } },
      `${P}.ignore_receivers[0]`,
      /without the trailing slash: "http:\/\/oap:12800"/,
    );
    refused({ endpoint: 'h:1', spool_retention: { ignore_receivers: ['grpc://a:1', 'grpc://a:1'] } }, `${P}.ignore_receivers[1]`, /listed twice/);
    refused(
      { endpoint: 'h:1', spool_retention: { ignore_receivers: ['grpc://h:1'] } },
      `${P}.ignore_receivers[0]`,
      /this exporter's own receiver \(grpc:\/\/h:1\)/,
    );
  });
});

describe('the rate budget', () => {
  function fakeClock() {
    let t = 0;
    const sleeps: number[] = [];
    const clock: Clock = {
      now: () => t,
      sleep: async (ms) => {
        sleeps.push(ms);
        t += ms;
      },
    };
    return {
      clock,
      sleeps,
      advance: (ms: number) => {
        t += ms;
      },
    };
  }

  test("starts full, refills continuously, never holds more than a minute's worth", async () => {
    const { clock, sleeps, advance } = fakeClock();
    const b = new TokenBucket(6000, clock); // 100 bytes a second
    expect(await b.take(6000)).toBe(0);
    expect(await b.take(500)).toBe(5000);
    expect(sleeps).toEqual([5000]);
    advance(3_600_000);
    expect(b.waitFor(6000)).toBe(0); // an hour idle still holds one minute
    await b.take(6000);
    expect(b.waitFor(1)).toBe(10);
  });

  test('a request larger than the budget waits for a full bucket and leaves it empty', async () => {
    const { clock } = fakeClock();
    const b = new TokenBucket(1000, clock);
    await b.take(400);
    expect(await b.take(50_000)).toBe(24_000);
    expect(b.waitFor(100)).toBe(6000);
  });

  test('a throttled answer empties it; zero is no limit', async () => {
    const { clock } = fakeClock();
    const b = new TokenBucket(60_000, clock);
    b.empty();
    expect(b.waitFor(1000)).toBe(1000);
    const none = new TokenBucket(0, clock);
    expect(await none.take(1e12)).toBe(0);
  });

  test('an aborted wait takes nothing', async () => {
    const ac = new AbortController();
    const clock: Clock = {
      now: () => 0,
      sleep: async () => {
        ac.abort();
      },
    };
    const b = new TokenBucket(60, clock);
    await b.take(60);
    expect(await b.take(10, ac.signal)).toBeUndefined();
  });
});

describe('answers', () => {
  const T = otlpTypes().ExportLogsServiceResponse;
  const enc = (o: object) => Buffer.from(T.encode(T.fromObject(o)).finish());

  test('a partial success that rejected anything is taken, with what was rejected and why (asz 0.6)', () => {
    expect(readResponse('logs', Buffer.alloc(0), 'x')).toEqual({ ok: true });
    expect(readResponse('logs', enc({}), 'x')).toEqual({ ok: true });
    const p = readResponse('logs', enc({ partialSuccess: { rejectedLogRecords: 2, errorMessage: 'bad' } }), 'x');
    expect(p).toEqual({ ok: true, rejected: { items: 2, message: "x rejected 2 of the request's log records: bad" } });
    expect(stopsPass(p)).toBe(false);
    expect(readResponse('logs', enc({ partialSuccess: { errorMessage: 'just so you know' } }), 'x')).toEqual({ ok: true, warning: 'just so you know' });
    expect(readResponse('logs', Buffer.from('<html>'), 'x')).toMatchObject({ ok: false });
  });

  test('Retry-After as seconds or a date; RetryInfo in a gRPC status', () => {
    expect(retryAfterMs('7')).toBe(7000);
    expect(retryAfterMs(new Date(Date.now() + 60_000).toUTCString())).toBeGreaterThan(55_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    const t = otlpTypes();
    const info = t.RetryInfo.encode(t.RetryInfo.fromObject({ retryDelay: { seconds: 3, nanos: 500_000_000 } })).finish();
    const st = Buffer.from(
      t.Status.encode({ code: 8, message: 'm', details: [{ type_url: 'type.googleapis.com/google.rpc.RetryInfo', value: info }] } as never).finish(),
    );
    expect(grpcRetryDelayMs(st)).toBe(3500);
    const other = Buffer.from(
      t.Status.encode({ code: 8, message: 'm', details: [{ type_url: 'type.googleapis.com/google.rpc.DebugInfo', value: info }] } as never).finish(),
    );
    expect(grpcRetryDelayMs(other)).toBeUndefined();
    expect(grpcRetryDelayMs(Buffer.from('junk'))).toBeUndefined();
  });
});

describe('push.state', () => {
  const digest = (s: string) => createHash('sha256').update(s).digest('hex');

  test('records per endpoint, so a new endpoint has nothing sent; survives a reload', () => {
    const root = tempDir();
    const s = new PushState(root);
    s.record('grpc://127.0.0.1:11800', [
      { rel: 'a/streams/main/t-1.sd', digest: digest('a') },
      { rel: 'with space/x.sd', digest: digest('b') },
    ]);
    s.record('http://127.0.0.1:4318', [{ rel: 'a/streams/main/t-1.sd', digest: digest('a') }]);
    const again = new PushState(root);
    expect([...again.sent('grpc://127.0.0.1:11800').keys()]).toEqual(['a/streams/main/t-1.sd', 'with space/x.sd']);
    expect(again.sent('grpc://127.0.0.1:11800').get('with space/x.sd')).toBe(digest('b'));
    expect(again.sent('grpcs://other:1').size).toBe(0);
    const text = readFileSync(join(root, 'push.state'), 'utf8');
    expect(text.split('\n')[0]).toBe('schema 1');
    expect(text).toContain(`endpoint grpc://127.0.0.1:11800\npushed a/streams/main/t-1.sd ${digest('a')}\n`);
  });

  test('a torn last line (a crash mid-append) is ignored, and cut before the next append', () => {
    const root = tempDir();
    const s = new PushState(root);
    s.record('e1', [{ rel: 'f1', digest: digest('1') }]);
    appendFileSync(join(root, 'push.state'), `endpoint e1\npushed f2 ${digest('2').slice(0, 20)}`);
    const r = new PushState(root);
    expect([...r.sent('e1').keys()]).toEqual(['f1']);
    r.record('e1', [{ rel: 'f3', digest: digest('3') }]);
    const text = readFileSync(join(root, 'push.state'), 'utf8');
    expect(text).not.toContain('f2');
    expect([...new PushState(root).sent('e1').keys()]).toEqual(['f1', 'f3']);
  });

  test('lines of a later writer are passed over; files with no endpoint line belong to "unknown"; a bad line is an error naming it', () => {
    const root = tempDir();
    writeFileSync(join(root, 'push.state'), `schema 1\npushed old.sd ${digest('o')}\nendpoint e\npushed f ${digest('f')}\nrejected f\n`);
    const s = new PushState(root);
    expect(s.endpoints().sort()).toEqual(['e', 'unknown']);
    writeFileSync(join(root, 'push.state'), 'schema 1\npushed nodigest\n');
    expect(() => new PushState(root).sent('e')).toThrow(PushStateError);
    expect(() => new PushState(root).sent('e')).toThrow(/push\.state:2/);
  });

  test('many appends are rewritten grouped by endpoint', () => {
    const root = tempDir();
    const s = new PushState(root);
    for (let n = 0; n < 80; n++) s.record(n % 2 ? 'a' : 'b', [{ rel: `f${n}`, digest: digest(String(n)) }]);
    const text = readFileSync(join(root, 'push.state'), 'utf8');
    expect(text.match(/^endpoint /gm)!.length).toBeLessThan(30);
    const r = new PushState(root);
    expect(r.sent('a').size).toBe(40);
    expect(r.sent('b').size).toBe(40);
  });
});

test('a fixed64 time survives above 2^53', () => {
  const ns = 1_780_304_401_123_456_789n;
  const T = otlpTypes().LogRecord;
  const Long = protobuf.util.Long as any;
  const o = T.toObject(T.decode(T.encode({ timeUnixNano: Long.fromString(ns.toString(), true) }).finish()), { longs: String }) as any;
  expect(o.timeUnixNano).toBe(ns.toString());
});
