import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ANY_SPOOL_FILE, METRICS_DIR, MetricsSpool, asSpoolReader, receiptPath } from '../../src/storage/metrics-spool.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const STAMP = '20260911T095959.000000000Z';

describe('the _metrics spool: one type owns its names and rules', () => {
  test("the receiver's and the derivation's names are told apart, and each carries what it was made from", () => {
    const received = MetricsSpool.receivedName(STAMP, 42);
    const derived = MetricsSpool.derivedName(STAMP, 7, 'c0ffee00-0000-4000-8000-000000000001');
    expect(received).toBe(`metrics-${STAMP}-000042-otlp.pb`);
    expect(MetricsSpool.receivedSeq(received)).toBe(42);
    expect(MetricsSpool.receivedSeq(derived)).toBeUndefined();
    expect(MetricsSpool.derivedOrigin(derived)).toEqual({ session: 'c0ffee00-0000-4000-8000-000000000001', seq: 7 });
    expect(MetricsSpool.derivedOrigin(received)).toBeUndefined();
    expect(MetricsSpool.namePattern('received').test(derived)).toBe(false);
    expect(MetricsSpool.namePattern('derived').test(received)).toBe(false);
    expect(ANY_SPOOL_FILE.test(received) && ANY_SPOOL_FILE.test(derived)).toBe(true);
    expect(MetricsSpool.rel(received)).toBe(`${METRICS_DIR}/${received}`);
  });

  test('listing gives one source in time order, ignores everything else, and is empty before the spool exists', () => {
    const root = tempDir();
    const spool = new MetricsSpool(root);
    expect(spool.list('received')).toEqual([]);
    mkdirSync(spool.dir, { recursive: true });
    const later = MetricsSpool.receivedName('20260911T100000.000000000Z', 3);
    const earlier = MetricsSpool.receivedName(STAMP, 9);
    const derived = MetricsSpool.derivedName(STAMP, 1, 's');
    for (const n of [later, earlier, derived, 'spool.state', `${earlier}.tmp-123`]) writeFileSync(join(spool.dir, n), 'x');
    expect(spool.list('received').map((f) => f.name)).toEqual([earlier, later]);
    expect(spool.list('received')[0]).toEqual({ name: earlier, rel: `_metrics/${earlier}`, path: join(root, '_metrics', earlier) });
    expect(spool.list('derived').map((f) => f.name)).toEqual([derived]);
  });

  test("a derived file's receipt is found where token_metrics writes it", () => {
    const root = tempDir();
    const spool = new MetricsSpool(root);
    const name = MetricsSpool.derivedName(STAMP, 12, 'sess');
    expect(spool.hasReceipt(name)).toBe(false);
    mkdirSync(join(root, 'sess', 'metrics'), { recursive: true });
    writeFileSync(receiptPath(root, 'sess', 12), '{}');
    expect(receiptPath(root, 'sess', 12)).toBe(join(root, 'sess', 'metrics', 'receipt-000012.json'));
    expect(spool.hasReceipt(name)).toBe(true);
    expect(spool.hasReceipt(MetricsSpool.receivedName(STAMP, 12))).toBe(false);
  });

  test('a component is a spool reader only when it can say both what it reads and what it has read', () => {
    expect(asSpoolReader({ spoolSource: () => 'derived', hasRead: () => true })).toBeDefined();
    expect(asSpoolReader({ spoolSource: () => 'derived' })).toBeUndefined();
    expect(asSpoolReader(undefined)).toBeUndefined();
  });
});
