/**
 * The landing thread's side of the metrics spool: request files numbered above every number on
 * disk and above spool.state's counter, counted again when spool.state changed under it, the
 * counter written back in spool.state's format with other keys kept, and nothing written while
 * another collector holds the spool's lock.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { FileLock } from '../../src/storage/lock.js';
import { MetricsSpool } from '../../src/storage/metrics-spool.js';
import { parseKv } from '../../src/storage/kv-text.js';
import { Round } from '../../src/receivers/claude-code-otlp/landing/round.js';
import { SpoolWriter } from '../../src/receivers/claude-code-otlp/landing/spool-writer.js';
import type { SpoolWork } from '../../src/receivers/claude-code-otlp/landing/waiting-work.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const STAMP = '20261130T051412.000000000Z';
const AT_NS = BigInt(Date.UTC(2026, 10, 30, 5, 14, 12)) * 1_000_000n;
const lines: string[] = [];
const log = (level: string, msg: string) => {
  lines.push(`${level}: ${msg}`);
};

function requests(n: number, size = 10): SpoolWork[] {
  return Array.from({ length: n }, (_, i) => ({ at: i * 100, receivedAtNs: AT_NS, body: Buffer.alloc(size, i) }));
}

/** Lands `work` in one round; gives back what did not land. */
async function land(w: SpoolWriter, work: SpoolWork[]): Promise<SpoolWork[] | undefined> {
  const round = new Round(log);
  const finish = w.prepare(round, work);
  if (!finish) return undefined;
  await round.land();
  return finish();
}

const received = (dir: string) =>
  readdirSync(dir)
    .filter((n) => MetricsSpool.receivedSeq(n) !== undefined)
    .sort();

describe('the landing spool writer', () => {
  test("numbers new files above the highest number on disk, and counts every spool file's bytes", async () => {
    const root = tempDir();
    const spool = new MetricsSpool(root);
    mkdirSync(spool.dir, { recursive: true });
    writeFileSync(spool.path(MetricsSpool.receivedName(STAMP, 7)), Buffer.alloc(100));
    writeFileSync(spool.path(MetricsSpool.derivedName(STAMP, 900, 'some-session')), Buffer.alloc(50)); // counted, but not our number
    const w = new SpoolWriter(root, log);
    w.open(0);
    expect(w.bytes).toBe(150);
    expect(w.nextSeq).toBe(8);
    expect(await land(w, requests(2))).toEqual([]);
    expect(received(spool.dir)).toEqual([7, 8, 9].map((s) => MetricsSpool.receivedName(STAMP, s)));
    expect(readFileSync(spool.path(MetricsSpool.receivedName(STAMP, 9)))).toEqual(Buffer.alloc(10, 1));
    expect(w.bytes).toBe(170);
  });

  test("numbers new files above spool.state's next_seq when it is ahead of the disk (sent files removed)", async () => {
    const root = tempDir();
    const spool = new MetricsSpool(root);
    mkdirSync(spool.dir, { recursive: true });
    writeFileSync(spool.statePath, 'schema    1\nnext_seq  20\n');
    writeFileSync(spool.path(MetricsSpool.receivedName(STAMP, 3)), 'x');
    const w = new SpoolWriter(root, log);
    w.open(0);
    await land(w, requests(1));
    expect(received(spool.dir)).toEqual([MetricsSpool.receivedName(STAMP, 3), MetricsSpool.receivedName(STAMP, 20)]);
  });

  test('when spool.state changed under it, it counts the spool again before numbering', async () => {
    const root = tempDir();
    const w = new SpoolWriter(root, log);
    w.open(0);
    await land(w, requests(1));
    expect(w.nextSeq).toBe(2);
    // Another writer (a removal, a second receiver) was here: a higher number on disk and a new spool.state.
    writeFileSync(w.spool.path(MetricsSpool.receivedName(STAMP, 40)), Buffer.alloc(5));
    writeFileSync(w.spool.statePath, 'schema      1\nnext_seq    30\nremoved     1\nremoved_at  2026-11-30T05:14:12.000Z\n');
    await land(w, requests(1));
    expect(received(w.dir).map((n) => MetricsSpool.receivedSeq(n))).toEqual([1, 40, 41]);
    expect(w.bytes).toBe(10 + 5 + 10);
  });

  test('flush writes spool.state in its format (schema 1, next_seq), keeping keys it does not own, and only when numbers were issued', async () => {
    const root = tempDir();
    const w = new SpoolWriter(root, log);
    w.open(0);
    w.flush();
    expect(existsSync(w.spool.statePath)).toBe(false); // nothing issued yet
    await land(w, requests(3));
    w.flush();
    expect(readFileSync(w.spool.statePath, 'utf8')).toBe('schema    1\nnext_seq  4\n');

    writeFileSync(w.spool.statePath, 'schema      1\nnext_seq    4\nremoved     2\nremoved_at  2026-11-30T05:14:12.000Z\n');
    await land(w, requests(1));
    w.flush();
    const kv = parseKv(readFileSync(w.spool.statePath, 'utf8'));
    expect([...kv.entries()]).toEqual([
      ['schema', '1'],
      ['next_seq', '5'],
      ['removed', '2'],
      ['removed_at', '2026-11-30T05:14:12.000Z'],
    ]);
  });

  test("while another collector holds the spool's lock nothing is written and the work is not taken; open gives up with a clear error", async () => {
    const root = tempDir();
    const w = new SpoolWriter(root, log);
    w.open(0);
    const other = new FileLock(w.spool.lockPath);
    expect(other.tryAcquire()).toBe(true);
    try {
      expect(await land(w, requests(2))).toBeUndefined();
      expect(received(w.dir)).toEqual([]);
      expect(() => new SpoolWriter(root, log).open(0)).toThrow(/is locked by another collector/);
    } finally {
      other.release();
    }
    expect(await land(w, requests(2))).toEqual([]);
    expect(received(w.dir)).toHaveLength(2);
    expect(existsSync(w.spool.statePath)).toBe(false); // written lazily (flush) when nobody else is about
  });

  test('after a lock file left by a crashed collector, the spool is counted again and spool.state left current at once', async () => {
    const root = tempDir();
    const w = new SpoolWriter(root, log);
    w.open(0);
    writeFileSync(w.spool.path(MetricsSpool.receivedName(STAMP, 11)), 'x'); // what the crashed one landed
    writeFileSync(w.spool.lockPath, `4194303 ${hostname()} deadbeef`);
    expect(await land(w, requests(1))).toEqual([]);
    expect(received(w.dir).map((n) => MetricsSpool.receivedSeq(n))).toEqual([11, 12]);
    expect(readFileSync(w.spool.statePath, 'utf8')).toBe('schema    1\nnext_seq  13\n');
    expect(existsSync(w.spool.lockPath)).toBe(false);
  });

  test("open clears temporary files a dead receiver left, and keeps a live one's", () => {
    const root = tempDir();
    const spool = new MetricsSpool(root);
    mkdirSync(spool.dir, { recursive: true });
    const dead = `.tmp-${MetricsSpool.receivedName(STAMP, 1)}-4194303-abcdef`;
    const mine = `.tmp-${MetricsSpool.receivedName(STAMP, 2)}-${process.pid}-abcdef`;
    writeFileSync(spool.path(dead), 'x');
    writeFileSync(spool.path(mine), 'x');
    new SpoolWriter(root, log).open(0);
    expect(readdirSync(spool.dir).filter((n) => n.startsWith('.tmp-'))).toEqual([mine]);
  });
});
