/**
 * Temporary names are what keeps two writers of one process apart (every temporary is opened with
 * O_EXCL, so a repeated name fails a landing) and what tells a sweep whose leftover a file is.
 * Since the suffix stopped coming from the crypto library, the names of many calls and of two
 * threads must still all differ, and each must still name this process to `tempWriterPid`, so a
 * live writer's file is never swept and a dead one's always is.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { closeSync, openSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { removeDeadTemporaries, tempPath, tempWriterPid } from '../../src/storage/write-once.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

/** Names made on a second thread of this process, as the collect workers make them. */
function namesOnAnotherThread(final: string, n: number): Promise<string[]> {
  const source = `
    const { parentPort, workerData } = require('node:worker_threads');
    import(workerData.module).then(({ tempPath }) => {
      const names = [];
      for (let i = 0; i < workerData.n; i++) names.push(tempPath(workerData.final));
      parentPort.postMessage(names);
    });`;
  const module = new URL('../../src/storage/write-once.js', import.meta.url).href;
  return new Promise((resolve, reject) => {
    const w = new Worker(source, { eval: true, workerData: { module, final, n } });
    w.once('message', (names: string[]) => void w.terminate().then(() => resolve(names)));
    w.once('error', reject);
  });
}

describe('a temporary name', () => {
  test('differs across many calls and two threads of one process, and names this process', async () => {
    const dir = tempDir('temp-names-');
    const final = join(dir, 'transcript-20261202T000000Z-000001.sd');
    // 32 random bits: 2 x 20,000 names collided by the birthday bound about 1 run in 5 (CI saw one);
    // 2 x 1,000 keep the chance near 1 in 2,000 and still catch a suffix that does not vary.
    const here = Array.from({ length: 1_000 }, () => tempPath(final));
    const there = await namesOnAnotherThread(final, 1_000);
    const all = [...here, ...there];
    expect(new Set(all).size).toBe(all.length);
    for (const path of [here[0]!, there[0]!]) {
      const name = path.slice(dir.length + 1);
      expect(name).toMatch(/^\.tmp-transcript-20261202T000000Z-000001\.sd-\d+-[0-9a-f]{8}$/);
      expect(tempWriterPid(name)).toBe(process.pid);
    }
  });

  test("is swept only once its writer is gone: this process's file stays, a dead pid's goes", () => {
    const dir = tempDir('temp-sweep-');
    const mine = tempPath(join(dir, 'transcript.cursor'));
    closeSync(openSync(mine, 'wx'));
    // A pid above the kernel's largest never runs: the shape of a killed writer's leftover.
    const dead = join(dir, '.tmp-transcript.cursor-4194305-0a1b2c3d');
    writeFileSync(dead, '');
    expect(removeDeadTemporaries(dir)).toEqual([dead]);
    expect(readdirSync(dir)).toEqual([mine.slice(dir.length + 1)]);
  });
});
