/**
 * Removing spool files (`_metrics/`) that every consumer has taken. A file goes only when:
 *
 * - every receiver named in `endpoints` has it in push.state, with the digest its bytes have now
 *   (read again here, not trusted from the name);
 * - every reader (a running prometheus exporter) has read it;
 * - it has been in the spool for `keepMs` (its modification time: when it was written);
 * - the caller's `keepIf` has no reason to keep it.
 *
 * Hashing happens outside the spool's lock. The removal itself holds `_metrics/.lock`, the lock
 * the receiver's landing thread takes to write the spool, a chunk of files at a time so the
 * receiver never waits long; under it each file is checked to be the one hashed, spool.state is
 * updated (spool-state.ts: the counter, and the change that makes a receiver count again), and
 * only then are the files unlinked and the directory synced.
 *
 * Crash order: the files go first, their push.state lines after (`forgetSent`). A crash between
 * the two leaves lines for files that are gone, which the next removal forgets; the other order
 * would leave files that are there but no longer recorded as sent, which would go out again.
 * Lines are forgotten only for names that are never issued again (the receiver's numbered
 * requests); a derived request's name comes back if its file is derived again, so its line stays
 * and keeps it from being sent twice.
 */
import { lstatSync, unlinkSync, type Stats } from 'node:fs';
import { listDir } from './layout.js';
import { readFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { FileLock } from './lock.js';
import { PushState } from './push-state.js';
import { noteRemoval } from './spool-state.js';
import { fsyncDir } from './write-once.js';

/** A consumer that is not a receiver in push.state: it confirms a file by having read it. */
export interface SpoolReaderCheck {
  /** For messages: `exporters/prometheus`. */
  name: string;
  hasRead(name: string): boolean;
}

export interface SpoolRemovalOptions {
  root: string;
  /** The spool's directory under the root (`_metrics`). */
  dir: string;
  /** The file names this removal may take: one kind of spool file. */
  names: RegExp;
  /** Receivers, as push.state names them, that must each have taken a file. At least one. */
  endpoints: readonly string[];
  readers?: readonly SpoolReaderCheck[];
  /** A file stays at least this long after it was written (ms). */
  keepMs: number;
  /** A reason to keep this file for now, or undefined. */
  keepIf?: (name: string) => string | undefined;
  /** The receiver's request number in a name, for spool.state's counter (undefined: not numbered). */
  seqOf: (name: string) => number | undefined;
  /** Forget removed files in push.state (see the header: only names never issued again). */
  forgetSent: boolean;
  /** Reused across removals, so push.state is read again only when it changed. */
  state?: PushState;
  now?: () => number;
  /** How long to wait for the spool's lock before leaving the removal to the next pass (ms). */
  lockWaitMs?: number;
  signal?: AbortSignal;
}

export interface SpoolRemovalReport {
  removed: number;
  removedBytes: number;
  /** Not yet taken by every consumer. */
  unsent: number;
  /** Taken by all, kept for `keepMs`. */
  young: number;
  /** Kept for a reason of the caller's. */
  held: number;
  /** push.state lines forgotten: the removed files', and those of files a stopped removal took. */
  forgotten: number;
  /** Another process held the spool's lock past the wait: the rest waits for the next removal. */
  busy: boolean;
  problems: string[];
}

/** Files removed per hold of the spool's lock. */
const CHUNK = 256;
const DEFAULT_LOCK_WAIT_MS = 2000;

interface Candidate {
  name: string;
  digest: string;
  st: Stats;
}

const sameFile = (a: Stats, b: Stats) => a.ino === b.ino && a.size === b.size && a.mtimeMs === b.mtimeMs;

export async function removeSentSpoolFiles(o: SpoolRemovalOptions): Promise<SpoolRemovalReport> {
  const r: SpoolRemovalReport = { removed: 0, removedBytes: 0, unsent: 0, young: 0, held: 0, forgotten: 0, busy: false, problems: [] };
  if (o.endpoints.length === 0) throw new Error('a spool removal needs at least one receiver to wait for');
  const dir = join(o.root, o.dir);
  const state = o.state ?? new PushState(o.root);
  const now = (o.now ?? Date.now)();
  const sent = o.endpoints.map((e) => ({ endpoint: e, files: state.sent(e) }));
  const names = listDir(dir)
    .filter((n) => o.names.test(n))
    .sort();

  // Which files every consumer has taken, and are old enough.
  const candidates: Candidate[] = [];
  for (const name of names) {
    const rel = `${o.dir}/${name}`;
    const digests = sent.map((s) => s.files.get(rel));
    if (digests.some((d) => d === undefined) || o.readers?.some((x) => !x.hasRead(name))) {
      r.unsent++;
      continue;
    }
    if (new Set(digests).size > 1) {
      r.problems.push(`${rel}: push.state records other bytes for it at ${sent.map((s) => s.endpoint).join(' and ')}; kept until a person looks at it`);
      continue;
    }
    if (o.keepIf?.(name) !== undefined) {
      r.held++;
      continue;
    }
    let st: Stats;
    try {
      st = lstatSync(join(dir, name));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') r.problems.push(`${rel}: cannot be read: ${(err as Error).message}`);
      continue;
    }
    if (!st.isFile()) continue;
    if (now - st.mtimeMs < o.keepMs) {
      r.young++;
      continue;
    }
    candidates.push({ name, digest: digests[0]!, st });
  }

  const removed = new Set<string>();
  for (let i = 0; i < candidates.length && !r.busy && !o.signal?.aborted; i += CHUNK) {
    // The bytes now must be the bytes every receiver took; read without holding the lock.
    const verified: Candidate[] = [];
    for (const c of candidates.slice(i, i + CHUNK)) {
      const rel = `${o.dir}/${c.name}`;
      let bytes: Buffer;
      try {
        bytes = await readFile(join(dir, c.name));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') r.problems.push(`${rel}: cannot be read: ${(err as Error).message}`);
        continue;
      }
      if (createHash('sha256').update(bytes).digest('hex') !== c.digest) {
        r.problems.push(`${rel}: its bytes are not the ones push.state records as sent; kept until a person looks at it`);
        continue;
      }
      verified.push(c);
    }
    if (verified.length === 0) continue;
    const lock = new FileLock(join(dir, '.lock'));
    if (!(await lock.acquireWithin(o.lockWaitMs ?? DEFAULT_LOCK_WAIT_MS, o.signal))) {
      r.busy = !o.signal?.aborted;
      break;
    }
    try {
      const going = verified.filter((c) => {
        try {
          return sameFile(lstatSync(join(dir, c.name)), c.st);
        } catch {
          return false; // removed meanwhile (another process's removal)
        }
      });
      if (going.length === 0) continue;
      let highest = 0;
      for (const n of listDir(dir)) highest = Math.max(highest, o.seqOf(n) ?? 0);
      noteRemoval(dir, highest + 1, going.length);
      for (const c of going) {
        const rel = `${o.dir}/${c.name}`;
        try {
          unlinkSync(join(dir, c.name));
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== 'ENOENT') r.problems.push(`${rel}: cannot be removed: ${(err as Error).message}`);
          continue;
        }
        removed.add(rel);
        r.removed++;
        r.removedBytes += c.st.size;
      }
      fsyncDir(dir);
    } catch (err) {
      r.problems.push((err as Error).message);
      break;
    } finally {
      lock.release();
    }
    await new Promise((res) => setImmediate(res));
  }

  if (o.forgetSent) {
    // The removed files, and any a stopped removal took before it could forget them.
    const present = new Set(listDir(dir));
    const gone = new Set(removed);
    for (const e of state.endpoints()) {
      for (const rel of state.sent(e).keys()) {
        if (!rel.startsWith(`${o.dir}/`)) continue;
        const name = rel.slice(o.dir.length + 1);
        if (!name.includes('/') && o.names.test(name) && !present.has(name)) gone.add(rel);
      }
    }
    r.forgotten = state.forgetFiles(gone);
  }
  return r;
}
