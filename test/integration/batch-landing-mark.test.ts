/**
 * A collect worker takes its batch's session locks under one landing mark and moves the epoch once,
 * after the batch's last lock went (issue 19: three files made and freed per session were one to two
 * of a first collect's inode allocations). The protocol of landing-epoch.ts must hold for the batch:
 * while any of its locks is held, a mark is listed, and the epoch moves only after the last release.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { BatchLandingMark } from '../../src/storage/batch-landing-mark.js';
import { landingNow } from '../../src/storage/landing-epoch.js';
import { FileLock } from '../../src/storage/lock.js';
import { sessionLockPath } from '../../src/storage/layout.js';
import { SessionLock } from '../../src/storage/session-lock.js';
import { runCli } from '../helpers/cli.js';
import { settledRoot, settledSid } from '../helpers/settled-root.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { rec, writeLines } from '../helpers/transcript.js';

afterAll(cleanupTemp);

describe('one landing mark for a batch of session locks', () => {
  test('the mark is listed from the first lock until the batch finishes, and the epoch moves once, after the last release', () => {
    const root = join(tempDir('aszcol-batch-mark-'), 'data');
    const mark = new BatchLandingMark(root);
    const before = landingNow(root).epoch;
    const a = new SessionLock(root, 'a', mark);
    const b = new SessionLock(root, 'b', mark);
    expect(a.tryAcquire()).toBe(true);
    expect(b.tryAcquire()).toBe(true);
    expect(landingNow(root).writers).toHaveLength(1); // one mark for both, not one each
    a.release();
    // A parse now must not record the epoch: b still writes.
    expect(landingNow(root)).toMatchObject({ epoch: before, writers: [expect.any(String)] });
    b.release();
    // Released but not finished: the batch's owner has not said it is done.
    expect(landingNow(root).writers).toHaveLength(1);
    mark.finish();
    const after = landingNow(root);
    expect(after.writers).toEqual([]);
    expect(after.epoch).not.toBe(before);
  });

  test('a batch that took no lock leaves the epoch and no mark; one whose lock was refused keeps its mark until it finishes', () => {
    const root = join(tempDir('aszcol-batch-mark-'), 'data');
    const idle = new BatchLandingMark(root);
    idle.finish();
    expect(landingNow(root)).toMatchObject({ epoch: '', writers: [] });

    const other = new FileLock(sessionLockPath(root, 'busy'));
    expect(other.tryAcquire()).toBe(true);
    const mark = new BatchLandingMark(root);
    expect(new SessionLock(root, 'busy', mark).tryAcquire()).toBe(false);
    expect(landingNow(root).writers).toHaveLength(1);
    mark.finish();
    expect(landingNow(root).writers).toEqual([]);
    other.release();
  });

  test('collect with two workers: sessions landed in batches move the epoch and leave no mark', async () => {
    const base = tempDir('aszcol-batch-mark-collect-');
    const { root, src, config } = await settledRoot(base, 6, {});
    const settled = landingNow(root);
    for (let i = 0; i < 6; i++) writeLines(join(src, '-p', `${settledSid(i)}.jsonl`), [rec.user(settledSid(i), 'one more')], { append: true });
    const r = await runCli(['collect', '--once', '--json', '--config', config]);
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout.trim().split('\n').pop()!) as { landedFiles: number }).landedFiles).toBe(6);
    const after = landingNow(root);
    expect(after.epoch).not.toBe(settled.epoch);
    expect(after.writers).toEqual([]);
  }, 60_000);
});
