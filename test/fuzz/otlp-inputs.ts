/**
 * The OTLP fuzz inputs: valid Claude-Code-shaped requests for the three signals, and the ways an
 * input is broken from them (mutated protobuf and JSON, gzip around either, hostile session ids,
 * invalid UTF-8 in place of a valid string, nesting deep enough to overflow a recursive decoder).
 * Plus the client side: one POST or one gRPC call, each with its own timeout, never a hang.
 */
import { request as httpRequest } from 'node:http';
import { gzipSync } from 'node:zlib';
import { protobufToOtlpJson } from '../../src/otlp/json.js';
import { requestType, responseType, type Signal } from '../../src/otlp/proto.js';
import { ccLogRecord, ccLogsRequest, ccMetricsRequest, logsRequest, type RawGrpcClient } from '../helpers/otlp.js';
import { HOSTILE_NAMES, INVALID_UTF8, TEXT_SPECIALS, mutateBytes, mutateText, nestPrefixes, type Rand } from './kit.js';

export type Transport = 'http' | 'grpc';

export interface OtlpInput {
  name: string;
  transport: Transport;
  signal: Signal;
  body: Buffer;
  /** HTTP only. */
  contentType?: string;
  contentEncoding?: string;
}

export const PB = 'application/x-protobuf';
export const JSON_TYPE = 'application/json';

export function tracesRequest(session: string): Buffer {
  const T = requestType('traces');
  const span = {
    traceId: Buffer.alloc(16, 1),
    spanId: Buffer.alloc(8, 2),
    name: 'claude_code.interaction',
    startTimeUnixNano: 1_764_000_000_000_000_000,
    endTimeUnixNano: 1_764_000_000_100_000_000,
    attributes: [{ key: 'session.id', value: { stringValue: session } }],
  };
  return Buffer.from(T.encode(T.fromObject({ resourceSpans: [{ scopeSpans: [{ scope: { name: 'com.anthropic.claude_code' }, spans: [span] }] }] })).finish());
}

/** A valid request of Claude Code's shape for `signal`, carrying `session`. */
export function validRequest(signal: Signal, session: string): Buffer {
  if (signal === 'logs') return ccLogsRequest(session);
  if (signal === 'metrics') return ccMetricsRequest(session, { input: 10, output: 20, cacheRead: 30, cacheCreation: 40 });
  return tracesRequest(session);
}

const SENTINEL = 'SENTINEL-0123456789';

/** A valid logs request whose session id's bytes are replaced in place (same length, so every length stays true). */
function withSessionBytes(bytes: Buffer): Buffer {
  const b = logsRequest([ccLogRecord(SENTINEL, { name: 'user_prompt', seq: 0, timeMs: Date.UTC(2026, 10, 30) })]);
  const at = b.indexOf(Buffer.from(SENTINEL));
  const fill = Buffer.alloc(SENTINEL.length, 0x61);
  bytes.copy(fill, 0, 0, Math.min(bytes.length, fill.length));
  fill.copy(b, at);
  return b;
}

/** A log record whose body is an AnyValue nested `depth` times (array_value → values → …), as protobuf. */
function deepAnyValueProtobuf(depth: number): Buffer {
  // AnyValue{string_value: "x"}, inside ArrayValue{values} inside AnyValue{array_value}, `depth` times,
  // then LogRecord{body}, ScopeLogs{log_records}, ResourceLogs{scope_logs}, Request{resource_logs}.
  const tags: number[] = [];
  for (let i = 0; i < depth; i++) tags.push(0x0a, 0x2a);
  return nestPrefixes(Buffer.from([0x0a, 0x01, 0x78]), [...tags, 0x2a, 0x12, 0x12, 0x0a]);
}

function deepAnyValueJson(depth: number): string {
  return `{"resourceLogs":[{"scopeLogs":[{"logRecords":[{"body":${'{"arrayValue":{"values":['.repeat(depth)}{"stringValue":"x"}${']}}'.repeat(depth)}}]}]}]}`;
}

const SIGNALS: Signal[] = ['logs', 'metrics', 'traces'];

/** A valid request as OTLP/JSON; the session id goes in as JSON text, so a lone surrogate travels as its escape. */
function validJson(signal: Signal, session: string): string {
  return protobufToOtlpJson(requestType(signal), validRequest(signal, SENTINEL)).split(JSON.stringify(SENTINEL)).join(JSON.stringify(session));
}

/** Deep nestings are built once per depth and encoding: they are big, and the same bytes every time. */
export class DeepInputs {
  private readonly made = new Map<string, Buffer>();

  get(depth: number, json: boolean): Buffer {
    const key = `${depth} ${json}`;
    let b = this.made.get(key);
    if (!b) this.made.set(key, (b = json ? Buffer.from(deepAnyValueJson(depth)) : deepAnyValueProtobuf(depth)));
    return b;
  }
}

