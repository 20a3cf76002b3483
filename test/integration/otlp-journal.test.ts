/**
 * The receiver's write-ahead journal: what was answered survives a crash before it landed, a
 * torn last write is cut, damage is kept aside and reported, the backlog is bounded, and a
 * journal has one owner. Crashes are real: the receiver runs in its own process and is killed
 * with SIGKILL while a session's lock (held by this test, as another collector would) keeps its
 * records from landing.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { appendFileSync, chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { OtlpReceiver, validateOtlpReceiverConfig } from '../../src/receivers/claude-code-otlp/index.js';
import { otlpTypes } from '../../src/otlp/proto.js';
import { verifyRoot } from '../../src/storage/verify.js';
import { FileLock } from '../../src/storage/lock.js';
import { sessionLockPath } from '../../src/storage/layout.js';
import { formatKv, parseKv } from '../../src/storage/kv-text.js';
import { AszError } from '../../src/util/errors.js';
import { FRAME_BYTES, SEGMENT_BYTES, entryFrame, segmentBase, segmentName } from '../../src/receivers/claude-code-otlp/journal-format.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { landedFiles } from '../helpers/root.js';
import { eventually } from '../helpers/wait.js';
import { ccLogRecord, ccLogsRequest, ccMetricsRequest, httpPost, logsRequest, startRunner, type RunnerProcess } from '../helpers/otlp.js';

const runners: RunnerProcess[] = [];
afterAll(() => {
  for (const r of runners) if (r.child.exitCode === null) r.child.kill('SIGKILL');
  cleanupTemp();
});

const PB = { 'content-type': 'application/x-protobuf' };
const HTTP_ONLY = { protocols: { http: { endpoint: '127.0.0.1:0' } } };
const journalDir = (root: string) => join(root, '_journal', 'claude_code_otlp');
const segments = (root: string) =>
  readdirSync(journalDir(root))
    .filter((n) => segmentBase(n) !== undefined)
    .sort();
const sha12 = (b: Uint8Array) => createHash('sha256').update(b).digest('hex').slice(0, 12);

/** Each log record's own bytes, found with protobufjs (independent of the receiver's reader). */
function recordShas(req: Buffer): string[] {
  const T = otlpTypes();
  const msg = T.ExportLogsServiceRequest.decode(req) as unknown as { resourceLogs: { scopeLogs: { logRecords: object[] }[] }[] };
  return msg.resourceLogs.flatMap((rl) => rl.scopeLogs.flatMap((sl) => sl.logRecords.map((r) => sha12(T.LogRecord.encode(r).finish()))));
}

async function killed(rx: RunnerProcess): Promise<void> {
  const exit = new Promise((r) => rx.child.once('exit', r));
  rx.child.kill('SIGKILL');
  await exit;
}

/** A runner that accepted `reqs` for a session whose lock this test holds, then was killed: nothing landed. */
async function crashWithJournal(root: string, session: string, reqs: Buffer[]): Promise<FileLock> {
  const lock = new FileLock(sessionLockPath(root, session));
  lock.acquire();
  const rx = await startRunner(root, HTTP_ONLY);
  runners.push(rx);
  for (const req of reqs) expect((await httpPost(rx.addresses.http!, '/v1/logs', req, PB)).status).toBe(200);
  await killed(rx);
  expect(landedFiles(root, session)).toEqual([]);
  return lock;
}

