/**
 * A landing round's files: all land under their final names, read-only and whole; one that fails
 * (its name taken, its directory gone) is reported to its owner while the others still land, and
 * no temporary file is left behind either way.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Round, inFlight } from '../../src/receivers/claude-code-otlp/landing/round.js';
import type { LandLog } from '../../src/receivers/claude-code-otlp/landing/messages.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

function recordingLog(): { log: LandLog; lines: string[] } {
  const lines: string[] = [];
  return { log: (level, msg) => lines.push(`${level}: ${msg}`), lines };
}

describe('a landing round', () => {
  test('every file lands whole and read-only under its final name, each owner hears success, no temporary file stays', async () => {
    const dir = tempDir();
    const { log, lines } = recordingLog();
    const round = new Round(log);
    const outcomes: (Error | undefined | 'pending')[] = ['pending', 'pending', 'pending'];
    round.add(join(dir, 'a.sd'), ['one ', Buffer.from('two')], (err) => {
      outcomes[0] = err;
    });
    round.add(join(dir, 'b.sd'), [], (err) => {
      outcomes[1] = err;
    });
    round.add(join(dir, 'c.sd'), ['x'.repeat(100_000)], (err) => {
      outcomes[2] = err;
    });
    expect(round.size).toBe(3);
    await round.land();
    expect(outcomes).toEqual([undefined, undefined, undefined]);
    expect(readFileSync(join(dir, 'a.sd'), 'utf8')).toBe('one two');
    expect(readFileSync(join(dir, 'b.sd'), 'utf8')).toBe('');
    expect(readFileSync(join(dir, 'c.sd'), 'utf8')).toHaveLength(100_000);
    expect(statSync(join(dir, 'a.sd')).mode & 0o777).toBe(0o444);
    expect(readdirSync(dir).sort()).toEqual(['a.sd', 'b.sd', 'c.sd']);
    expect(lines).toEqual([]);
  });

  test('a file whose name is taken, and one whose directory is gone, fail alone: the others land, the failures are reported', async () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'taken.sd'), 'already here');
    const { log } = recordingLog();
    const round = new Round(log);
    const outcomes = new Map<string, Error | undefined>();
    for (const [name, path] of [
      ['first', join(dir, 'first.sd')],
      ['taken', join(dir, 'taken.sd')],
      ['nodir', join(dir, 'gone', 'x.sd')],
      ['last', join(dir, 'last.sd')],
    ] as const) {
      round.add(path, [`${name}\n`], (err) => outcomes.set(name, err));
    }
    await round.land();
    expect(outcomes.get('first')).toBeUndefined();
    expect(outcomes.get('last')).toBeUndefined();
    expect((outcomes.get('taken') as NodeJS.ErrnoException | undefined)?.code).toBe('EEXIST');
    expect((outcomes.get('nodir') as NodeJS.ErrnoException | undefined)?.code).toBe('ENOENT');
    expect(readFileSync(join(dir, 'first.sd'), 'utf8')).toBe('first\n');
    expect(readFileSync(join(dir, 'last.sd'), 'utf8')).toBe('last\n');
    expect(readFileSync(join(dir, 'taken.sd'), 'utf8')).toBe('already here'); // never overwritten
    expect(readdirSync(dir).sort()).toEqual(['first.sd', 'last.sd', 'taken.sd']);
  });

  test('a round of more files than may be open at once lands them all, across several directories', async () => {
    const root = tempDir();
    const round = new Round(recordingLog().log);
    let ok = 0;
    for (let d = 0; d < 3; d++) mkdirSync(join(root, `d${d}`));
    for (let i = 0; i < 300; i++)
      round.add(join(root, `d${i % 3}`, `f${i}.pb`), [String(i)], (err) => {
        if (!err) ok++;
      });
    await round.land();
    expect(ok).toBe(300);
    expect(readdirSync(join(root, 'd1'))).toHaveLength(100);
    expect(readFileSync(join(root, 'd2', 'f299.pb'), 'utf8')).toBe('299');
  });
});

describe('inFlight', () => {
  test('runs at most `limit` at once, runs every item, and gives back the ones that failed with their errors', async () => {
    let running = 0;
    let most = 0;
    const seen: number[] = [];
    const failed = await inFlight([1, 2, 3, 4, 5, 6, 7], 3, async (n) => {
      running++;
      most = Math.max(most, running);
      await new Promise((r) => setImmediate(r));
      seen.push(n);
      running--;
      if (n % 3 === 0) throw new Error(`no ${n}`);
    });
    expect(most).toBe(3);
    expect(seen.sort()).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(failed.map(([n, e]) => [n, e.message])).toEqual([
      [3, 'no 3'],
      [6, 'no 6'],
    ]);
  });
});
