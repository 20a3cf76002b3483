/**
 * A backend that answers badly, over both transports, against the test's own receiver on loopback
 * (export-sink.ts): a partial success, 400, 413, 429 with Retry-After, 503, a connection reset in
 * the middle of a request, an answer that comes after the timeout, and no answer at all.
 *
 * Each scenario runs passes until the backend has everything, then checks the two promises:
 * nothing is lost (push.state ends naming every landed file and round with its digest), and
 * nothing is sent again once push.state records it (no request of a later pass carries a file
 * recorded before that pass began).
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import * as grpc from '@grpc/grpc-js';
import { statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { PushState } from '../../src/storage/push-state.js';
import { validateOtlpExporterConfig } from '../../src/exporters/otlp/config.js';
import { Pusher, type PushReport } from '../../src/exporters/otlp/pusher.js';
import { runCli } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { attrs, sinkForTests, type Received } from './export-sink.js';
import { buildRoot, copyRoot as copyRootOf, pipelineYaml, rootFiles } from './export-root.js';

afterAll(cleanupTemp);

let built = '';
const sink = sinkForTests();

beforeAll(async () => {
  built = await buildRoot(join(tempDir('aszcol-faults-'), 'root'));
}, 120_000);

const copyRoot = () => copyRootOf(built, 'aszcol-faults-copy-');

/** The files a request carried (none for a request the proxy cut before it was decoded). */
const filesOf = (x: Received): string[] =>
  x.signal !== 'logs' || !x.request
    ? []
    : x.request.resourceLogs.flatMap((rl: any) =>
        rl.scopeLogs.flatMap((sl: any) => sl.logRecords.map((rec: any) => attrs(rec.attributes)['asz.file'] as string)),
      );

/** A pusher whose every pass is checked: no request of a pass carries a file push.state recorded before it. */
class Checked {
  readonly sends: Received[] = [];
  constructor(
    readonly root: string,
    readonly p: Pusher,
  ) {}

  sent(): ReadonlyMap<string, string> {
    return new PushState(this.root).sent(this.p.endpoint);
  }

  async pass(force = true): Promise<PushReport> {
    const before = new Set(this.sent().keys());
    const since = sink.received.length;
    const r = await this.p.pass({ force });
    const sends = sink.received.slice(since);
    this.sends.push(...sends);
    const resent = sends.flatMap(filesOf).filter((f) => before.has(f));
    expect({ resent }).toEqual({ resent: [] });
    return r;
  }

  /** Forced passes until nothing is pending (at most five): the backend then has everything, once recorded. */
  async untilDone(): Promise<PushReport> {
    let r: PushReport | undefined;
    for (let n = 0; n < 5; n++) {
      r = await this.pass();
      if (r.pending === 0 && r.problems.length === 0) break;
    }
    expect(r!.problems).toEqual([]);
    expect(Object.fromEntries(this.sent())).toEqual(Object.fromEntries(rootFiles(this.root)));
    // And a pass after that sends nothing at all.
    const since = sink.received.length;
    const last = await this.pass();
    expect(sink.received.length).toBe(since);
    expect(last.logs.files).toBe(0);
    return last;
  }

  close(): void {
    this.p.close();
  }
}

