/**
 * Removing sent spool files (src/storage/spool-removal.ts) on real files: only what every receiver
 * took with the bytes it has now, only what is old enough, never under another holder of the
 * spool's lock; spool.state's counter raised above every number first; push.state forgetting the
 * files only once they are gone, including those a stopped removal took.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { FileLock } from '../../src/storage/lock.js';
import { parseKv } from '../../src/storage/kv-text.js';
import { PushState } from '../../src/storage/push-state.js';
import { removeSentSpoolFiles, type SpoolRemovalOptions } from '../../src/storage/spool-removal.js';
import { noteRemoval, SpoolStateError } from '../../src/storage/spool-state.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const RECEIVED = /^metrics-(\d{8}T\d{6}\.\d{9}Z)-(\d{6,})-otlp\.pb$/;
const E1 = 'grpc://127.0.0.1:11800';
const E2 = 'http://127.0.0.1:4318';
const sha = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');
const name = (seq: number) => `metrics-20260601T090000.00000000${seq % 10}Z-${String(seq).padStart(6, '0')}-otlp.pb`;
const HOUR = 3_600_000;

/** A spool with the receiver's files `seqs`, each written read-only an hour ago, as the receiver leaves them. */
function spool(seqs: number[]): { root: string; dir: string; bytes: Map<number, Buffer> } {
  const root = tempDir('aszcol-spool-');
  const dir = join(root, '_metrics');
  mkdirSync(dir);
  const bytes = new Map<number, Buffer>();
  for (const s of seqs) {
    const b = Buffer.from(`request ${s} `.repeat(40 + s));
    writeFileSync(join(dir, name(s)), b, { mode: 0o444 });
    const t = (Date.now() - HOUR) / 1000;
    utimesSync(join(dir, name(s)), t, t);
    bytes.set(s, b);
  }
  return { root, dir, bytes };
}

const opts = (root: string, o: Partial<SpoolRemovalOptions> = {}): SpoolRemovalOptions => ({
  root,
  dir: '_metrics',
  names: RECEIVED,
  endpoints: [E1],
  keepMs: 0,
  forgetSent: true,
  lockWaitMs: 100,
  seqOf: (n) => {
    const m = RECEIVED.exec(n);
    return m ? Number(m[2]) : undefined;
  },
  ...o,
});

const files = (dir: string) =>
  readdirSync(dir)
    .filter((n) => RECEIVED.test(n))
    .sort();
/** What the receiver counts: every metrics-*.pb in the spool, by size. */
const counted = (dir: string) =>
  readdirSync(dir)
    .filter((n) => /^metrics-.*\.pb$/.test(n))
    .reduce((t, n) => t + readFileSync(join(dir, n)).length, 0);

