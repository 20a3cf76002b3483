/**
 * `npm run bench:receiver`: how fast the claude_code_otlp receiver takes requests, over gRPC and
 * HTTP, as a ratio against a no-op @grpc/grpc-js server and a no-op node:http server measured in
 * the same run with the same client and the same bytes. The no-op servers read the whole body
 * and answer an empty success; the receiver checks every byte, appends the request to its
 * journal and answers once it is written there (`durability: process`, the default); its
 * landing thread lands it meanwhile, pacing itself while requests keep coming. After each
 * receiver case the run waits for everything accepted to land and reports how long that took
 * (`drain_ms`), checking that every accepted record and metrics request did land, and the rate
 * counting that wait (`end_to_end_req_per_s`: answered in the window / (window + drain)). The
 * Claude-Code-sized cases run a second receiver with `durability: machine` too (answered only
 * once synced: `machine` and `ratio_machine`). For scale, how many such requests per second this
 * disk can sync at all when `concurrency` of them share each sync (`disk_sync_req_per_s`). Prints
 * JSON and writes bench-out/receiver.json.
 *
 * Each case: one load process (test/bench/receiver-client.ts) with a fixed concurrency, a short
 * warm-up, then a fixed measuring time, bounded in requests too. Claude-Code-sized requests are
 * the runtime's own shapes (a 5 KB logs request, a 3 KB metrics request); the large ones are
 * 4 MB. Peak RSS is sampled in this process (the servers') during every receiver case, and a
 * longer sustained run reports RSS after each of its windows: flat means memory does not grow
 * with the number of requests taken.
 */
import { execFile } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { closeSync, fdatasyncSync, mkdirSync, mkdtempSync, openSync, rmSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import { OtlpReceiver, validateOtlpReceiverConfig } from '../../src/receivers/claude-code-otlp/index.js';
import { SIGNALS, type Signal } from '../../src/otlp/proto.js';
import { grpcDefinition } from '../helpers/otlp.js';
import type { ClientResult, ClientSpec } from './receiver-client.js';

const run = promisify(execFile);
const clientJs = fileURLToPath(new URL('./receiver-client.js', import.meta.url));
const MB = 1e6;
const SCALE = Number(process.env.BENCH_SCALE ?? 1);

async function load(spec: ClientSpec): Promise<ClientResult> {
  const { stdout } = await run(process.execPath, [clientJs, JSON.stringify(spec)], { maxBuffer: 1 << 20 });
  return JSON.parse(stdout.trim().split('\n').pop()!) as ClientResult;
}

function noopHttp(): Promise<{ server: Server; address: string }> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      Buffer.concat(chunks); // hold the body whole, as any OTLP server must before decoding it
      res.writeHead(200, { 'content-type': 'application/x-protobuf', 'content-length': 0 });
      res.end();
    });
  });
  server.keepAliveTimeout = 65_000;
  return new Promise((r) => server.listen(0, '127.0.0.1', () => r({ server, address: `127.0.0.1:${(server.address() as { port: number }).port}` })));
}

function noopGrpc(): Promise<{ server: grpc.Server; address: string }> {
  const server = new grpc.Server({ 'grpc.max_receive_message_length': -1 });
  for (const s of SIGNALS) server.addService(grpcDefinition(s), { Export: (_c: unknown, cb: grpc.sendUnaryData<Buffer>) => cb(null, Buffer.alloc(0)) });
  return new Promise((r, j) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, port) => (e ? j(e) : r({ server, address: `127.0.0.1:${port}` }))),
  );
}

class RssSampler {
  peak = 0;
  private timer?: NodeJS.Timeout;
  start(): void {
    this.peak = Math.max(this.peak, process.memoryUsage().rss);
    this.timer = setInterval(() => (this.peak = Math.max(this.peak, process.memoryUsage().rss)), 25);
  }
  stop(): number {
    clearInterval(this.timer);
    return this.peak;
  }
}

/** Requests per second this disk syncs when `group` requests of `bytes` share each fdatasync of an appended file. */
function diskSyncRate(dir: string, bytes: number, group: number, ms = 1000): number {
  const path = join(dir, 'disk-sync-probe');
  const fd = openSync(path, 'w');
  const buf = Buffer.alloc(bytes * group, 7);
  let n = 0;
  const start = Date.now();
  try {
    while (Date.now() - start < ms) {
      writeSync(fd, buf);
      fdatasyncSync(fd);
      n += group;
    }
  } finally {
    closeSync(fd);
    unlinkSync(path);
  }
  return +(n / ((Date.now() - start) / 1000)).toFixed(1);
}