/** One broken (or hostile but well-formed) input. */
export function brokenInput(r: Rand, deep: DeepInputs): OtlpInput {
  const signal = r.pick(SIGNALS);
  const transport: Transport = r.chance(0.3) ? 'grpc' : 'http';
  const json = transport === 'http' && r.chance(0.4);
  const gzip = transport === 'http' && r.chance(0.2);
  const session = r.chance(0.3) ? r.pick(HOSTILE_NAMES) : `fuzz-${r.int(1000)}`;
  const valid = validRequest(signal, session);
  let name: string;
  let body: Buffer;
  switch (r.int(5)) {
    case 0:
    case 1: {
      // Mutated bytes of a valid request (its session id may be hostile as well).
      const m = json ? mutateText(r, validJson(signal, session), TEXT_SPECIALS) : mutateBytes(r, valid);
      ({ name, body } = m);
      break;
    }
    case 2:
      // Well-formed, hostile only in its session id.
      name = `hostile session id ${JSON.stringify(session.slice(0, 24))}`;
      body = json ? Buffer.from(validJson(signal, session)) : valid;
      break;
    case 3:
      if (json) {
        name = 'raw invalid UTF-8 in a JSON string';
        const text = Buffer.from(validJson('logs', SENTINEL));
        const at = text.indexOf(Buffer.from(SENTINEL));
        body = Buffer.concat([text.subarray(0, at), r.pick(INVALID_UTF8), text.subarray(at + SENTINEL.length)]);
      } else {
        name = 'invalid UTF-8 session id';
        body = withSessionBytes(Buffer.concat([r.pick(INVALID_UTF8), r.bytes(4)]));
      }
      return { name, transport, signal: 'logs', body: gzip ? gzipSync(body) : body, ...httpHeaders(transport, json, gzip) };
    default: {
      // The deepest is past the body limit as JSON (refused by size), within it as protobuf.
      const depth = r.pick([64, 1000, 10_000, 30_000]);
      name = `nesting ${depth} deep`;
      body = deep.get(depth, json);
      return { name, transport, signal: 'logs', body: gzip ? gzipSync(body) : body, ...httpHeaders(transport, json, gzip) };
    }
  }
  if (gzip && r.chance(0.3)) {
    // A broken gzip stream rather than a gzipped broken body.
    const z = mutateBytes(r, gzipSync(body));
    return { name: `gzip ${z.name} of ${name}`, transport, signal, body: z.body, ...httpHeaders(transport, json, gzip) };
  }
  return { name: gzip ? `gzip of ${name}` : name, transport, signal, body: gzip ? gzipSync(body) : body, ...httpHeaders(transport, json, gzip) };
}

function httpHeaders(transport: Transport, json: boolean, gzip: boolean): Pick<OtlpInput, 'contentType' | 'contentEncoding'> {
  if (transport === 'grpc') return {};
  return { contentType: json ? JSON_TYPE : PB, ...(gzip ? { contentEncoding: 'gzip' } : {}) };
}

export interface Answer {
  /** HTTP status, or the gRPC status code; -1 when no answer came (timeout or connection error). */
  status: number;
  body: Buffer;
  error?: string;
}

/** One POST with exact bytes and headers, on a fresh connection, answered within `timeoutMs` or reported as unanswered. */
export function post(address: string, path: string, body: Buffer, headers: Record<string, string>, timeoutMs: number): Promise<Answer> {
  const i = address.lastIndexOf(':');
  return new Promise((resolve) => {
    const req = httpRequest(
      {
        host: address.slice(0, i),
        port: Number(address.slice(i + 1)),
        path,
        method: 'POST',
        agent: false,
        headers: { ...headers, 'content-length': body.length },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? -1, body: Buffer.concat(chunks) }));
        res.on('error', (e) => resolve({ status: res.statusCode ?? -1, body: Buffer.concat(chunks), error: e.message }));
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (e) => resolve({ status: -1, body: Buffer.alloc(0), error: e.message }));
    req.end(body);
  });
}

export async function send(input: OtlpInput, addresses: { http: string; grpc: string }, grpc: RawGrpcClient, timeoutMs: number): Promise<Answer> {
  if (input.transport === 'grpc') {
    const a = await grpc.export(input.signal, input.body, timeoutMs);
    return { status: a.code, body: a.body ?? Buffer.alloc(0), ...(a.code ? { error: a.details } : {}) };
  }
  const headers: Record<string, string> = { 'content-type': input.contentType ?? PB };
  if (input.contentEncoding) headers['content-encoding'] = input.contentEncoding;
  return post(addresses.http, `/v1/${input.signal}`, input.body, headers, timeoutMs);
}

/** How many items an answer's partial success refused (0 when none or not a success). */
export function rejectedCount(input: OtlpInput, a: Answer): number {
  const ok = input.transport === 'grpc' ? a.status === 0 : a.status === 200;
  if (!ok || a.body.length === 0) return 0;
  let o: Record<string, unknown>;
  if (input.transport === 'http' && input.contentType === JSON_TYPE) o = JSON.parse(a.body.toString('utf8')) as Record<string, unknown>;
  else {
    const T = responseType(input.signal);
    o = T.toObject(T.decode(a.body), { longs: Number }) as Record<string, unknown>;
  }
  const partial = (o.partialSuccess ?? {}) as Record<string, unknown>;
  return Number(partial.rejectedLogRecords ?? partial.rejectedDataPoints ?? partial.rejectedSpans ?? 0);
}
