/**
 * `_conversations/.landing/`: the root's landing epoch and the writers landing now, so a parse with
 * nothing new can tell from one directory listing and one small read that no session's evidence
 * advanced since a parse found them all settled, instead of a stat of every session's directories.
 *
 * The protocol, every step unsynced (a reboot is told apart by the boot identity recorded beside it):
 * - A writer that lands or removes a session's evidence does it under the session's lock, taken
 *   through `SessionLock` (session-lock.ts): before the lock it creates its marker
 *   (`<pid>~<host>~<unique>.writing`); after its last change it writes a new epoch, then
 *   removes the marker. A crash leaves the marker, which keeps every parse on the long way until a
 *   parse finds its process gone, writes a new epoch and removes it (`sweepDeadWriters`).
 * - A whole-root parse reads the listing and the epoch before it looks at any session and again at
 *   its end; when no marker was there both times, the epoch did not move and every session was
 *   stamped, it records the epoch with the stamps (parse-all.ts). A writer whose marker came after
 *   the first read either moved the epoch or is still listed at the end, so no recorded epoch can
 *   hide a landing.
 * - The quick answer (cli/parse-quick.ts) trusts the stamps without a stat when the listing holds
 *   no marker and then the epoch and boot are the recorded ones.
 */
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname, uptime } from 'node:os';
import { join } from 'node:path';
import { ROOT_NAMES } from './entry-names.js';
import { processAlive } from '../util/process-alive.js';
import { removeDeadTemporaries, tempPath } from './write-once.js';

const landingDir = (root: string) => join(root, ROOT_NAMES.conversations, '.landing');
const EPOCH = 'epoch';
const WRITING = '.writing';

/** What a parse compares: the epoch (`''` before any writer wrote one), the markers listed, and this boot. */
export interface LandingNow {
  epoch: string;
  writers: string[];
  boot: string;
}

/** This machine's boot: Linux's boot id, else the boot time to the minute (a mismatch only costs the long way). */
export function bootIdentity(): string {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim();
  } catch {
    return `up-${Math.round((Date.now() / 1000 - uptime()) / 60)}`;
  }
}

/** The markers first, then the epoch: a writer that finished between the two reads has moved the epoch. */
export function landingNow(root: string): LandingNow {
  let names: string[] = [];
  try {
    names = readdirSync(landingDir(root));
  } catch {
    /* no writer of this version landed yet */
  }
  let epoch = '';
  try {
    epoch = readFileSync(join(landingDir(root), EPOCH), 'utf8');
  } catch {
    /* none yet */
  }
  return { epoch, writers: names.filter((n) => n.endsWith(WRITING)).sort(), boot: bootIdentity() };
}

/** A write that failed without naming its file (ENOSPC from write(2)) is said with the file, as every writer's errors are. */
function naming<T>(path: string, fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.path || !e.code) throw e;
    throw Object.assign(new Error(`cannot write the landing mark ${path}: ${e.message}`), { code: e.code, syscall: e.syscall, path });
  }
}

const unique = () => `${Date.now().toString(36)}${Math.random().toString(36).slice(2, 10)}`;

/** `fn` on a file in the landing directory, which is made on the first ENOENT (not looked for on every call: writers pay per session). */
function inLandingDir(root: string, path: string, fn: () => void): void {
  try {
    naming(path, fn);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    mkdirSync(landingDir(root), { recursive: true });
    naming(path, fn);
  }
}

/** A new epoch, replacing the old one whole. */
export function moveEpoch(root: string): void {
  const dir = landingDir(root);
  // tempPath's shape names the writer's pid, so a killed writer's temporary is swept (sweepDeadWriters).
  const tmp = tempPath(join(dir, EPOCH));
  inLandingDir(root, tmp, () => writeFileSync(tmp, `${process.pid}-${unique()}`));
  renameSync(tmp, join(dir, EPOCH));
}

/** A mark's name says its writer: `<pid>~<host, URI-encoded>~<unique>.writing`, made empty in one call. */
const markName = () => `${process.pid}~${encodeURIComponent(hostname())}~${unique()}${WRITING}`;

/** A writer's mark, made before it takes a session's lock. */
export class LandingMark {
  private constructor(private readonly path: string | undefined) {}

  static begin(root: string): LandingMark {
    const path = join(landingDir(root), markName());
    inLandingDir(root, path, () => closeSync(openSync(path, 'wx')));
    return new LandingMark(path);
  }

  /**
   * After the writer's last change: a new epoch, then the mark gone. An epoch that cannot be written
   * (a full disk) leaves the mark, so parses keep looking at each session until a parse sweeps it
   * once this process is gone; the writer's own outcome is not changed by it.
   */
  finish(root: string): void {
    try {
      moveEpoch(root);
    } catch {
      return;
    }
    this.abandon();
  }

  /** The lock was not taken: nothing was changed, the mark goes. */
  abandon(): void {
    if (!this.path) return;
    try {
      unlinkSync(this.path);
    } catch {
      /* already swept */
    }
  }
}

/**
 * Removes the marks of writers on this host whose process is gone, each after a new epoch (what the
 * dead writer changed is then seen by the long way's own look at the sessions), and the epoch
 * temporaries a writer killed mid-write left. A mark of another host, or of a live process, stays.
 */
export function sweepDeadWriters(root: string): number {
  let swept = 0;
  const dir = landingDir(root);
  removeDeadTemporaries(dir, (name) => name.startsWith(`.tmp-${EPOCH}-`));
  for (const name of landingNow(root).writers) {
    const [pidText, host] = name.split('~');
    const pid = Number(pidText);
    if (host === undefined || decodeURIComponent(host) !== hostname() || !Number.isInteger(pid) || pid <= 0 || processAlive(pid)) continue;
    moveEpoch(root);
    try {
      unlinkSync(join(dir, name));
      swept++;
    } catch {
      /* another parse swept it */
    }
  }
  return swept;
}