describe('the receiver journal', () => {
  test('requests answered before a crash, not yet landed, land at the next start, once and in order', async () => {
    const root = tempDir('aszcol-journal-crash-');
    const reqs = [ccLogsRequest('J-1', 0, Date.UTC(2026, 10, 30, 5), 'a'), ccLogsRequest('J-1', 5, Date.UTC(2026, 10, 30, 6), 'b')];
    const lock = await crashWithJournal(root, 'J-1', reqs);
    lock.release();
    const rx = await startRunner(root, HTTP_ONLY);
    runners.push(rx);
    expect(await eventually(() => landedFiles(root, 'J-1').flatMap((f) => f.records).length === 10)).toBe(true);
    const records = landedFiles(root, 'J-1').flatMap((f) => f.records);
    expect(records.map((r) => r.sha)).toEqual(reqs.flatMap(recordShas));
    expect(records.map((r) => r.ord)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    // stderr is read asynchronously: the line may arrive after what it reports.
    expect(await eventually(() => /journal holds \d+ bytes accepted but not landed before the last stop; landing them first/.test(rx.stderr()))).toBe(true);
    // A third start finds nothing left to land: the landed position moved past both requests.
    expect((await rx.stop()).code).toBe(0);
    const state = parseKv(readFileSync(join(journalDir(root), 'landed.state'), 'utf8'));
    const ends = segments(root).map((n) => segmentBase(n)!);
    expect(Number(state.get('landed_through'))).toBeGreaterThanOrEqual(ends[ends.length - 1]!);
    const again = await startRunner(root, HTTP_ONLY);
    runners.push(again);
    expect((await again.stop()).code).toBe(0);
    expect(landedFiles(root, 'J-1').flatMap((f) => f.records)).toHaveLength(10);
    expect(verifyRoot(root).problems).toEqual([]);
  });

  test('killed (SIGKILL) under load: every request it answered lands after the restart, in the order sent, and nothing it was not sent', async () => {
    const root = tempDir('aszcol-journal-kill-');
    const rx = await startRunner(root, HTTP_ONLY);
    runners.push(rx);
    const senders = 8;
    const sent: string[][] = Array.from({ length: senders }, () => []);
    const acked: string[][] = Array.from({ length: senders }, () => []);
    let stop = false;
    const loops = Array.from({ length: senders }, async (_, i) => {
      for (let n = 0; !stop && n < 5000; n++) {
        const req = ccLogsRequest(`K-${i}`, n * 5, 1_000_000 + n, `k${i}-${n}`);
        const shas = recordShas(req);
        sent[i]!.push(...shas);
        try {
          const res = await httpPost(rx.addresses.http!, '/v1/logs', req, PB, false);
          if (res.status === 200) acked[i]!.push(...shas);
        } catch {
          return; // the connection died with the process: this request was not answered
        }
      }
    });
    // Kill it mid-stream, once a good number of requests were answered.
    expect(await eventually(() => acked.reduce((n, a) => n + a.length, 0) >= 2000, 30_000)).toBe(true);
    rx.child.kill('SIGKILL');
    stop = true;
    await Promise.all(loops);
    await new Promise((r) => (rx.child.exitCode !== null || rx.child.signalCode !== null ? r(undefined) : rx.child.once('exit', r)));

    const again = await startRunner(root, HTTP_ONLY);
    runners.push(again);
    const landedShas = (i: number) => landedFiles(root, `K-${i}`).flatMap((f) => f.records.map((r) => r.sha));
    const allIn = () =>
      acked.every((a, i) => {
        const got = new Set(landedShas(i));
        return a.every((x) => got.has(x));
      });
    expect(await eventually(allIn, 30_000)).toBe(true);
    expect((await again.stop()).code).toBe(0);
    for (let i = 0; i < senders; i++) {
      const got = landedShas(i);
      // Nothing that was not sent; in the order sent (a re-landed stretch after the crash repeats, it never reorders).
      const firstSeen = [...new Set(got)];
      const order = new Map(sent[i]!.map((x, k) => [x, k]));
      expect(firstSeen.every((x) => order.has(x))).toBe(true);
      expect(firstSeen.map((x) => order.get(x)!)).toEqual([...firstSeen.map((x) => order.get(x)!)].sort((a, b) => a - b));
      expect(firstSeen.slice(0, acked[i]!.length)).toEqual(acked[i]);
    }
    expect(verifyRoot(root).problems).toEqual([]);
  }, 120_000);

  test('a torn last write (a crash mid-append) is cut, and everything before it lands', async () => {
    const root = tempDir('aszcol-journal-torn-');
    const req = ccLogsRequest('J-torn', 0);
    const lock = await crashWithJournal(root, 'J-torn', [req]);
    const seg = join(journalDir(root), segments(root).pop()!);
    const size = readFileSync(seg).length;
    appendFileSync(seg, readFileSync(seg).subarray(0, FRAME_BYTES + 7)); // half of an entry: its frame and a few body bytes
    lock.release();
    const rx = await startRunner(root, HTTP_ONLY);
    runners.push(rx);
    expect(await eventually(() => landedFiles(root, 'J-torn').length === 1)).toBe(true);
    expect(landedFiles(root, 'J-torn')[0]!.records.map((r) => r.sha)).toEqual(recordShas(req));
    expect(readFileSync(seg).length).toBe(size);
    // stderr is read asynchronously: the line may arrive after what it reports.
    expect(await eventually(() => new RegExp(`journal ended in ${FRAME_BYTES + 7} bytes of an incomplete write`).test(rx.stderr()))).toBe(true);
    // New requests follow the good entries.
    expect((await httpPost(rx.addresses.http!, '/v1/logs', ccLogsRequest('J-torn', 5, 9, 'n'), PB)).status).toBe(200);
    expect(await eventually(() => landedFiles(root, 'J-torn').flatMap((f) => f.records).length === 10)).toBe(true);
    expect((await rx.stop()).code).toBe(0);
    expect(verifyRoot(root).problems).toEqual([]);
  });

  test('a damaged entry is kept aside byte for byte and reported; the entries after it land', async () => {
    const root = tempDir('aszcol-journal-damage-');
    const reqs = [ccLogsRequest('J-dmg', 0, 1, 'x'), ccLogsRequest('J-dmg', 5, 2, 'y')];
    const lock = await crashWithJournal(root, 'J-dmg', reqs);
    const seg = join(journalDir(root), segments(root).pop()!);
    const bytes = readFileSync(seg);
    const firstLen = FRAME_BYTES + bytes.readUInt32LE(4);
    const original = Buffer.from(bytes.subarray(0, firstLen));
    bytes[FRAME_BYTES + 40] ^= 0xff; // one flipped bit pattern inside the first request's body
    writeFileSync(seg, bytes);
    lock.release();
    const rx = await startRunner(root, HTTP_ONLY);
    runners.push(rx);
    expect(await eventually(() => landedFiles(root, 'J-dmg').length === 1)).toBe(true);
    expect(landedFiles(root, 'J-dmg')[0]!.records.map((r) => r.sha)).toEqual(recordShas(reqs[1]!));
    const kept = readdirSync(join(journalDir(root), 'damaged'));
    expect(kept).toHaveLength(1);
    const copy = readFileSync(join(journalDir(root), 'damaged', kept[0]!));
    expect(copy.length).toBe(firstLen);
    expect(copy.equals(original)).toBe(false);
    copy[FRAME_BYTES + 40] ^= 0xff;
    expect(copy.equals(original)).toBe(true);
    // stderr is read asynchronously: the line may arrive after what it reports.
    expect(await eventually(() => /"level":"error".*journal holds \d+ bytes at position 0 that cannot be landed \(checksum mismatch\)/.test(rx.stderr()))).toBe(
      true,
    );
    const { code, stats } = await rx.stop();
    expect(code).toBe(0);
    expect(stats).toMatchObject({ damaged_entries: 1 });
  });

  test('the backlog is bounded: past max_journal_bytes requests are refused as retryable, and taken again once it lands', async () => {
    const root = tempDir('aszcol-journal-full-');
    const r = new OtlpReceiver(validateOtlpReceiverConfig({ ...HTTP_ONLY, max_request_bytes: '16KiB', max_journal_bytes: '16KiB' }), { storageRoot: root });
    await r.start();
    const lock = new FileLock(sessionLockPath(root, 'J-full'));
    lock.acquire();
    try {
      const at = r.addresses().http!;
      const statuses: number[] = [];
      let full;
      for (let i = 0; i < 20 && !full; i++) {
        const res = await httpPost(at, '/v1/logs', ccLogsRequest('J-full', i * 5, 1000 + i, `f${i}`), PB);
        statuses.push(res.status);
        if (res.status !== 200) full = res;
        // Answers come before landing has looked at them: once it has found the session locked, the refusal says so.
        if (i === 0) expect(await eventually(() => r.stats().waiting_sessions === 1)).toBe(true);
      }
      expect(full).toBeDefined();
      expect(statuses.slice(0, -1).every((s) => s === 200)).toBe(true);
      expect(statuses.length).toBeGreaterThan(2);
      expect([full!.status, full!.headers['retry-after']]).toEqual([429, '1']);
      expect(otlpTypes().Status.decode(full!.body).toJSON().message).toMatch(
        /holds \d+ bytes accepted but not yet landed, at its limit of 16384 \(max_journal_bytes\) \(1 sessions wait for a lock another collector holds\)/,
      );
      // Metrics go to the same journal: refused too, not lost.
      expect((await httpPost(at, '/v1/metrics', ccMetricsRequest('J-full', { input: 1, output: 1, cacheRead: 1, cacheCreation: 1 }), PB)).status).toBe(429);
      expect(r.stats().refused_requests.backlog_full).toBe(2);
      lock.release();
      expect(await r.landed(10_000)).toBe(true);
      expect(landedFiles(root, 'J-full').flatMap((f) => f.records)).toHaveLength(5 * (statuses.length - 1));
      expect((await httpPost(at, '/v1/logs', ccLogsRequest('J-full', 500, 5000, 'late'), PB)).status).toBe(200);
      expect(r.stats().journal_bytes).toBeLessThan(16 * 1024);
    } finally {
      lock.release();
      await r.shutdown();
    }
  });

  test('a round of more spool files than the process may hold open lands them all (files are opened a batch at a time)', async () => {
    const root = tempDir('aszcol-journal-fds-');
    const rx = await startRunner(root, HTTP_ONLY, { fdLimit: 256 });
    runners.push(rx);
    // The spool's lock held (as another collector would): the requests wait, then land in one round.
    const lock = new FileLock(join(root, '_metrics', '.lock'));
    lock.acquire();
    const n = 600;
    const sent: Buffer[] = [];
    for (let i = 0; i < n; i += 20) {
      const batch = Array.from({ length: 20 }, (_, k) => ccMetricsRequest(`J-fds-${i + k}`, { input: i + k, output: 1, cacheRead: 1, cacheCreation: 1 }));
      sent.push(...batch);
      const codes = await Promise.all(batch.map((b) => httpPost(rx.addresses.http!, '/v1/metrics', b, PB).then((r) => r.status)));
      expect(codes.every((c) => c === 200)).toBe(true);
    }
    lock.release();
    const spooled = () => readdirSync(join(root, '_metrics')).filter((f) => f.endsWith('-otlp.pb'));
    expect(await eventually(() => spooled().length === n, 30_000)).toBe(true);
    expect(rx.stderr()).not.toMatch(/could not land|EMFILE/);
    // Each spool file is one request as received.
    const got = new Set(spooled().map((f) => sha12(readFileSync(join(root, '_metrics', f)))));
    expect(sent.every((b) => got.has(sha12(b)))).toBe(true);
    expect((await rx.stop()).code).toBe(0);
  });

  test("past a segment's size the journal goes on in a new segment; a crash across the two replays both, then the landed one is removed", async () => {
    const root = tempDir('aszcol-journal-rotate-');
    // 4 MB tool outputs: enough requests to fill more than one 64 MiB segment.
    const n = Math.ceil(SEGMENT_BYTES / 4_000_000) + 2;
    const reqs = Array.from({ length: n }, (_, i) =>
      logsRequest([ccLogRecord('J-rot', { name: 'tool_result', seq: i, timeMs: 1000 + i }, String.fromCharCode(97 + (i % 26)).repeat(4_000_000))]),
    );
    const lock = await crashWithJournal(root, 'J-rot', reqs);
    expect(segments(root).length).toBe(2);
    expect(segmentBase(segments(root)[1]!)).toBeGreaterThanOrEqual(SEGMENT_BYTES);
    lock.release();
    const rx = await startRunner(root, HTTP_ONLY);
    runners.push(rx);
    expect(await eventually(() => landedFiles(root, 'J-rot').flatMap((f) => f.records).length === n, 60_000)).toBe(true);
    expect(landedFiles(root, 'J-rot').flatMap((f) => f.records.map((r) => r.sha))).toEqual(reqs.flatMap(recordShas));
    // Landed through the second segment: the first is gone, the second (the writer's) stays.
    expect(await eventually(() => segments(root).length === 1)).toBe(true);
    expect((await rx.stop()).code).toBe(0);
    expect(verifyRoot(root).problems).toEqual([]);
  }, 120_000);

  test('a journal has one owner: a second receiver on it fails to start and says who holds it; another name is another journal', async () => {
    const root = tempDir('aszcol-journal-owner-');
    const cfg = validateOtlpReceiverConfig(HTTP_ONLY);
    const a = new OtlpReceiver(cfg, { storageRoot: root });
    await a.start();
    try {
      const b = new OtlpReceiver(cfg, { storageRoot: root });
      await expect(b.start()).rejects.toThrow(AszError);
      await expect(new OtlpReceiver(cfg, { storageRoot: root }).start()).rejects.toThrow(
        new RegExp(`journal .*_journal/claude_code_otlp is in use by another process .*names pid ${process.pid}`),
      );
      const c = new OtlpReceiver(cfg, { storageRoot: root, name: 'claude_code_otlp/second' });
      await c.start();
      expect(existsSync(join(root, '_journal', 'claude_code_otlp-second'))).toBe(true);
      expect((await httpPost(c.addresses().http!, '/v1/logs', ccLogsRequest('J-two'), PB)).status).toBe(200);
      expect(await c.landed(10_000)).toBe(true);
      await c.shutdown();
      expect(landedFiles(root, 'J-two')).toHaveLength(1);
    } finally {
      await a.shutdown();
    }
    // Released on shutdown: the next owner starts.
    const d = new OtlpReceiver(cfg, { storageRoot: root });
    await d.start();
    await d.shutdown();
  });

  describe('journals a crash left in odd shapes (written by hand)', () => {
    const entry = (req: Buffer) => Buffer.concat([entryFrame('logs', 1n, req), req]);
    const logs: string[] = [];
    const start = async (root: string) => {
      const r = new OtlpReceiver(validateOtlpReceiverConfig(HTTP_ONLY), { storageRoot: root, log: (level, msg) => logs.push(`${level} ${msg}`) });
      await r.start();
      return r;
    };

    test('a segment that ends before the next one begins (a crash just after the journal moved on): its entries land, the gap is skipped', async () => {
      const root = tempDir('aszcol-journal-gap-');
      mkdirSync(journalDir(root), { recursive: true });
      const req = ccLogsRequest('J-gap', 0);
      const first = entry(req);
      writeFileSync(join(journalDir(root), segmentName(0)), first);
      writeFileSync(join(journalDir(root), segmentName(first.length + 500)), Buffer.alloc(0));
      const r = await start(root);
      try {
        expect(await r.landed(5000)).toBe(true);
        expect(landedFiles(root, 'J-gap')[0]!.records.map((x) => x.sha)).toEqual(recordShas(req));
        const next = ccLogsRequest('J-gap', 5, 9, 'after');
        expect((await httpPost(r.addresses().http!, '/v1/logs', next, PB)).status).toBe(200);
        expect(await r.landed(5000)).toBe(true);
        expect(landedFiles(root, 'J-gap').flatMap((f) => f.records.map((x) => x.sha))).toEqual([...recordShas(req), ...recordShas(next)]);
      } finally {
        await r.shutdown();
      }
    });

    test('a damaged length field is damage, not a torn end: the entries after it are kept and land', async () => {
      const root = tempDir('aszcol-journal-badlen-');
      mkdirSync(journalDir(root), { recursive: true });
      const reqs = [0, 1, 2, 3].map((i) => ccLogsRequest('J-len', i * 5, i, `l${i}`));
      const entries = reqs.map(entry);
      entries[1]!.writeUInt32LE(0x7fffffff, 4); // claims far more than the file holds
      writeFileSync(join(journalDir(root), segmentName(0)), Buffer.concat(entries));
      const r = await start(root);
      try {
        expect(await r.landed(5000)).toBe(true);
        expect(landedFiles(root, 'J-len').flatMap((f) => f.records.map((x) => x.sha))).toEqual([reqs[0]!, reqs[2]!, reqs[3]!].flatMap(recordShas));
        expect(readdirSync(join(journalDir(root), 'damaged'))).toHaveLength(1);
        expect(r.stats().damaged_entries).toBe(1);
      } finally {
        await r.shutdown();
      }
    });

    test('a landed position ahead of the entries is brought back, so positions issued again still land after a crash', async () => {
      const root = tempDir('aszcol-journal-ahead-');
      mkdirSync(journalDir(root), { recursive: true });
      const req = ccLogsRequest('J-ahead', 0);
      writeFileSync(join(journalDir(root), segmentName(0)), entry(req));
      writeFileSync(
        join(journalDir(root), 'landed.state'),
        formatKv([
          ['schema', 1],
          ['landed_through', 100000],
        ]),
      );
      const r = await start(root);
      try {
        expect(Number(parseKv(readFileSync(join(journalDir(root), 'landed.state'), 'utf8')).get('landed_through'))).toBeLessThanOrEqual(entry(req).length);
        expect((await httpPost(r.addresses().http!, '/v1/logs', ccLogsRequest('J-ahead', 5, 9, 'new'), PB)).status).toBe(200);
        expect(await r.landed(5000)).toBe(true);
        expect(landedFiles(root, 'J-ahead').flatMap((f) => f.records)).toHaveLength(5);
      } finally {
        await r.shutdown();
      }
    });

    test('a session whose last landed file cannot be read: its new records are quarantined (they would fail the same way each try), the journal moves on, and the session lock is never left behind', async () => {
      const root = tempDir('aszcol-journal-unreadable-');
      let r = await start(root);
      expect((await httpPost(r.addresses().http!, '/v1/logs', ccLogsRequest('J-bad', 0), PB)).status).toBe(200);
      expect(await r.landed(5000)).toBe(true);
      await r.shutdown();
      // The landed file is replaced by one that is not Session Data (the receiver never writes such a file).
      const dir = join(root, 'J-bad', 'otlp');
      const name = readdirSync(dir).find((n) => n.endsWith('.sd'))!;
      chmodSync(join(dir, name), 0o644);
      writeFileSync(join(dir, name), 'not session data\n');
      r = await start(root);
      try {
        expect((await httpPost(r.addresses().http!, '/v1/logs', ccLogsRequest('J-bad', 5, 9, 'b'), PB)).status).toBe(200);
        expect(await r.landed(5000)).toBe(true);
        expect(logs.some((l) => /^error the 5 records of session "J-bad" can never land .* quarantined in .*_quarantine/.test(l))).toBe(true);
        expect(existsSync(sessionLockPath(root, 'J-bad'))).toBe(false);
        expect(r.stats()).toMatchObject({ waiting_sessions: 0, quarantined_records: { internal: 5 } });
        expect(readdirSync(join(root, '_quarantine'))).toHaveLength(1);
      } finally {
        await r.shutdown(1500); // what cannot land stays in the journal
      }
    });
  });
});
