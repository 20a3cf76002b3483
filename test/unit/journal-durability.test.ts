/**
 * The journal's two durabilities, on a real file: under `process` an answer means the request's
 * bytes are in the journal file (what a crash of aszcol cannot take), under `machine` that they
 * were synced; requests taken in one turn go to the file together, in order; and under `process`
 * no more than MAX_UNSYNCED_BYTES is ever answered ahead of the disk.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import { join } from 'node:path';
import { Journal, MAX_UNSYNCED_BYTES, type Durability } from '../../src/receivers/claude-code-otlp/journal.js';
import { FRAME_BYTES, readEntry, segmentName } from '../../src/receivers/claude-code-otlp/journal-format.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

async function opened(durability: Durability): Promise<{ j: Journal; seg: string; synced: number[] }> {
  const dir = join(tempDir('aszcol-journal-'), 'j');
  const j = new Journal(dir, durability);
  await j.open();
  const synced: number[] = [];
  j.onDurable = (end) => synced.push(end);
  return { j, seg: join(dir, segmentName(0)), synced };
}

describe('journal durability', () => {
  test('process: an answer means the bytes are in the file; the sync follows on its own, and idle waits for it', async () => {
    const { j, seg, synced } = await opened('process');
    const body = Buffer.from('a request body');
    const end = await j.append('logs', body, 1n);
    expect(end).toBe(FRAME_BYTES + body.length);
    // Written before the answer: a read through the file system sees the whole entry.
    const r = readEntry(readFileSync(seg), 0, 0);
    expect(r.ok && r.entry.body.equals(body)).toBe(true);
    await j.idle();
    expect(j.durableEnd).toBe(end);
    expect(synced[synced.length - 1]).toBe(end);
    await j.close();
  });

  test('machine: no answer before the sync that covers it', async () => {
    const { j } = await opened('machine');
    const ends = await Promise.all(
      [1, 2, 3].map(async (n) => {
        const end = await j.append('metrics', Buffer.alloc(100 * n, n), BigInt(n));
        expect(j.durableEnd).toBeGreaterThanOrEqual(end);
        return end;
      }),
    );
    expect(ends).toEqual([FRAME_BYTES + 100, 2 * FRAME_BYTES + 300, 3 * FRAME_BYTES + 600]);
    await j.idle();
    await j.close();
  });

  test('requests taken in one turn are written together, in the order taken, each whole', async () => {
    const { j, seg } = await opened('process');
    const bodies = Array.from({ length: 300 }, (_, i) => Buffer.from(`request ${i} `.repeat(1 + (i % 7))));
    const ends = await Promise.all(bodies.map((b, i) => j.append(i % 2 ? 'logs' : 'traces', b, BigInt(i))));
    expect(ends).toEqual([...ends].sort((a, b) => a - b));
    const buf = readFileSync(seg);
    let off = 0;
    for (const [i, b] of bodies.entries()) {
      const r = readEntry(buf, off, 0);
      if (!r.ok) throw new Error(`entry ${i} at ${off} does not read back`);
      expect(r.entry.body.equals(b)).toBe(true);
      expect(r.entry.receivedAtNs).toBe(BigInt(i));
      expect(r.entry.end).toBe(ends[i]);
      off = r.entry.end;
    }
    expect(off).toBe(buf.length);
    await j.idle();
    await j.close();
  });

  test('process: past MAX_UNSYNCED_BYTES ahead of the disk, answers wait for the sync', async () => {
    const { j, seg } = await opened('process');
    const big = Buffer.alloc(4 * 1024 * 1024, 7);
    const n = Math.ceil(MAX_UNSYNCED_BYTES / big.length) + 2;
    // All in one turn: nothing is synced yet when they are taken, so the last ones are past the bound.
    const answered = await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const end = await j.append('logs', big, BigInt(i));
        return { end, durable: j.durableEnd };
      }),
    );
    const past = answered.filter((a) => a.end > MAX_UNSYNCED_BYTES);
    expect(past.length).toBeGreaterThan(0);
    for (const a of past) expect(a.durable).toBeGreaterThanOrEqual(a.end);
    // It crossed into a second segment on the way (a segment is as large as the bound): nothing lost at the seam.
    const wal = readdirSync(dirname(seg)).filter((f) => f.endsWith('.wal'));
    expect(wal.length).toBe(2);
    expect(wal.reduce((sum, f) => sum + statSync(join(dirname(seg), f)).size, 0)).toBe(n * (FRAME_BYTES + big.length));
    await j.idle();
    await j.close();
  });
});

describe('journal close', () => {
  test('closed while a sync runs (shutdown past its wait): the late sync changes nothing, and what still waits is refused', async () => {
    const { j } = await opened('machine');
    const first = j.append('logs', Buffer.alloc(8 << 20, 1), 1n);
    // The first turn writes it and starts its sync; the second request is written by the next
    // turn while that sync still runs, so its own sync would start when the first returns.
    await new Promise((r) => setImmediate(r));
    const second = j.append('logs', Buffer.alloc(8 << 20, 2), 2n);
    await new Promise((r) => setImmediate(r));
    const uncaught: unknown[] = [];
    const onUncaught = (e: unknown) => uncaught.push(e);
    process.on('uncaughtException', onUncaught);
    await j.close();
    const outcomes = await Promise.allSettled([first, second]);
    expect(outcomes.map((o) => o.status)).toContain('rejected');
    await expect(j.append('logs', Buffer.from('late'), 3n)).rejects.toThrow(/is closed/);
    // Any sync still on the thread pool returns into a closed journal without touching it.
    await new Promise((r) => setTimeout(r, 200));
    process.off('uncaughtException', onUncaught);
    expect(uncaught).toEqual([]);
  });
});
