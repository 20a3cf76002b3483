/**
 * The hook spool: what the Claude Code plugin's hooks observed, kept under the storage root until
 * assembly and the view read it. `aszcol hook` appends here when the service does not answer, and
 * the service's hook intake appends here when it does, so both paths end in the same files.
 *
 *   <root>/_hooks/spool/<session>.jsonl   one observation per line, appended, never rewritten
 *   <root>/_hooks/spool/_unplaced.jsonl   observations with no usable session id
 *   <root>/_hooks/endpoint.json           where the running service takes observations
 *   <root>/_hooks/hook.log                what a hook could not do (it never tells the agent)
 *
 * A line is written whole, in one write to a file opened for appending, and synced before the
 * writer returns: two hooks of parallel tool calls may append at the same moment. A reader takes a
 * file only up to its last newline, so a line still being written waits for the next read.
 * Each writer holds a marker while it has a spool file open (hook-spool-writers.ts), so the trim
 * knows when a spool file it renamed aside can no longer grow.
 */
import { createHash } from 'node:crypto';
import { mkdir, open, readFile, readdir, rm, unlink } from 'node:fs/promises';
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT_NAMES, entryNameProblem } from './entry-names.js';
import { beginSpoolWrite, endSpoolWrite } from './hook-spool-writers.js';

export const HOOKS_DIR = ROOT_NAMES.hooks;
export const UNPLACED_SPOOL = '_unplaced';
/** The largest line either writer appends; the observation is shaped to fit (hook-event.ts). */
export const MAX_SPOOL_LINE = 16 * 1024;

export const hooksDir = (root: string) => join(root, HOOKS_DIR);
export const spoolDir = (root: string) => join(root, HOOKS_DIR, 'spool');
export const endpointPath = (root: string) => join(root, HOOKS_DIR, 'endpoint.json');
export const hookLogPath = (root: string) => join(root, HOOKS_DIR, 'hook.log');

/**
 * Where a hook appends when the storage root cannot be written (read-only, full, a permission
 * taken away): a directory of the machine's temporary area named for the root, drained into the
 * root by the next hook that can write there.
 */
export function fallbackRoot(root: string): string {
  return join(tmpdir(), `aszcol-hooks-${createHash('sha256').update(root).digest('hex').slice(0, 12)}`);
}

/** The spool file an observation of this session goes to: the session's own, or `_unplaced` for a missing or unusable id. */
export function spoolName(session: string | undefined): string {
  return session !== undefined && entryNameProblem(session) === undefined ? session : UNPLACED_SPOOL;
}

/** Appends one line (a newline is added) durably: one write, then fsync. */
export async function appendSpoolLine(root: string, session: string | undefined, line: string): Promise<string> {
  const dir = spoolDir(root);
  await mkdir(dir, { recursive: true });
  const path = join(dir, `${spoolName(session)}.jsonl`);
  const marker = beginSpoolWrite(dir);
  try {
    const fh = await open(path, 'a', 0o644);
    try {
      await fh.write(line.endsWith('\n') ? line : line + '\n');
      await fh.sync();
    } finally {
      await fh.close();
    }
  } finally {
    endSpoolWrite(marker);
  }
  return path;
}

/** The same append, synchronously: for a hook at the end of its budget, which has no time left to wait for anything else. */
export function appendSpoolLineSync(root: string, session: string | undefined, line: string): void {
  mkdirSync(spoolDir(root), { recursive: true });
  const marker = beginSpoolWrite(spoolDir(root));
  try {
    const fd = openSync(join(spoolDir(root), `${spoolName(session)}.jsonl`), 'a', 0o644);
    try {
      writeSync(fd, line.endsWith('\n') ? line : line + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } finally {
    endSpoolWrite(marker);
  }
}

/**
 * Moves what an earlier hook left in the fallback area into the root, file by file: every complete
 * line is appended to the root's spool before the fallback file is removed, so a crash between the
 * two repeats lines (the reader drops repeats by id) and never loses one.
 */
export async function drainFallback(root: string): Promise<number> {
  const from = spoolDir(fallbackRoot(root));
  let names: string[];
  try {
    names = await readdir(from);
  } catch {
    return 0;
  }
  let moved = 0;
  for (const name of names) {
    if (!name.endsWith('.jsonl')) continue;
    const path = join(from, name);
    const text = await readFile(path, 'utf8');
    const complete = text.slice(0, text.lastIndexOf('\n') + 1);
    if (complete) {
      const target = join(spoolDir(root), name);
      await mkdir(spoolDir(root), { recursive: true });
      const marker = beginSpoolWrite(spoolDir(root));
      try {
        const fh = await open(target, 'a', 0o644);
        try {
          await fh.write(complete);
          await fh.sync();
        } finally {
          await fh.close();
        }
      } finally {
        endSpoolWrite(marker);
      }
      moved += complete.split('\n').length - 1;
    }
    await unlink(path);
  }
  await rm(fallbackRoot(root), { recursive: true, force: true });
  return moved;
}

/** Appends a line to the hook log; a log that cannot be written is given up on (the hook must not fail). */
export async function logHookProblem(root: string, at: string, message: string): Promise<void> {
  try {
    await mkdir(hooksDir(root), { recursive: true });
    const fh = await open(hookLogPath(root), 'a', 0o644);
    try {
      await fh.write(`${at} ${message.replace(/\s+/g, ' ').slice(0, 2000)}\n`);
    } finally {
      await fh.close();
    }
  } catch {
    // Nowhere left to say it: the hook's exit status stays 0 regardless.
  }
}

export interface HookEndpoint {
  url: string;
  pid: number;
}

/** The running service's intake, if its endpoint file is there and readable. */
export function readHookEndpoint(root: string): HookEndpoint | undefined {
  try {
    const v = JSON.parse(readFileSync(endpointPath(root), 'utf8')) as Partial<HookEndpoint>;
    return typeof v.url === 'string' && typeof v.pid === 'number' ? { url: v.url, pid: v.pid } : undefined;
  } catch {
    return undefined;
  }
}

export interface SpoolLine {
  line: number;
  value?: unknown;
  /** Why the line is not an observation (it is kept as evidence, not dropped). */
  problem?: string;
  text?: string;
}

/** Every complete line of one session's spool file, parsed; a line that is not JSON says why. Nothing when there is no file. */
export function readSpool(root: string, session: string): SpoolLine[] {
  let text: string;
  try {
    text = readFileSync(join(spoolDir(root), `${spoolName(session)}.jsonl`), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
  const out: SpoolLine[] = [];
  const lines = text.slice(0, text.lastIndexOf('\n') + 1).split('\n');
  lines.pop();
  lines.forEach((l, i) => {
    try {
      out.push({ line: i + 1, value: JSON.parse(l) as unknown });
    } catch (err) {
      out.push({ line: i + 1, problem: `not JSON: ${(err as Error).message}`, text: l.slice(0, 200) });
    }
  });
  return out;
}