for (const protocol of ['grpc', 'http'] as const) {
  describe(`a backend answering badly, over ${protocol}`, () => {
    const endpoint = () => (protocol === 'grpc' ? sink.grpcAddress : `http://${sink.httpAddress}`);
    const pusher = (extra: Record<string, unknown> = {}, ep = endpoint()) => {
      const root = copyRoot();
      const cfg = validateOtlpExporterConfig({ protocol, endpoint: ep, batch_bytes: '4KiB', instance_id: 'i', ...extra }, 'exporters.otlp/sink');
      return new Checked(root, new Pusher({ root, cfg, logs: true, metrics: undefined }));
    };

    test('a partial success is taken: its files recorded with the reason, counted, and never sent again', async () => {
      const c = pusher();
      sink.fault({ kind: 'partial', rejected: 2 });
      const r1 = await c.pass(false);
      expect(r1.problems).toEqual([]);
      expect(r1.stoppedBy).toBeUndefined();
      const partial = c.sends[0]!;
      expect(partial.fault).toBe('partial');
      expect(r1.rejected).toEqual({
        files: filesOf(partial).length,
        items: 2,
        reasons: [expect.stringMatching(/rejected 2 of the request's log records: some were bad/)],
      });
      const rejected = new PushState(c.root).rejected(c.p.endpoint);
      expect([...rejected.keys()].sort()).toEqual(filesOf(partial).sort());
      for (const reason of rejected.values()) expect(reason).toMatch(/some were bad/);
      // Taken in the same pass as everything else: nothing pending, nothing to back off from.
      expect(r1.pending).toBe(0);
      expect(c.p.retryAt).toBe(0);
      await c.untilDone();
      c.close();
    });

    test('400: the refused request stays unsent, the pass goes on, the next watching pass backs off, a later pass sends it', async () => {
      const c = pusher();
      sink.fault({ kind: 'status', http: 400, grpc: grpc.status.INVALID_ARGUMENT });
      const r1 = await c.pass(false);
      expect(r1.problems).toHaveLength(1);
      expect(r1.problems[0]).toMatch(protocol === 'grpc' ? /INVALID_ARGUMENT/ : /answered 400/);
      expect(r1.stoppedBy).toBeUndefined();
      const refused = filesOf(c.sends[0]!);
      expect(r1.pending).toBe(refused.length);
      expect(c.sends.length).toBeGreaterThan(1); // the pass went on
      // Not again at once: a receiver that refuses is not sent the same bytes in a loop.
      expect(r1.retryAt).toBeGreaterThan(Date.now());
      const since = sink.received.length;
      expect((await c.pass(false)).skipped).toBe('backoff');
      expect(sink.received.length).toBe(since);
      await c.untilDone();
      c.close();
    });

    test('413: a request over the backend limit is cut in two until it fits; a single file over it stays unsent, named', async () => {
      const sizes = [...rootFiles(built).keys()].map((rel) => ({ rel, size: statSync(join(built, rel)).size })).sort((a, b) => b.size - a.size);
      const largest = sizes[0]!;
      try {
        // Room for any one file with its attributes, not for two of the larger ones together.
        sink.maxRequestBytes = largest.size + 4096;
        const c = pusher({ batch_bytes: '8MiB' });
        const r1 = await c.pass(false);
        expect(r1.problems).toEqual([]);
        expect(r1.splits).toBeGreaterThan(0);
        for (const x of c.sends) if (x.fault === 'too_large') expect(x.bytes).toBeGreaterThan(sink.maxRequestBytes);
        for (const x of c.sends.filter((s) => s.accepted)) expect(x.bytes).toBeLessThanOrEqual(sink.maxRequestBytes);
        await c.untilDone();
        c.close();

        // The largest file alone is over the limit: it is refused with a reason, the rest goes.
        sink.maxRequestBytes = largest.size - 1;
        const d = pusher({ batch_bytes: '8MiB' });
        const r2 = await d.pass(false);
        const unsent = [...rootFiles(d.root).keys()].filter((rel) => !d.sent().has(rel));
        expect(unsent).toContain(largest.rel);
        for (const rel of unsent) expect(statSync(join(d.root, rel)).size).toBeGreaterThan(sink.maxRequestBytes - 4096);
        expect(r2.problems.length).toBe(unsent.length);
        expect(r2.problems.join('\n')).toMatch(protocol === 'grpc' ? /message size limit is below this request/ : /answered 413.*over the receiver's limit/);
        expect(r2.pending).toBe(unsent.length);
        // Once the limit is raised, a later pass sends just those.
        sink.maxRequestBytes = 0;
        await d.untilDone();
        d.close();
      } finally {
        sink.maxRequestBytes = 0;
      }
    });

    test('429 with Retry-After: the pass stops, the watching passes wait what the backend said, then everything goes', async () => {
      const c = pusher();
      sink.fault({ kind: 'throttle', retryAfterSeconds: 2 });
      const before = Date.now();
      const r1 = await c.pass(false);
      expect(r1.stoppedBy).toBe('throttled');
      expect(c.sends).toHaveLength(1);
      expect(c.sent().size).toBe(0);
      expect(r1.retryAt! - before).toBeGreaterThanOrEqual(2000);
      expect((await c.pass(false)).skipped).toBe('backoff');
      await c.untilDone();
      c.close();
    });

    test('503: the pass stops with nothing after it, nothing recorded for that request, and the next pass sends it', async () => {
      const c = pusher();
      sink.fault({ kind: 'status', http: 503, grpc: grpc.status.UNAVAILABLE, retryAfterSeconds: 1 });
      const r1 = await c.pass(false);
      expect(r1.stoppedBy).toBe('unavailable');
      expect(c.sends).toHaveLength(1);
      expect(c.sent().size).toBe(0);
      expect(r1.problems[0]).toMatch(protocol === 'grpc' ? /UNAVAILABLE/ : /answered 503/);
      await c.untilDone();
      c.close();
    });

    test('the connection reset in the middle of a request: nothing recorded, the next pass reconnects and sends it', async () => {
      const proxied = protocol === 'grpc' ? sink.grpcProxyAddress : `http://${sink.httpProxyAddress}`;
      const c = pusher({ batch_bytes: '64KiB' }, proxied);
      sink.armDrop();
      const r1 = await c.pass(false);
      expect(r1.stoppedBy).toBe('unavailable');
      expect(c.sends.some((x) => x.fault === 'drop')).toBe(true);
      expect(c.sent().size).toBe(0);
      await c.untilDone();
      c.close();
    });

    test('an answer that comes after the timeout: the request counts as not taken, nothing is recorded, the next pass sends it again', async () => {
      const c = pusher({ timeout: '300ms' });
      sink.fault({ kind: 'slow', ms: 1200 });
      const r1 = await c.pass(false);
      expect(r1.stoppedBy).toBe('timeout');
      expect(r1.problems[0]).toMatch(/no answer within 300 ms/);
      expect(c.sent().size).toBe(0);
      const late = filesOf(c.sends[0]!);
      await c.untilDone();
      // At least once: the late request's files went again, since nothing said they had arrived.
      expect(c.sends.slice(1).flatMap(filesOf)).toEqual(expect.arrayContaining(late));
      c.close();
    });

    test('a backend that never answers: the timeout stops the pass, nothing is recorded, the next pass sends everything', async () => {
      const c = pusher({ timeout: '300ms' });
      sink.fault({ kind: 'hang' });
      const r1 = await c.pass(false);
      expect(r1.stoppedBy).toBe('timeout');
      expect(c.sends).toHaveLength(1);
      expect(c.sent().size).toBe(0);
      await c.untilDone();
      c.close();
    });
  });
}

describe('a partial success, as a person sees it', () => {
  test('aszcol push says what was rejected and exits 0 (taken); aszcol verify lists each rejected file with the reason; a second push sends nothing', async () => {
    const root = copyRoot();
    const cfg = join(dirname(root), 'push.yaml');
    writeFileSync(cfg, pipelineYaml(root, { protocol: 'http', endpoint: `http://${sink.httpAddress}`, batch_bytes: '4KiB', instance_id: 'i' }));
    sink.fault({ kind: 'partial', rejected: 1 });
    const since = sink.received.length;
    const r = await runCli(['push', '--once', '--config', cfg]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/rejected 1 item\(s\) in \d+ file\(s\) \(taken, not resent\)/);
    expect(r.stderr).toMatch(/taken with a partial success, its files recorded as rejected: .*rejected 1 of the request's log records: some were bad/);
    const rejected = filesOf(sink.received[since]!);
    const v = await runCli(['verify', '--config', cfg, '--json']);
    expect(v.code).toBe(0);
    const listed = JSON.parse(v.stdout).rejected as { endpoint: string; rel: string; reason: string }[];
    expect(listed.map((x) => x.rel).sort()).toEqual([...rejected].sort());
    for (const x of listed) expect(x).toMatchObject({ endpoint: `http://${sink.httpAddress}`, reason: expect.stringMatching(/some were bad/) });
    const text = await runCli(['verify', '--config', cfg]);
    expect(text.stdout).toContain(`${rejected.length} file(s) a receiver took with a partial success`);
    const again = await runCli(['push', '--once', '--config', cfg, '--json']);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ logs: { files: 0, requests: 0 }, pending: 0 });
  });
});
