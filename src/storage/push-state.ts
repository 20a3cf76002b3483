/**
 * `push.state` at the storage root: what the `otlp` exporter has sent, per receiver.
 *
 * ```text
 * schema 1
 * updated_at 2026-09-11T10:00:00Z
 * endpoint grpc://127.0.0.1:11800
 * pushed <session>/streams/main/transcript-20260911T095959.000000000Z-000001.sd 9f2c…(64 hex)
 * pushed _metrics/metrics-20260911T095959.000000000Z-000001-otlp.pb 41d0…
 * endpoint http://127.0.0.1:4318
 * pushed …
 * ```
 *
 * Each `pushed` line belongs to the `endpoint` line above it (`grpc://host:port`, `grpcs://…`
 * with TLS, or the HTTP base URL), so a new endpoint starts with nothing sent and gets
 * everything. A line is added only after the request carrying the file succeeded.
 *
 * Lines are appended, one `endpoint` line and the request's files in one write, then synced:
 * recording a request costs its own lines, not a rewrite of the whole history. A torn last line
 * (a crash mid-append) has no newline and is ignored, which leaves its files unsent: they go
 * again. When the appended `endpoint` lines outnumber the endpoints by far, the file is
 * rewritten whole, grouped by endpoint, atomically.
 *
 * A receiver that answers a partial success has taken the request (OTLP says not to send it
 * again) while rejecting some of its records without saying which. Its files are recorded as
 * pushed, and each also gets asz 0.6's `rejected <path>` line, after a `reason <text>` line with
 * the receiver's words (asz passes over a line kind it does not know, so its reader still reads
 * the file):
 *
 * ```text
 * endpoint grpc://127.0.0.1:11800
 * pushed <session>/streams/main/transcript-….sd 9f2c…
 * reason the receiver rejected 1 of the request's log records: digest mismatch
 * rejected <session>/streams/main/transcript-….sd
 * ```
 *
 * A `reason` holds for the `rejected` lines below it, up to the next `reason` or `endpoint` line.
 *
 * Files an exporter sent with content withheld (its `hide`) follow a `hide` line naming the
 * categories, comma-separated; it holds for the `pushed` lines below it, up to the next `hide` or
 * `endpoint` line. A file pushed under no `hide` line went whole. A pusher whose `hide` differs
 * from the one a file went under sends the file again (`sentUnder`):
 *
 * ```text
 * endpoint grpc://127.0.0.1:11800
 * hide tool_outputs,user_prompts
 * pushed <session>/streams/main/transcript-….sd 9f2c…
 * ```
 *
 * A spool file removed once every receiver took it (spool-removal.ts) is forgotten here too,
 * for every endpoint, but only after it is gone: forgetting a file that is still there would send
 * it again.
 */