describe('removing sent spool files', () => {
  test('only files every receiver took go; the receiver would count fewer bytes; the counter stays above every number', async () => {
    const { root, dir, bytes } = spool([1, 2, 3, 4]);
    writeFileSync(join(dir, 'spool.state'), 'schema    1\nnext_seq  2\nnote      kept as it is\n');
    const state = new PushState(root);
    state.record(
      E1,
      [1, 2, 3, 4].map((s) => ({ rel: `_metrics/${name(s)}`, digest: sha(bytes.get(s)!) })),
    );
    state.record(
      E2,
      [2, 4].map((s) => ({ rel: `_metrics/${name(s)}`, digest: sha(bytes.get(s)!) })),
    );
    const before = counted(dir);
    const r = await removeSentSpoolFiles(opts(root, { endpoints: [E1, E2] }));
    expect(r).toMatchObject({ removed: 2, removedBytes: bytes.get(2)!.length + bytes.get(4)!.length, unsent: 2, forgotten: 4, busy: false, problems: [] });
    expect(files(dir)).toEqual([name(1), name(3)]);
    expect(counted(dir)).toBe(before - r.removedBytes);
    // The removed files are forgotten for every receiver; the others are still recorded where they went.
    const again = new PushState(root);
    expect([...again.sent(E1).keys()]).toEqual([`_metrics/${name(1)}`, `_metrics/${name(3)}`]);
    expect([...again.sent(E2).keys()]).toEqual([]);
    // The highest number (4) is gone from the disk, and the counter is past it.
    const kv = parseKv(readFileSync(join(dir, 'spool.state'), 'utf8'));
    expect(Object.fromEntries(kv)).toMatchObject({ schema: '1', next_seq: '5', removed: '2', note: 'kept as it is' });
  });

  test('a file taken with other bytes than it has now stays, and says so; so does one younger than keep', async () => {
    const { root, dir, bytes } = spool([1, 2, 3]);
    const state = new PushState(root);
    state.record(
      E1,
      [1, 2, 3].map((s) => ({ rel: `_metrics/${name(s)}`, digest: sha(bytes.get(s)!) })),
    );
    chmodSync(join(dir, name(2)), 0o644);
    writeFileSync(join(dir, name(2)), 'other bytes');
    utimesSync(join(dir, name(2)), (Date.now() - HOUR) / 1000, (Date.now() - HOUR) / 1000);
    writeFileSync(join(dir, name(3)), bytes.get(3)!); // rewritten with the same bytes just now: young
    const r = await removeSentSpoolFiles(opts(root, { keepMs: HOUR / 2 }));
    expect(r).toMatchObject({ removed: 1, young: 1 });
    expect(r.problems).toEqual([`_metrics/${name(2)}: its bytes are not the ones push.state records as sent; kept until a person looks at it`]);
    expect(files(dir)).toEqual([name(2), name(3)]);
  });

  test("while another process holds the spool's lock nothing goes; a reader that has not read a file keeps it", async () => {
    const { root, dir, bytes } = spool([1, 2]);
    new PushState(root).record(
      E1,
      [1, 2].map((s) => ({ rel: `_metrics/${name(s)}`, digest: sha(bytes.get(s)!) })),
    );
    const other = new FileLock(join(dir, '.lock'));
    expect(other.tryAcquire()).toBe(true);
    try {
      const r = await removeSentSpoolFiles(opts(root));
      expect(r).toMatchObject({ removed: 0, busy: true, forgotten: 0 });
      expect(files(dir)).toEqual([name(1), name(2)]);
      expect(existsSync(join(dir, 'spool.state'))).toBe(false);
    } finally {
      other.release();
    }
    const r = await removeSentSpoolFiles(opts(root, { readers: [{ name: 'exporters/prometheus', hasRead: (n) => n === name(2) }] }));
    expect(r).toMatchObject({ removed: 1, unsent: 1, busy: false });
    expect(files(dir)).toEqual([name(1)]);
    expect(existsSync(join(dir, '.lock'))).toBe(false);
  });

  test('after a removal stopped between the files and push.state, the next one forgets the lines of the files that are gone', async () => {
    const { root, dir, bytes } = spool([1, 2]);
    const state = new PushState(root);
    // Lines of files a stopped removal already took (3 and 9, gone), and of one still there (1).
    state.record(E1, [
      { rel: `_metrics/${name(3)}`, digest: sha('3') },
      { rel: `_metrics/${name(1)}`, digest: sha(bytes.get(1)!) },
    ]);
    state.record('unknown', [
      { rel: `_metrics/${name(9)}`, digest: sha('9') },
      { rel: 'S/streams/main/transcript-20260601T090000.000000000Z-000001.sd', digest: sha('t') },
    ]);
    const r = await removeSentSpoolFiles(opts(root));
    expect(r).toMatchObject({ removed: 1, unsent: 1, forgotten: 3 });
    const again = new PushState(root);
    expect([...again.sent(E1).keys()]).toEqual([]);
    // A landed file's line is never the spool's business.
    expect([...again.sent('unknown').keys()]).toEqual(['S/streams/main/transcript-20260601T090000.000000000Z-000001.sd']);
    expect(files(dir)).toEqual([name(2)]);
  });

  test("without forgetSent the lines stay (a derived request's name can come back); with nothing to remove spool.state is not touched", async () => {
    const { root, dir, bytes } = spool([1]);
    new PushState(root).record(E1, [{ rel: `_metrics/${name(1)}`, digest: sha(bytes.get(1)!) }]);
    const r = await removeSentSpoolFiles(opts(root, { forgetSent: false }));
    expect(r).toMatchObject({ removed: 1, forgotten: 0 });
    expect([...new PushState(root).sent(E1).keys()]).toEqual([`_metrics/${name(1)}`]);
    const text = readFileSync(join(dir, 'spool.state'), 'utf8');
    expect(await removeSentSpoolFiles(opts(root, { forgetSent: false }))).toMatchObject({ removed: 0 });
    expect(readFileSync(join(dir, 'spool.state'), 'utf8')).toBe(text);
  });

  test('a spool.state of another schema is a typed error naming the file, and nothing is removed', async () => {
    const { root, dir, bytes } = spool([1]);
    new PushState(root).record(E1, [{ rel: `_metrics/${name(1)}`, digest: sha(bytes.get(1)!) }]);
    writeFileSync(join(dir, 'spool.state'), 'schema 2\nnext_seq 7\n');
    expect(() => noteRemoval(dir, 2, 1)).toThrow(SpoolStateError);
    expect(() => noteRemoval(dir, 2, 1)).toThrow(`${join(dir, 'spool.state')}: schema "2" is not one this build writes`);
    const r = await removeSentSpoolFiles(opts(root));
    expect(r.removed).toBe(0);
    expect(r.problems[0]).toContain('spool.state: schema "2"');
    expect(files(dir)).toEqual([name(1)]);
  });
});

describe('push.state', () => {
  test('a rewrite by another instance is seen even when the file keeps its size', () => {
    const root = tempDir();
    const a = new PushState(root);
    const b = new PushState(root);
    a.record(E1, [
      { rel: 'x/1.sd', digest: sha('1') },
      { rel: 'x/2.sd', digest: sha('2') },
    ]);
    expect(b.sent(E1).size).toBe(2);
    // Same length, other content, installed by rename as a rewrite is.
    const text = readFileSync(join(root, 'push.state'), 'utf8').replace('x/2.sd', 'y/2.sd');
    writeFileSync(join(root, 'push.state.new'), text);
    renameSync(join(root, 'push.state.new'), join(root, 'push.state'));
    expect([...b.sent(E1).keys()]).toEqual(['x/1.sd', 'y/2.sd']);
    expect(a.forgetFiles(new Set(['y/2.sd']))).toBe(1);
    expect([...b.sent(E1).keys()]).toEqual(['x/1.sd']);
  });
});
