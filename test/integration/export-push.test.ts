/**
 * The otlp exporter against a receiver of the test's own (export-sink.ts: @grpc/grpc-js and the
 * protos through @grpc/proto-loader, and a plain HTTP server), over both transports: every record
 * checked against the contract's tables, computed here from the files themselves; the bodies
 * written back give a root that verifies and folds the same; every kind of failed request leaves
 * nothing recorded as sent and the next pass sends it; the rate budget holds.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { canonical } from '../../src/formats/session-flow/encode.js';
import { listConversations, loadChain } from '../../src/storage/chain.js';
import { PushState } from '../../src/storage/push-state.js';
import { validateOtlpExporterConfig } from '../../src/exporters/otlp/config.js';
import { Pusher } from '../../src/exporters/otlp/pusher.js';
import type { Clock } from '../../src/exporters/otlp/rate.js';
import { spawn } from 'node:child_process';
import { BIN, runCli } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { attrs, sinkForTests } from './export-sink.js';
import { buildRoot, copyRoot as copyRootOf, pipelineYaml, rootFiles } from './export-root.js';

afterAll(cleanupTemp);

let built = '';
const sink = sinkForTests();

beforeAll(async () => {
  built = await buildRoot(join(tempDir('aszcol-export-'), 'root'));
}, 120_000);

const copyRoot = () => copyRootOf(built, 'aszcol-export-copy-');

const ms = (t: string) => BigInt(Date.parse(t)) * 1_000_000n;

interface Checked {
  rel: string;
  format: string;
  session: string;
  request: number;
}

/**
 * Checks every accepted log record against the contract, from the files on disk; returns the
 * records in arrival order. Throws naming the file and the attribute that differs.
 */