import { closeSync, fsyncSync, openSync, readFileSync, readSync, statSync, truncateSync, writeSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { FileLock } from './lock.js';
import { replaceAtomically } from './write-once.js';
import { AszError } from '../util/errors.js';
import { ROOT_NAMES } from './entry-names.js';

export const PUSH_STATE = ROOT_NAMES.pushState;
const LOCK = ROOT_NAMES.pushStateLock;
const DIGEST = /^[0-9a-f]{64}$/;
/** How long a writer waits for another process's short append or rewrite. */
const LOCK_WAIT_MS = 5000;

export interface PushedFile {
  /** Relative to the storage root, forward slashes. */
  rel: string;
  /** SHA-256 of the bytes sent, hex. */
  digest: string;
}

/** Files a receiver took in a request it answered with a partial success. */
export interface Rejection {
  /** The receiver's words (its error message and count), on one line. */
  reason: string;
  files: readonly string[];
}

/** One file a receiver rejected, as push.state lists it. */
export interface RejectedFile {
  endpoint: string;
  rel: string;
  reason: string;
}

/** A reason as one line of bounded length: a receiver's message is not ours to trust. */
export function reasonLine(text: string): string {
  const one = text.replace(/\p{Cc}+/gu, ' ').trim() || 'no reason given';
  return one.length > 500 ? `${one.slice(0, 497)}...` : one;
}

/** A push.state that does not read. */
export class PushStateError extends AszError {
  constructor(file: string, line: number, reason: string) {
    super(reason, `${file}:${line}`);
  }
}

export class PushState {
  readonly path: string;
  private readonly lockPath: string;
  private readonly byEndpoint = new Map<string, Map<string, string>>();
  /** Per endpoint: file → the `hide` it went under (sorted, comma-separated), for files that went with a non-empty one. */
  private readonly hideBy = new Map<string, Map<string, string>>();
  /** Per endpoint: rejected file → the receiver's reason. */
  private readonly rejectedBy = new Map<string, Map<string, string>>();
  /** `endpoint` lines in the file, against distinct endpoints: decides when to rewrite. */
  private endpointLines = 0;
  /** The file's size as last read or written by us: a different size means another writer. */
  private knownSize = -1;
  /**
   * Its inode then: a rewrite installs a new file by rename, whose size may by chance equal the
   * old one's, so the size alone could hide another writer's rewrite.
   */
  private knownIno = -1;

  constructor(readonly root: string) {
    this.path = join(root, PUSH_STATE);
    this.lockPath = join(root, LOCK);
  }

  /** What was sent to `endpoint`: path → digest. Re-reads the file when someone else changed it. */
  sent(endpoint: string): ReadonlyMap<string, string> {
    this.refresh();
    return this.byEndpoint.get(endpoint) ?? new Map();
  }

  /**
   * What was sent to `endpoint` under exactly the withholding `hide` names (none: sent whole):
   * path → digest. A file that went under another `hide` is left out, so it is sent again.
   */
  sentUnder(endpoint: string, hide: readonly string[]): ReadonlyMap<string, string> {
    const all = this.sent(endpoint);
    const key = hideKey(hide);
    const under = this.hideBy.get(endpoint);
    if (!under?.size && key === '') return all;
    const out = new Map<string, string>();
    for (const [rel, digest] of all) if ((under?.get(rel) ?? '') === key) out.set(rel, digest);
    return out;
  }

  /** The `hide` a file went to `endpoint` under: its categories, none when it went whole or was never sent. */
  hideOf(endpoint: string, rel: string): string[] {
    this.refresh();
    const key = this.hideBy.get(endpoint)?.get(rel);
    return key ? key.split(',') : [];
  }

  endpoints(): string[] {
    this.refresh();
    return [...this.byEndpoint.keys()];
  }

  /** Files `endpoint` took while rejecting some of their records: path → reason. */
  rejected(endpoint: string): ReadonlyMap<string, string> {
    this.refresh();
    return this.rejectedBy.get(endpoint) ?? new Map();
  }

  /** Every rejected file of every endpoint, in the order the file lists them. */
  allRejected(): RejectedFile[] {
    this.refresh();
    const out: RejectedFile[] = [];
    for (const [endpoint, m] of this.rejectedBy) for (const [rel, reason] of m) out.push({ endpoint, rel, reason });
    return out;
  }

  /** The lines one request appends: its endpoint, its files, and its rejection if it had one. */
  private appendText(endpoint: string, files: readonly PushedFile[], rejection: Rejection | undefined, hide: string): string {
    let text = this.knownSize <= 0 ? 'schema 1\n' : '';
    text += `endpoint ${endpoint}\n` + (hide ? `hide ${hide}\n` : '') + files.map((f) => `pushed ${f.rel} ${f.digest}\n`).join('');
    if (rejection?.files.length) text += `reason ${reasonLine(rejection.reason)}\n` + rejection.files.map((rel) => `rejected ${rel}\n`).join('');
    return text;
  }

  /** What an append means in memory, once it is durable. */
  private noteAppended(endpoint: string, files: readonly PushedFile[], rejection: Rejection | undefined, hide: string): void {
    this.endpointLines++;
    const m = this.byEndpoint.get(endpoint) ?? this.byEndpoint.set(endpoint, new Map()).get(endpoint)!;
    for (const f of files) m.set(f.rel, f.digest);
    const h = this.hideBy.get(endpoint);
    if (hide) {
      const under = h ?? this.hideBy.set(endpoint, new Map()).get(endpoint)!;
      for (const f of files) under.set(f.rel, hide);
    } else if (h) for (const f of files) h.delete(f.rel);
    if (rejection?.files.length) {
      const r = this.rejectedBy.get(endpoint) ?? this.rejectedBy.set(endpoint, new Map()).get(endpoint)!;
      for (const rel of rejection.files) r.set(rel, reasonLine(rejection.reason));
    }
  }

  /**
   * Records files as sent to `endpoint`, durably, before returning; `rejection`: the files of them
   * the receiver took with a partial success; `hide`: the categories withheld from them.
   */
  record(endpoint: string, files: readonly PushedFile[], rejection?: Rejection, hide: readonly string[] = []): void {
    if (files.length === 0) return;
    for (const f of files) checkEntry(f);
    const withheld = hideKey(hide);
    checkRejection(files, rejection);
    if (/\s/.test(endpoint)) throw new AszError(`an endpoint with white space cannot be recorded: ${JSON.stringify(endpoint)}`, this.path);
    this.locked(() => {
      this.refresh();
      this.dropTornTail();
      const text = this.appendText(endpoint, files, rejection, withheld);
      try {
        const fd = openSync(this.path, 'a', 0o644);
        try {
          const buf = Buffer.from(text, 'utf8');
          let done = 0;
          while (done < buf.length) done += writeSync(fd, buf, done, buf.length - done);
          fsyncSync(fd);
        } finally {
          closeSync(fd);
        }
      } catch (err) {
        throw cannotRecord(err, this.path);
      }
      this.noteWritten();
      this.noteAppended(endpoint, files, rejection, withheld);
      if (this.endpointLines > 4 * this.byEndpoint.size + 64) this.rewrite();
    });
  }

  private chain: Promise<void> = Promise.resolve();

  /**
   * The same as `record`, with the write and its sync off the calling thread (a pusher's event
   * loop also serves the request on the wire). Calls are applied in order; the promise settles
   * once the lines are durable.
   */
  recordAsync(endpoint: string, files: readonly PushedFile[], rejection?: Rejection, hide: readonly string[] = []): Promise<void> {
    if (files.length === 0) return this.chain;
    for (const f of files) checkEntry(f);
    let withheld: string;
    try {
      withheld = hideKey(hide);
    } catch (err) {
      return Promise.reject(err as Error);
    }
    checkRejection(files, rejection);
    if (/\s/.test(endpoint)) return Promise.reject(new AszError(`an endpoint with white space cannot be recorded: ${JSON.stringify(endpoint)}`, this.path));
    const run = async () => {
      const lock = new FileLock(this.lockPath);
      if (!(await lock.acquireWithin(LOCK_WAIT_MS))) lock.acquire(); // throws LockBusyError naming the holder
      try {
        this.refresh();
        this.dropTornTail();
        const text = this.appendText(endpoint, files, rejection, withheld);
        try {
          const fh = await open(this.path, 'a', 0o644);
          try {
            // A short write (the disk filled mid-way) is not an error by itself: write on, and the disk says why.
            const buf = Buffer.from(text, 'utf8');
            for (let done = 0; done < buf.length;) done += (await fh.write(buf, done, buf.length - done)).bytesWritten;
            await fh.sync();
          } finally {
            await fh.close();
          }
        } catch (err) {
          throw cannotRecord(err, this.path);
        }
        this.noteWritten();
        this.noteAppended(endpoint, files, rejection, withheld);
        if (this.endpointLines > 4 * this.byEndpoint.size + 64) this.rewrite();
      } finally {
        lock.release();
      }
    };
    const p = this.chain.then(run);
    this.chain = p.catch(() => undefined);
    return p;
  }

  /**
   * Forgets files that are no longer in the root, for every endpoint, rewriting the file; returns
   * how many lines went. Call it only once the files are gone (see the header).
   */
  forgetFiles(rels: ReadonlySet<string>): number {
    if (rels.size === 0) return 0;
    return this.locked(() => {
      this.refresh();
      let n = 0;
      for (const m of this.byEndpoint.values()) for (const rel of rels) if (m.delete(rel)) n++;
      for (const m of this.rejectedBy.values()) for (const rel of rels) m.delete(rel);
      for (const m of this.hideBy.values()) for (const rel of rels) m.delete(rel);
      if (n > 0) this.rewrite();
      return n;
    });
  }

  /** Forgets everything sent to `endpoint` (so it is sent again), rewriting the file. */
  forget(endpoint: string): void {
    this.locked(() => {
      this.refresh();
      const had = this.byEndpoint.delete(endpoint);
      this.hideBy.delete(endpoint);
      if (this.rejectedBy.delete(endpoint) || had) this.rewrite();
    });
  }

  /** A crash mid-append leaves a last line with no newline: cut it off so the next append starts clean. */
  private dropTornTail(): void {
    if (this.knownSize <= 0) return;
    const last = Buffer.alloc(1);
    const fd = openSync(this.path, 'r');
    try {
      readSync(fd, last, 0, 1, this.knownSize - 1);
    } finally {
      closeSync(fd);
    }
    if (last[0] === 10) return;
    const buf = readFileSync(this.path);
    const end = buf.lastIndexOf(10) + 1;
    if (end === buf.length) return;
    truncateSync(this.path, end);
    this.knownSize = end;
  }

  private rewrite(): void {
    const lines = ['schema 1', `updated_at ${new Date().toISOString().replace(/\.\d{3}Z$/, 'Z')}`];
    for (const [endpoint, files] of this.byEndpoint) {
      lines.push(`endpoint ${endpoint}`);
      // Files that went whole first, then those of each hide, under their hide line.
      const under = this.hideBy.get(endpoint);
      const byHide = new Map<string, string[]>();
      for (const [rel, digest] of files) {
        const hide = under?.get(rel);
        if (hide) (byHide.get(hide) ?? byHide.set(hide, []).get(hide)!).push(`pushed ${rel} ${digest}`);
        else lines.push(`pushed ${rel} ${digest}`);
      }
      for (const [hide, pushed] of byHide) lines.push(`hide ${hide}`, ...pushed);
      const byReason = new Map<string, string[]>();
      for (const [rel, reason] of this.rejectedBy.get(endpoint) ?? []) (byReason.get(reason) ?? byReason.set(reason, []).get(reason)!).push(rel);
      for (const [reason, rels] of byReason) lines.push(`reason ${reason}`, ...rels.map((rel) => `rejected ${rel}`));
    }
    replaceAtomically(this.path, lines.join('\n') + '\n');
    this.noteWritten();
    this.endpointLines = this.byEndpoint.size;
  }

  /** What we wrote is what we know: no need to read it back. */
  private noteWritten(): void {
    const st = statSync(this.path);
    this.knownSize = st.size;
    this.knownIno = st.ino;
  }

  private refresh(): void {
    let size: number, ino: number;
    try {
      const st = statSync(this.path);
      size = st.size;
      ino = st.ino;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      size = 0;
      ino = -1;
    }
    if (size === this.knownSize && ino === this.knownIno) return;
    this.byEndpoint.clear();
    this.rejectedBy.clear();
    this.hideBy.clear();
    this.endpointLines = 0;
    this.knownSize = size;
    this.knownIno = ino;
    if (size === 0) return;
    const text = readFileSync(this.path, 'utf8');
    this.knownSize = Buffer.byteLength(text);
    const lines = text.split('\n');
    // The last element is what follows the last newline: empty, or a torn append to ignore.
    lines.pop();
    let current: Map<string, string> | undefined;
    let currentEndpoint = 'unknown';
    let reason = 'no reason recorded';
    let hide = '';
    lines.forEach((line, i) => {
      const n = i + 1;
      if (line === '') return;
      const sp = line.indexOf(' ');
      const key = sp < 0 ? line : line.slice(0, sp);
      const rest = sp < 0 ? '' : line.slice(sp + 1);
      switch (key) {
        case 'schema':
          if (rest !== '1') throw new PushStateError(this.path, n, `schema ${JSON.stringify(rest)} is not one this build reads (1)`);
          return;
        case 'updated_at':
          return;
        case 'endpoint':
          if (!rest) throw new PushStateError(this.path, n, 'an endpoint line names no endpoint');
          current = this.byEndpoint.get(rest) ?? this.byEndpoint.set(rest, new Map()).get(rest)!;
          currentEndpoint = rest;
          reason = 'no reason recorded'; // asz writes rejected lines without one
          hide = '';
          this.endpointLines++;
          return;
        case 'pushed': {
          const cut = rest.lastIndexOf(' ');
          const rel = rest.slice(0, cut),
            digest = rest.slice(cut + 1);
          if (cut <= 0 || !DIGEST.test(digest)) throw new PushStateError(this.path, n, 'a pushed line is not "pushed <path> <sha256>"');
          // Files pushed before any endpoint line: an older writer that named no receiver.
          if (!current) current = this.byEndpoint.get('unknown') ?? this.byEndpoint.set('unknown', new Map()).get('unknown')!;
          current.set(rel, digest);
          const under = this.hideBy.get(currentEndpoint);
          if (hide) (under ?? this.hideBy.set(currentEndpoint, new Map()).get(currentEndpoint)!).set(rel, hide);
          else under?.delete(rel);
          return;
        }
        case 'hide':
          try {
            hide = hideKey(rest ? rest.split(',') : []);
          } catch (err) {
            throw new PushStateError(this.path, n, `a hide line is not "hide <category>,…": ${(err as Error).message}`);
          }
          return;
        case 'reason':
          reason = rest || 'no reason given';
          return;
        case 'rejected': {
          if (!rest) throw new PushStateError(this.path, n, 'a rejected line names no file');
          const r = this.rejectedBy.get(currentEndpoint) ?? this.rejectedBy.set(currentEndpoint, new Map()).get(currentEndpoint)!;
          r.set(rest, reason);
          return;
        }
        default:
          // A later writer's line kind is passed over, as asz does with ours.
          return;
      }
    });
  }

  private locked<T>(fn: () => T): T {
    const lock = new FileLock(this.lockPath);
    if (!lock.acquireWithinSync(LOCK_WAIT_MS)) lock.acquire(); // throws LockBusyError naming the holder
    try {
      return fn();
    } finally {
      lock.release();
    }
  }
}

/** A hide list as push.state writes it: distinct names, sorted, comma-separated; empty for none. */
function hideKey(hide: readonly string[]): string {
  for (const c of hide) if (!/^[a-z][a-z0-9_]*$/.test(c)) throw new AszError(`not a category name: ${JSON.stringify(c)}`, PUSH_STATE);
  return [...new Set(hide)].sort().join(',');
}

function checkRejection(files: readonly PushedFile[], rejection: Rejection | undefined): void {
  if (!rejection) return;
  const sent = new Set(files.map((f) => f.rel));
  for (const rel of rejection.files)
    if (!sent.has(rel)) throw new AszError(`a rejected file must be one of the request's files: ${JSON.stringify(rel)}`, PUSH_STATE);
}

/** A failed append (a full or read-only disk) as an error naming push.state: the files were sent, and go again next time. */
function cannotRecord(err: unknown, path: string): AszError {
  return new AszError(`cannot record what was sent (it is sent again next time): ${(err as Error).message}`, path);
}

function checkEntry(f: PushedFile): void {
  if (!f.rel || /[\n\r]/.test(f.rel) || f.rel.startsWith('/')) throw new AszError(`not a root-relative path: ${JSON.stringify(f.rel)}`, PUSH_STATE);
  if (!DIGEST.test(f.digest)) throw new AszError(`not a SHA-256 digest: ${JSON.stringify(f.digest)}`, PUSH_STATE);
}

/** The lock a pusher holds while it sends to one endpoint, so two processes never send the same files at once. */
export function endpointLockPath(root: string, endpoint: string): string {
  let h = 0x811c9dc5;
  for (const c of Buffer.from(endpoint)) h = Math.imul(h ^ c, 0x01000193) >>> 0;
  return join(root, `.push-${h.toString(16).padStart(8, '0')}.lock`);
}
