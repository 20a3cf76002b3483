/**
 * A collector that keeps running remembers the sessions it found quiet by their sources' stats:
 * a whole pass over them judges nothing again, and a source that moved is judged and collected.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { appendFileSync, existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { bench } from '../helpers/collect.js';
import { writeFixture, SID, PROJECT } from '../helpers/view-fixture.js';
import { cleanupTemp } from '../helpers/tmp.js';
import { indexDir } from '../../src/storage/index.js';

afterAll(cleanupTemp);

describe('the quiet memo of a long-running collector', () => {
  test('a remembered quiet session is passed over on its stats; a line appended to it lands at the next pass', async () => {
    const b = bench();
    writeFixture(b);
    const c = b.collector({ workers: 2 });
    try {
      const first = await c.passAsync();
      expect(first.landedFiles).toBeGreaterThan(0);
      const quiet = await c.passAsync(); // judged in full, found quiet, remembered
      expect(quiet).toMatchObject({ landedFiles: 0, sessions: 1 });

      // The memo answers without reading the session: with its index gone (a full judgement would rebuild it), the pass passes over.
      rmSync(indexDir(b.root, SID), { recursive: true, force: true });
      expect(await c.passAsync()).toMatchObject({ landedFiles: 0, sessions: 1, errors: [] });
      expect(existsSync(indexDir(b.root, SID))).toBe(false);

      // The source moves: its stat differs, the session is judged in full (the index rebuilt) and the line lands.
      appendFileSync(
        join(b.src, PROJECT, `${SID}.jsonl`),
        JSON.stringify({ type: 'user', uuid: 'u-memo', sessionId: SID, message: { role: 'user', content: 'again' } }) + '\n',
      );
      const moved = await c.passAsync();
      expect(moved.landedFiles).toBe(1);
      expect(moved.errors).toEqual([]);
      expect(existsSync(indexDir(b.root, SID))).toBe(true);
      expect(b.pass()).toMatchObject({ landedFiles: 0, errors: [] }); // a fresh collector's full judgement agrees: nothing left
    } finally {
      await c.close();
    }
  });
});
