/**
 * `_metrics/spool.state` as a removal leaves it. The receiver keeps its counter for the next
 * spooled request there (`schema 1`, `next_seq N`), writes it lazily, and on start raises the
 * counter above the highest number it finds on disk. Once sent files are removed, the highest
 * numbers may be gone from the disk, so before a removal the counter is raised above every number
 * still there, durably: a number is never issued twice, even after a receiver that crashed before
 * writing its own copy.
 *
 * The rewrite also adds to `removed` (how many spool files removals have taken) and sets
 * `removed_at`, so the file's text always changes: a running receiver that sees spool.state
 * change counts the spool's bytes again, which is how it learns that room was made. Keys this
 * module does not know are kept as they are.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { formatKv, parseKv } from './kv-text.js';
import { fsyncDir, replaceAtomically } from './write-once.js';
import { AszError } from '../util/errors.js';

export const SPOOL_STATE = 'spool.state';

/** A spool.state this build does not write (another schema, a counter that is not a number). */
export class SpoolStateError extends AszError {
  constructor(
    readonly file: string,
    reason: string,
  ) {
    super(reason, file);
  }
}

/**
 * Raises `next_seq` to at least `atLeast` and counts `removed` more files, atomically and
 * durably (the directory entry included). Call it under the spool's lock, before the removal.
 */
export function noteRemoval(dir: string, atLeast: number, removed: number, now: Date = new Date()): void {
  const path = join(dir, SPOOL_STATE);
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const kv = parseKv(text);
  const schema = kv.get('schema') ?? '1';
  if (schema !== '1') throw new SpoolStateError(path, `schema ${JSON.stringify(schema)} is not one this build writes (1); nothing was removed`);
  const count = (key: string): number => {
    const v = kv.get(key);
    if (v === undefined) return 0;
    if (!/^\d+$/.test(v)) throw new SpoolStateError(path, `${key} ${JSON.stringify(v)} is not a count; nothing was removed`);
    return Number(v);
  };
  const next = spoolStateText(kv, Math.max(count('next_seq') || 1, atLeast), [
    ['removed', String(count('removed') + removed)],
    ['removed_at', now.toISOString()],
  ]);
  replaceAtomically(path, next);
  fsyncDir(dir);
}

/**
 * spool.state's text with `schema 1` and `next_seq` set (and any `extra` keys), every other key of
 * `previous` kept in its place: what the receiver writes for its counter, and what a removal writes.
 */
export function spoolStateText(previous: string | Map<string, string>, nextSeq: number, extra: [string, string][] = []): string {
  const kv = typeof previous === 'string' ? parseKv(previous) : new Map(previous);
  kv.set('schema', '1');
  kv.set('next_seq', String(nextSeq));
  for (const [k, v] of extra) kv.set(k, v);
  return formatKv([...kv.entries()]);
}
