/**
 * Two processes contending for one lock file as hard as they can: each, while it holds the lock,
 * marks an owner file and checks nobody else has; a third reads the lock file all the while. A
 * lock file that can be seen without its holder (created empty, written after) is judged stale by
 * a contender that reads it then, which takes the lock too: so the file must never be seen empty.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { spawn } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const ROUNDS = 3000;

/** One contender: counts its holds and the times it found another holder inside the lock. */
const CONTENDER = `
import { FileLock } from ${JSON.stringify(join(REPO, 'dist', 'src', 'storage', 'lock.js'))};
import { readFileSync, writeFileSync } from 'node:fs';
const [lockPath, ownerPath, rounds] = process.argv.slice(1);
let held = 0, overlaps = 0;
for (let i = 0; i < Number(rounds); i++) {
  const lock = new FileLock(lockPath);
  if (!lock.tryAcquire()) continue;
  held++;
  if (readFileSync(ownerPath, 'utf8') !== '') overlaps++;
  writeFileSync(ownerPath, String(process.pid));
  for (let k = 0; k < 50; k++) Math.sqrt(k); // a little work inside
  if (readFileSync(ownerPath, 'utf8') !== String(process.pid)) overlaps++;
  writeFileSync(ownerPath, '');
  lock.release();
}
process.stdout.write(JSON.stringify({ held, overlaps }));
`;

/** The observer: reads the lock file until the contenders are done (or 60 s), counting what it saw. */
const OBSERVER = `
import { existsSync, readFileSync } from 'node:fs';
const [lockPath, donePath] = process.argv.slice(1);
let seen = 0, empty = 0;
for (const until = Date.now() + 60_000; !existsSync(donePath) && Date.now() < until;) {
  let text;
  try { text = readFileSync(lockPath, 'utf8'); } catch { continue; }
  if (text === '') empty++; else seen++;
}
process.stdout.write(JSON.stringify({ seen, empty }));
`;

function run<T>(script: string, args: string[]): Promise<T> {
  return new Promise((res, rej) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '',
      err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.on('error', rej);
    child.on('close', (code) => (code === 0 ? res(JSON.parse(out) as T) : rej(new Error(`child exited ${code}: ${err}`))));
  });
}

describe('a lock two processes contend for', () => {
  test('is never held by both, never seen without its holder, and leaves no temporary file', async () => {
    const dir = tempDir('aszcol-lock-');
    const lockPath = join(dir, 'session.lock');
    const ownerPath = join(dir, 'owner');
    const donePath = join(dir, 'done');
    writeFileSync(ownerPath, '');
    type Held = { held: number; overlaps: number };
    const observer = run<{ seen: number; empty: number }>(OBSERVER, [lockPath, donePath]);
    const contend = () => run<Held>(CONTENDER, [lockPath, ownerPath, String(ROUNDS)]);
    const [a, b] = await Promise.all([contend(), contend()]);
    writeFileSync(donePath, '');
    const looked = await observer;
    expect(looked.seen).toBeGreaterThan(0);
    expect(looked.empty).toBe(0);
    // Both got the lock many times (the contention was real), and never at once.
    expect(a.held).toBeGreaterThan(0);
    expect(b.held).toBeGreaterThan(0);
    expect(a.overlaps + b.overlaps).toBe(0);
    expect(readdirSync(dir).sort()).toEqual(['done', 'owner']);
  }, 120_000);
});