function checkRecords(root: string, since: number, instance: string, startedNs: bigint, endedNs: bigint): Checked[] {
  const out: Checked[] = [];
  const reqs = sink.received.slice(since).filter((r) => r.accepted && r.signal === 'logs');
  const latest = new Map<string, bigint>(); // per session, the latest record time of its landed files
  const files = rootFiles(root);
  for (const rel of files.keys()) {
    if (!rel.endsWith('.sd')) continue;
    const lines = readFileSync(join(root, rel), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l));
    for (const r of lines.slice(1, -1))
      if (r.time)
        latest.set(
          lines[0].session,
          [latest.get(lines[0].session) ?? 0n, ms(r.time)].reduce((a, b) => (a > b ? a : b)),
        );
  }
  reqs.forEach((req, n) => {
    for (const rl of req.request.resourceLogs) {
      expect(attrs(rl.resource.attributes)).toEqual({
        'service.name': 'Claude Code',
        'service.instance.id': instance,
        'service.layer': 'AI_AGENT',
        'telemetry.sdk.name': 'aszcol',
        'telemetry.sdk.version': JSON.parse(readFileSync('package.json', 'utf8')).version,
        'telemetry.sdk.language': 'nodejs',
      });
      for (const sl of rl.scopeLogs) {
        expect(sl.scope).toEqual({ name: 'github.com/apache/skywalking-ai-sessionizer', version: JSON.parse(readFileSync('package.json', 'utf8')).version });
        for (const rec of sl.logRecords) {
          const a = attrs(rec.attributes);
          const rel = a['asz.file'] as string;
          const where = `${rel} over ${req.transport}`;
          const body = Buffer.from(rec.body.stringValue, 'utf8');
          const disk = readFileSync(join(root, rel));
          expect({ where, same: body.equals(disk) }).toEqual({ where, same: true });
          const lines = disk.toString('utf8').split('\n');
          lines.pop();
          const first = JSON.parse(lines[0]!);
          const want: Record<string, unknown> = {
            'asz.file': rel,
            'asz.file.digest': createHash('sha256').update(disk).digest('hex'),
            'asz.lines': lines.length,
          };
          let time: bigint | undefined;
          if (rel.endsWith('.sd')) {
            const times = lines
              .slice(1, -1)
              .map((l) => JSON.parse(l).time)
              .filter(Boolean)
              .map((t: string) => [ms(t), t] as const)
              .sort((x, y) => (x[0] < y[0] ? -1 : x[0] > y[0] ? 1 : 0));
            Object.assign(want, {
              'asz.format': 'sd',
              'asz.format.version': first.schema,
              'asz.file.kind': first.kind,
              'asz.session': first.session,
              'asz.seq': first.seq,
            });
            if (first.stream) want['asz.stream'] = first.stream;
            if (first.batch) want['asz.run'] = first.batch;
            if (times.length) Object.assign(want, { 'asz.from_time': times[0]![1], 'asz.through_time': times.at(-1)![1] });
            time = times.length ? times.at(-1)![0] : latest.get(first.session);
            out.push({ rel, format: 'sd', session: first.session, request: n });
          } else {
            Object.assign(want, {
              'asz.format': 'sf',
              'asz.format.version': first.schema,
              'asz.file.kind': 'round',
              'asz.session': first.session,
              'asz.from_time': first.from_time,
              'asz.through_time': first.through_time,
              'asz.session.from_time': first.session_from_time,
              'asz.session.through_time': first.session_through_time,
              'asz.conversation.talks': first.talks,
              'asz.conversation.steps': first.steps,
              'asz.conversation.streams': first.streams,
              'asz.conversation.segments': first.segments,
              'asz.conversation.unresolved': first.unresolved,
              // The LAL rule's later counts: the workspace changes the parse step measured, then the assembler's three.
              'asz.conversation.changes': first.changes,
              'asz.conversation.lines_added': first.lines_added,
              'asz.conversation.lines_removed': first.lines_removed,
              'asz.conversation.llm_calls': first.llm_calls,
              'asz.conversation.subagents': first.subagents,
              'asz.conversation.bash_runs': first.bash_runs,
              'asz.conversation': first.conversation,
              'asz.round': first.round,
            });
            if (first.title) want['asz.conversation.title'] = first.title;
            time = ms(first.session_through_time);
            out.push({ rel, format: 'sf', session: first.session, request: n });
          }
          expect({ where, attributes: a }).toEqual({ where, attributes: want });
          expect({ where, time: rec.timeUnixNano }).toEqual({ where, time: time === undefined ? undefined : time.toString() });
          const observed = BigInt(rec.observedTimeUnixNano);
          expect(observed >= startedNs && observed <= endedNs).toBe(true);
        }
      }
    }
  });
  return out;
}

/** Writes each body to its asz.file under a new root. */
function writeBack(dir: string, since: number): string {
  for (const r of sink.received.slice(since)) {
    if (!r.accepted || r.signal !== 'logs') continue;
    for (const rl of r.request.resourceLogs)
      for (const sl of rl.scopeLogs)
        for (const rec of sl.logRecords) {
          const path = join(dir, attrs(rec.attributes)['asz.file'] as string);
          mkdirSync(dirname(path), { recursive: true });
          writeFileSync(path, rec.body.stringValue);
        }
  }
  return dir;
}

const foldOf = (root: string) =>
  Object.fromEntries(listConversations(root).map((c) => [c, canonical([...loadChain(root, c).fold.entities.entries()].sort(([a], [b]) => (a < b ? -1 : 1)))]));

const nsNow = () => BigInt(Date.now()) * 1_000_000n;

