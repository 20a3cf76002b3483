/**
 * The load generator of `npm run bench:receiver`, run as its own process so the server under
 * test has its event loop to itself. It sends one kind of request over one transport from
 * `concurrency` slots, each slot waiting for its answer before sending again, for a fixed time
 * (and never more than a fixed number of requests), and prints one JSON line.
 *
 * Every request is distinct: each slot stamps a counter into a time field of its own copy of the
 * payload before sending (only after the previous answer, so bytes in flight never change).
 * Identical bytes would be answered as exact retries and measure nothing.
 */
import { Agent, request } from 'node:http';
import * as grpc from '@grpc/grpc-js';
import { ccLogRecord, ccLogsRequest, ccMetricsRequest, findU64, grpcDefinition, logsRequest } from '../helpers/otlp.js';
import type { Signal } from '../../src/otlp/proto.js';

export interface ClientSpec {
  transport: 'grpc' | 'http';
  address: string;
  signal: Signal;
  size: 'cc' | '4mb';
  concurrency: number;
  durationMs: number;
  warmupMs: number;
  maxRequests: number;
}

export interface ClientResult {
  /** Answered with success in the measuring window. */
  requests: number;
  /** Answered with success in all, warm-up and after the window included: what the server must land. */
  answered: number;
  bytes: number;
  seconds: number;
  errors: number;
  firstError?: string;
  payload_bytes: number;
  p50_ms: number;
  p99_ms: number;
}

const T0_MS = 1_796_015_652_148;
const SENTINEL = BigInt(T0_MS) * 1_000_000n;

/** One slot's payload and where its varying 8 bytes are. */
function payload(spec: ClientSpec, slot: number): { buf: Buffer; at: number } {
  const session = `bench-${spec.signal}-${spec.size}-${slot}-${process.pid}`;
  let buf: Buffer;
  if (spec.signal === 'metrics') {
    // About 400 bytes a point: 4 MB is some ten thousand points.
    buf = ccMetricsRequest(session, { input: 100, output: 40, cacheRead: 300, cacheCreation: 20 }, T0_MS, spec.size === '4mb' ? 10_400 : 0);
  } else if (spec.size === 'cc') {
    buf = ccLogsRequest(session, 0, T0_MS, `s${slot}`);
  } else {
    // One event carrying a 4 MB body, like a large tool output logged whole.
    buf = logsRequest([ccLogRecord(session, { name: 'tool_result', seq: 0, timeMs: T0_MS }, 'x'.repeat(4 * 1000 * 1000))]);
  }
  const at = findU64(buf, SENTINEL);
  if (at < 0) throw new Error('bench client: the sentinel time was not found in the payload');
  return { buf, at };
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return +sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!.toFixed(2);
}

async function main(): Promise<void> {
  const spec = JSON.parse(process.argv[2]!) as ClientSpec;
  const [host, port] = [spec.address.slice(0, spec.address.lastIndexOf(':')), Number(spec.address.slice(spec.address.lastIndexOf(':') + 1))];
  const agent = new Agent({ keepAlive: true, maxSockets: spec.concurrency });
  const Ctor = grpc.makeGenericClientConstructor(grpcDefinition(spec.signal), spec.signal);
  const client =
    spec.transport === 'grpc'
      ? (new Ctor(spec.address, grpc.credentials.createInsecure(), {
          'grpc.max_send_message_length': -1,
          'grpc.max_receive_message_length': -1,
        }) as unknown as { Export: (b: Buffer, cb: (e: grpc.ServiceError | null) => void) => void; close(): void })
      : undefined;

  const send = (buf: Buffer): Promise<string | undefined> =>
    new Promise((resolve) => {
      if (client) {
        client.Export(buf, (err) => resolve(err ? `grpc ${err.code} ${err.details}` : undefined));
        return;
      }
      const req = request(
        { host, port, path: `/v1/${spec.signal}`, method: 'POST', agent, headers: { 'content-type': 'application/x-protobuf', 'content-length': buf.length } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode === 200 ? undefined : `http ${res.statusCode}`));
        },
      );
      req.on('error', (e) => resolve(`http ${e.message}`));
      req.end(buf);
    });

  let counter = 0;
  let requests = 0,
    bytes = 0,
    errors = 0,
    answered = 0;
  let firstError: string | undefined;
  const latencies: number[] = [];
  const start = Date.now();
  const measureFrom = start + spec.warmupMs;
  const stopAt = measureFrom + spec.durationMs;
  const slots = Array.from({ length: spec.concurrency }, (_, i) => payload(spec, i));
  await Promise.all(
    slots.map(async ({ buf, at }) => {
      while (Date.now() < stopAt && requests < spec.maxRequests) {
        buf.writeBigUInt64LE(SENTINEL + BigInt(++counter) * 1000n, at);
        const t = performance.now();
        const err = await send(buf);
        const now = Date.now();
        if (!err) answered++;
        if (now >= measureFrom && now < stopAt) {
          if (err) {
            errors++;
            firstError ??= err;
          } else {
            requests++;
            bytes += buf.length;
            latencies.push(performance.now() - t);
          }
        }
      }
    }),
  );
  const seconds = Math.max(0.001, (Math.min(Date.now(), stopAt) - measureFrom) / 1000);
  client?.close();
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const out: ClientResult = {
    requests,
    answered,
    bytes,
    seconds,
    errors,
    firstError,
    payload_bytes: slots[0]!.buf.length,
    p50_ms: percentile(latencies, 0.5),
    p99_ms: percentile(latencies, 0.99),
  };
  process.stdout.write(JSON.stringify(out) + '\n');
}

main().catch((e) => {
  process.stderr.write(String((e as Error).stack ?? e) + '\n');
  process.exit(1);
});