const rate = (r: ClientResult) => ({
  req_per_s: +(r.requests / r.seconds).toFixed(1),
  mb_per_s: +(r.bytes / MB / r.seconds).toFixed(1),
  p50_ms: r.p50_ms,
  p99_ms: r.p99_ms,
  requests: r.requests,
  errors: r.errors,
  ...(r.firstError ? { first_error: r.firstError } : {}),
});

async function main(): Promise<void> {
  const base = mkdtempSync(join(process.env.BENCH_DIR ?? tmpdir(), 'aszcol-bench-otlp-'));
  const result: Record<string, unknown> = {
    benchmark: 'receiver',
    node: process.version,
    scale: SCALE,
    target: 'receiver / no-op >= 0.7 in requests/s; RSS flat across the sustained windows',
    note: 'the receiver answers once the request is written to its journal (durability: process); machine is a second receiver that answers once synced (durability: machine); drain_ms is the time after a case until everything it accepted had landed, end_to_end_req_per_s counts it; disk_sync_req_per_s is how many such requests this disk can sync per second at all, `concurrency` per sync',
  };
  const sampler = new RssSampler();
  let receiver: OtlpReceiver | undefined;
  let strict: OtlpReceiver | undefined;
  const servers: (() => void)[] = [];
  try {
    const cases: { name: string; signal: Signal; size: 'cc' | '4mb'; concurrency: number; durationMs: number; maxRequests: number }[] = [
      { name: 'cc_logs', signal: 'logs', size: 'cc', concurrency: 16, durationMs: 3000 * SCALE, maxRequests: 200_000 },
      { name: 'cc_metrics', signal: 'metrics', size: 'cc', concurrency: 16, durationMs: 3000 * SCALE, maxRequests: 200_000 },
      { name: '4mb_logs', signal: 'logs', size: '4mb', concurrency: 4, durationMs: 4000 * SCALE, maxRequests: 2_000 },
      { name: '4mb_metrics', signal: 'metrics', size: '4mb', concurrency: 4, durationMs: 4000 * SCALE, maxRequests: 2_000 },
    ];
    const nh = await noopHttp();
    servers.push(() => nh.server.close());
    servers.push(() => nh.server.closeAllConnections());
    const ng = await noopGrpc();
    servers.push(() => ng.server.forceShutdown());
    const receiverOf = (durability: 'process' | 'machine', dir: string) =>
      new OtlpReceiver(
        validateOtlpReceiverConfig({ protocols: { grpc: { endpoint: '127.0.0.1:0' }, http: { endpoint: '127.0.0.1:0' } }, max_spool_bytes: 0, durability }),
        { storageRoot: join(base, dir) },
      );
    receiver = receiverOf('process', 'data');
    await receiver.start();
    const ra = receiver.addresses();
    const machineReceiver = receiverOf('machine', 'data-machine');
    strict = machineReceiver;
    await machineReceiver.start();
    const sa = machineReceiver.addresses();
    const out: Record<string, unknown> = {};
    const windows: { rss_mb: number; heap_mb: number; req_per_s: number }[] = [];
    // BENCH_ONLY=regex runs only the matching cases (and skips the sustained run): for working on one.
    const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : undefined;
    for (const c of cases) {
      // Sustained load, after the Claude-Code-sized cases and before the large ones fill the page
      // cache: the same small logs over HTTP in consecutive windows, RSS and heap after each.
      if (c.size === '4mb' && windows.length === 0 && !only) {
        for (let w = 0; w < 4; w++) {
          const r = await load({
            transport: 'http',
            address: ra.http!,
            signal: 'logs',
            size: 'cc',
            concurrency: 16,
            durationMs: 3000 * SCALE,
            warmupMs: 0,
            maxRequests: 200_000,
          });
          (globalThis as { gc?: () => void }).gc?.();
          const m = process.memoryUsage();
          windows.push({ rss_mb: +(m.rss / MB).toFixed(1), heap_mb: +(m.heapUsed / MB).toFixed(1), req_per_s: +(r.requests / r.seconds).toFixed(1) });
        }
        // What the windows accepted lands before the next case counts what landed: it would be counted as that case's.
        if (!(await receiver.landed(300_000))) throw new Error('the sustained windows did not land within 300 s');
      }
      for (const transport of ['grpc', 'http'] as const) {
        if (only && !only.test(`${c.name}_${transport}`)) continue;
        const spec = {
          transport,
          signal: c.signal,
          size: c.size,
          concurrency: c.concurrency,
          durationMs: c.durationMs,
          warmupMs: 500,
          maxRequests: c.maxRequests,
        };
        const noop = await load({ ...spec, address: transport === 'grpc' ? ng.address : nh.address });
        const before = receiver.stats();
        sampler.start();
        const recv = await load({ ...spec, address: transport === 'grpc' ? ra.grpc! : ra.http! });
        const t0 = Date.now();
        const drained = await receiver.landed(300_000);
        const drainMs = Date.now() - t0;
        sampler.stop();
        const after = receiver.stats();
        // Everything answered landed: every record for logs, one spool file per request for metrics.
        const accepted = c.signal === 'metrics' ? recv.answered : after.accepted.log_records - before.accepted.log_records;
        const landed = c.signal === 'metrics' ? after.landed.spool_files - before.landed.spool_files : after.landed.records - before.landed.records;
        if (!drained || landed !== accepted) {
          throw new Error(
            `${c.name}_${transport}: accepted ${accepted} ${c.signal === 'metrics' ? 'requests' : 'records'} but landed ${landed} (drained: ${drained})`,
          );
        }
        const ratio = +(recv.requests / recv.seconds / (noop.requests / noop.seconds)).toFixed(2);
        const endToEnd = +(recv.requests / (recv.seconds + drainMs / 1000)).toFixed(1);
        let machine: Record<string, unknown> | undefined;
        if (c.size === 'cc') {
          const m = await load({ ...spec, address: transport === 'grpc' ? sa.grpc! : sa.http! });
          const mDrain = Date.now();
          if (!(await machineReceiver.landed(300_000)))
            throw new Error(`${c.name}_${transport}: the machine-durability receiver did not land what it accepted`);
          machine = { ...rate(m), drain_ms: Date.now() - mDrain, ratio_machine: +(m.requests / m.seconds / (noop.requests / noop.seconds)).toFixed(2) };
        }
        out[`${c.name}_${transport}`] = {
          payload_bytes: recv.payload_bytes,
          concurrency: c.concurrency,
          noop: rate(noop),
          receiver: rate(recv),
          ratio,
          meets_target: ratio >= 0.7,
          drain_ms: drainMs,
          end_to_end_req_per_s: endToEnd,
          end_to_end_ratio: +(endToEnd / (noop.requests / noop.seconds)).toFixed(2),
          landed: { items: landed, files: after.landed.files - before.landed.files + after.landed.spool_files - before.landed.spool_files },
          ...(machine ? { machine } : {}),
          disk_sync_req_per_s: diskSyncRate(base, recv.payload_bytes, c.concurrency),
        };
        process.stderr.write(
          `${c.name} ${transport}: no-op ${rate(noop).req_per_s}/s, receiver ${rate(recv).req_per_s}/s, ratio ${ratio}, end to end ${endToEnd}/s${machine ? `, machine ${String(machine.req_per_s)}/s (${String(machine.ratio_machine)})` : ''}\n`,
        );
      }
    }
    result.cases = out;
    result.peak_rss_mb = +(sampler.peak / MB).toFixed(1);

    if (windows.length) {
      // One more window of 4 MB logs: memory after the largest requests.
      const big = await load({
        transport: 'http',
        address: ra.http!,
        signal: 'logs',
        size: '4mb',
        concurrency: 4,
        durationMs: 3000 * SCALE,
        warmupMs: 0,
        maxRequests: 2000,
      });
      (globalThis as { gc?: () => void }).gc?.();
      windows.push({
        rss_mb: +(process.memoryUsage().rss / MB).toFixed(1),
        heap_mb: +(process.memoryUsage().heapUsed / MB).toFixed(1),
        req_per_s: +(big.requests / big.seconds).toFixed(1),
      });
      result.sustained = {
        windows,
        note: 'four 3 s windows of Claude-Code-sized logs over HTTP, then one of 4 MB logs; RSS and heap after each (after a GC)',
        rss_ratio_4th_to_1st: +(windows[3]!.rss_mb / windows[0]!.rss_mb).toFixed(2),
        heap_ratio_4th_to_1st: +(windows[3]!.heap_mb / windows[0]!.heap_mb).toFixed(2),
      };
    }
    result.receiver_stats = receiver.stats();
  } finally {
    for (const s of servers) s();
    await receiver?.shutdown();
    await strict?.shutdown();
    rmSync(base, { recursive: true, force: true });
  }
  const text = JSON.stringify(result, null, 2);
  process.stdout.write(text + '\n');
  mkdirSync('bench-out', { recursive: true });
  writeFileSync(join('bench-out', 'receiver.json'), text + '\n');
}

main().catch((e) => {
  process.stderr.write(String((e as Error).stack ?? e) + '\n');
  process.exit(1);
});