for (const protocol of ['grpc', 'http'] as const) {
  describe(`aszcol push over ${protocol}`, () => {
    const endpoint = () => (protocol === 'grpc' ? sink.grpcAddress : `http://${sink.httpAddress}`);

    test('every landed file and round arrives once, as the contract says; a second push sends nothing; the bodies make a root that verifies and folds the same', async () => {
      const root = copyRoot();
      const cfgPath = join(dirname(root), 'push.yaml');
      writeFileSync(
        cfgPath,
        pipelineYaml(root, { protocol, endpoint: endpoint(), instance_id: 'tester@aszcol', headers: { authorization: 'Bearer t0ken' }, batch_bytes: '16KiB' }),
      );
      const since = sink.received.length;
      const started = nsNow();
      const r = await runCli(['push', '--once', '--config', cfgPath]);
      const ended = nsNow();
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(new RegExp(`^otlp/sink: push ${protocol === 'grpc' ? 'grpc://' : 'http://'}\\S+: logs \\d+ file`));
      const checked = checkRecords(root, since, 'tester@aszcol', started, ended);
      const files = rootFiles(root);
      // Each file once, and nothing else.
      expect(checked.map((c) => c.rel).sort()).toEqual([...files.keys()].sort());
      expect(checked.filter((c) => c.format === 'sf').length).toBeGreaterThanOrEqual(6);
      // Several requests, each within the budget unless one file alone is larger.
      const reqs = sink.received.slice(since).filter((x) => x.accepted);
      expect(reqs.length).toBeGreaterThan(1);
      for (const x of reqs) expect(x.headers.authorization).toBe('Bearer t0ken');
      // Session by session, the session landed first going first, its files before its rounds.
      const sessions = [...new Set(checked.map((c) => c.session))];
      const firstStamp = (s: string) =>
        [...files.keys()]
          .filter((f) => f.startsWith(`${s}/`))
          .map((f) => /-(\d{8}T[\d.]+Z)-/.exec(f)![1]!)
          .sort()[0]!;
      expect(sessions).toEqual([...sessions].sort((a, b) => (firstStamp(a) < firstStamp(b) ? -1 : firstStamp(a) > firstStamp(b) ? 1 : a < b ? -1 : 1)));
      expect(sessions[0]).toBe('c70360bd-e031-4a5a-816d-138c67621f64'); // landed first, though not first by id
      const seen = new Set<string>();
      for (const c of checked) {
        if (c.format === 'sd') expect({ rel: c.rel, roundSeenOfSession: seen.has(c.session) }).toEqual({ rel: c.rel, roundSeenOfSession: false });
        else seen.add(c.session);
      }
      // push.state names each file with its digest, under this receiver.
      const state = new PushState(root);
      const ep = state.endpoints();
      expect(ep).toHaveLength(1);
      expect(Object.fromEntries(state.sent(ep[0]!))).toEqual(Object.fromEntries(files));

      const again = await runCli(['push', '--once', '--config', cfgPath, '--json']);
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout)).toMatchObject({ exporter: 'otlp/sink', logs: { files: 0, requests: 0 }, pending: 0 });

      // The receiver's copy: a root of its own that verifies and folds the same.
      const back = writeBack(join(tempDir('aszcol-writeback-'), 'root'), since);
      const vcfg = join(dirname(back), 'v.yaml');
      writeFileSync(vcfg, `storage:\n  root: ${JSON.stringify(back)}\n`);
      const v = await runCli(['verify', '--config', vcfg, '--json']);
      expect(v.code).toBe(0);
      expect(JSON.parse(v.stdout).problems).toEqual([]);
      expect(rootFiles(back)).toEqual(files);
      expect(foldOf(back)).toEqual(foldOf(root));
      expect(Object.keys(foldOf(root)).length).toBe(4);
    });

    const pusherFor = (root: string, extra: Record<string, unknown> = {}, ep = endpoint(), clock?: Clock) =>
      new Pusher({
        root,
        cfg: validateOtlpExporterConfig({ protocol, endpoint: ep, batch_bytes: '4KiB', instance_id: 'i', ...extra }, 'exporters.otlp/sink'),
        logs: true,
        metrics: undefined,
        ...(clock ? { clock } : {}),
      });
    const sentOf = (root: string, p: Pusher) => new PushState(root).sent(p.endpoint);

    test('a refused request leaves its files unsent and the pass goes on; a partial success is taken, its files recorded as rejected; the next pass sends only the refused', async () => {
      const root = copyRoot();
      const p = pusherFor(root);
      const since = sink.received.length;
      sink.fault({ kind: 'refuse' }, { kind: 'partial', rejected: 1 });
      const r1 = await p.pass();
      expect(r1.problems).toHaveLength(1);
      expect(r1.problems[0]).toMatch(protocol === 'grpc' ? /INVALID_ARGUMENT/ : /400/);
      expect(r1.rejected).toMatchObject({ items: 1, reasons: [expect.stringMatching(/rejected 1 of the request's log records: some were bad/)] });
      expect(r1.stoppedBy).toBeUndefined();
      const [refused, partial] = sink.received.slice(since);
      const relsOf = (x: typeof refused) =>
        x!.request.resourceLogs.flatMap((rl: any) => rl.scopeLogs.flatMap((sl: any) => sl.logRecords.map((rec: any) => attrs(rec.attributes)['asz.file'])));
      const notSent = relsOf(refused);
      expect(notSent.length).toBeGreaterThan(0);
      const sent = sentOf(root, p);
      for (const f of notSent) expect(sent.has(f)).toBe(false);
      for (const f of relsOf(partial)) expect(sent.has(f)).toBe(true);
      expect([...new PushState(root).rejected(p.endpoint).keys()].sort()).toEqual([...relsOf(partial)].sort());
      expect(r1.rejected.files).toBe(relsOf(partial).length);
      expect(sent.size + notSent.length).toBe(rootFiles(root).size);
      expect(r1.pending).toBe(notSent.length);
      const r2 = await p.pass({ force: true });
      expect(r2.problems).toEqual([]);
      expect(r2.logs.files).toBe(notSent.length);
      expect(sentOf(root, p).size).toBe(rootFiles(root).size);
      p.close();
    });

    test('429 / RESOURCE_EXHAUSTED stops the pass, empties the budget and is waited out (Retry-After, RetryInfo)', async () => {
      const root = copyRoot();
      // The budget's time passes only while the pusher waits, so a slow machine between the two
      // passes cannot refill the emptied budget (the backoff itself is on the wall clock).
      let now = 0;
      const clock: Clock = { now: () => now, sleep: async (ms) => void (now += ms) };
      const p = pusherFor(root, { max_bytes_per_minute: '3MB' }, endpoint(), clock);
      const since = sink.received.length;
      sink.fault({ kind: 'throttle', retryAfterSeconds: 3 });
      const before = Date.now();
      const r1 = await p.pass();
      expect(r1.stoppedBy).toBe('throttled');
      expect(sink.received.length - since).toBe(1); // nothing after the throttled request
      expect(sentOf(root, p).size).toBe(0);
      expect(r1.retryAt! - before).toBeGreaterThanOrEqual(3000);
      // A watching pass before then does not try.
      expect((await p.pass()).skipped).toBe('backoff');
      expect(sink.received.length - since).toBe(1);
      // Forced, it goes; the emptied budget makes the first request wait for its size at 50 KB/s.
      const r2 = await p.pass({ force: true });
      expect(r2.problems).toEqual([]);
      expect(r2.pausedMs).toBeGreaterThan(40);
      expect(sentOf(root, p).size).toBe(rootFiles(root).size);
      p.close();
    });

    test('a timeout stops the pass with nothing recorded; the next pass sends everything', async () => {
      const root = copyRoot();
      const p = pusherFor(root, { timeout: '400ms' });
      sink.fault({ kind: 'hang' });
      const r1 = await p.pass();
      expect(r1.stoppedBy).toBe('timeout');
      expect(r1.problems[0]).toMatch(/no answer within 400 ms/);
      expect(sentOf(root, p).size).toBe(0);
      const r2 = await p.pass({ force: true });
      expect(r2.problems).toEqual([]);
      expect(sentOf(root, p).size).toBe(rootFiles(root).size);
      p.close();
    });

    test('a connection dropped in the middle of a request records nothing; the next pass reconnects and sends it', async () => {
      const root = copyRoot();
      const proxied = protocol === 'grpc' ? sink.grpcProxyAddress : `http://${sink.httpProxyAddress}`;
      const p = pusherFor(root, { batch_bytes: '64KiB' }, proxied);
      const since = sink.received.length;
      sink.armDrop();
      const r1 = await p.pass();
      expect(r1.stoppedBy).toBe('unavailable');
      expect(sink.received.slice(since).some((x) => x.fault === 'drop')).toBe(true);
      expect(sink.received.slice(since).some((x) => x.accepted)).toBe(false);
      expect(sentOf(root, p).size).toBe(0);
      const r2 = await p.pass({ force: true });
      expect(r2.problems).toEqual([]);
      expect(sentOf(root, p).size).toBe(rootFiles(root).size);
      p.close();
    });

    test('the rate budget holds: bytes on the wire never outrun max_bytes_per_minute (on a virtual clock)', async () => {
      const root = copyRoot();
      const perMinute = 1_800_000; // 30 KB/s
      // Time passes only when the bucket waits: the check cannot be upset by a loaded machine. At
      // each wait the bytes the sink has received so far are noted against the clock.
      let now = 0;
      const seen: { at: number; received: number }[] = [];
      const clock: Clock = {
        now: () => now,
        sleep: async (ms) => {
          seen.push({ at: now, received: sink.received.length });
          now += ms;
          await new Promise((r) => setImmediate(r));
        },
      };
      const p = new Pusher({
        root,
        cfg: validateOtlpExporterConfig(
          { protocol, endpoint: endpoint(), batch_bytes: '3KiB', instance_id: 'i', max_bytes_per_minute: perMinute },
          'exporters.otlp/sink',
        ),
        logs: true,
        metrics: undefined,
        clock,
      });
      sink.fault({ kind: 'throttle', retryAfterSeconds: 0 }); // empties the budget
      await p.pass();
      const emptiedAt = now;
      const since = sink.received.length;
      const r = await p.pass({ force: true });
      seen.push({ at: now, received: sink.received.length });
      expect(r.problems).toEqual([]);
      const arrivals = sink.received.slice(since);
      expect(arrivals.length).toBeGreaterThan(3);
      const bytesBy = (received: number) => arrivals.slice(0, Math.max(0, received - since)).reduce((n, a) => n + a.bytes, 0);
      // Whatever had arrived by a moment fits what the budget let through since it was emptied.
      for (const s of seen.filter((x) => x.at >= emptiedAt)) expect(bytesBy(s.received)).toBeLessThanOrEqual(((s.at - emptiedAt) * perMinute) / 60_000);
      // And it waited no longer than the bytes needed: each wait is rounded up to the next ms.
      const sum = bytesBy(sink.received.length);
      expect(r.pausedMs).toBeGreaterThanOrEqual((sum * 60_000) / perMinute - arrivals.length);
      expect(r.pausedMs).toBeLessThanOrEqual((sum * 60_000) / perMinute + 2 * arrivals.length);
      p.close();
    });

    test('a landed file that does not hold together is reported and not sent; everything else goes', async () => {
      const root = copyRoot();
      const rel = [...rootFiles(root).keys()].find((f) => f.includes('/streams/main/transcript-'))!;
      const path = join(root, rel);
      chmodSync(path, 0o644);
      writeFileSync(path, readFileSync(path, 'utf8').replace('"ord":1,', '"ord":9,'));
      const p = pusherFor(root);
      const r = await p.pass();
      p.close();
      expect(r.problems).toEqual([expect.stringMatching(new RegExp(`^${rel.replace(/[.]/g, '\\.')}: the end line's digest .* does not match .*; not sent$`))]);
      expect(r.pending).toBe(1);
      const sent = sentOf(root, p);
      expect(sent.has(rel)).toBe(false);
      expect(sent.size).toBe(rootFiles(root).size - 1);
    });

    test('with compression: gzip the receiver decodes the same records', async () => {
      const root = copyRoot();
      const proxied = protocol === 'grpc' ? sink.grpcProxyAddress : `http://${sink.httpProxyAddress}`;
      const p = pusherFor(root, { compression: 'gzip', batch_bytes: '1MiB' }, proxied);
      const since = sink.received.length;
      const before = sink.proxiedBytes;
      const r = await p.pass();
      p.close();
      expect(r.problems).toEqual([]);
      // What crossed the wire is well under the encoded requests' size.
      expect(sink.proxiedBytes - before).toBeLessThan(r.wireBytes / 2);
      if (protocol === 'http') expect(sink.received[since]!.headers['content-encoding']).toBe('gzip');
      const sent = sink.received.slice(since).flatMap((x) => x.request.resourceLogs.flatMap((rl: any) => rl.scopeLogs.flatMap((sl: any) => sl.logRecords)));
      for (const rec of sent)
        expect(Buffer.from(rec.body.stringValue).equals(readFileSync(join(root, attrs(rec.attributes)['asz.file'] as string)))).toBe(true);
      expect(sent.length).toBe(rootFiles(root).size);
    });

    if (protocol === 'http') {
      test('a 2xx answer that is not an OTLP response (a login page) records nothing', async () => {
        const root = copyRoot();
        const p = pusherFor(root);
        sink.fault({ kind: 'html' });
        const r = await p.pass();
        expect(r.problems[0]).toMatch(/answered 200 OK with text\/html, not an OTLP response; nothing is recorded as sent/);
        expect(sentOf(root, p).size).toBe(0);
        p.close();
      });
    }
  });
}

describe('aszcol push, the command', () => {
  test('exits non-zero when the receiver is not there, with nothing recorded; 2 when no otlp exporter is configured', async () => {
    const root = copyRoot();
    const cfgPath = join(dirname(root), 'down.yaml');
    writeFileSync(cfgPath, pipelineYaml(root, { endpoint: '127.0.0.1:9', timeout: '2s' }));
    const r = await runCli(['push', '--once', '--config', cfgPath]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/aszcol: otlp\/sink: logs: grpc:\/\/127\.0\.0\.1:9 .*UNAVAILABLE/);
    expect(new PushState(root).endpoints()).toEqual([]);
    const none = join(dirname(root), 'none.yaml');
    writeFileSync(none, `storage:\n  root: ${JSON.stringify(root)}\n`);
    const n = await runCli(['push', '--once', '--config', none]);
    expect(n.code).toBe(2);
    expect(n.stderr).toMatch(/no otlp exporter is configured/);
  });

  test('watching, it honours a Retry-After longer than its interval, then sends; SIGTERM ends it cleanly', async () => {
    const root = copyRoot();
    const cfgPath = join(dirname(root), 'watch.yaml');
    writeFileSync(cfgPath, pipelineYaml(root, { protocol: 'http', endpoint: `http://${sink.httpAddress}`, retry_on_failure: { initial_interval: '100ms' } }));
    sink.fault({ kind: 'throttle', retryAfterSeconds: 2 });
    const child = spawn(process.execPath, [BIN, 'push', '--config', cfgPath, '--interval', '200ms', '--json'], { stdio: ['ignore', 'pipe', 'pipe'] });
    const lines: { at: number; r: any }[] = [];
    let buf = '';
    child.stdout!.on('data', (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf('\n')) >= 0) {
        lines.push({ at: Date.now(), r: JSON.parse(buf.slice(0, nl)) });
        buf = buf.slice(nl + 1);
      }
    });
    const exited = new Promise<number | null>((res) => child.on('close', (code) => res(code)));
    try {
      for (let i = 0; i < 150 && !lines.some((l) => l.r.logs.files > 0); i++) await new Promise((res) => setTimeout(res, 100));
      expect(lines[0]!.r.stoppedBy).toBe('throttled');
      const sent = lines.find((l) => l.r.logs.files > 0)!;
      expect(sent.at - lines[0]!.at).toBeGreaterThanOrEqual(1800);
      expect(sent.r.logs.files).toBe(rootFiles(root).size);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  });
});
