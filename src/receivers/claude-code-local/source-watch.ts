/**
 * Watches the source root between passes, so a line Claude Code appends is collected at once
 * instead of at the next interval. Directories are watched one by one (inotify on Linux): the root,
 * every project directory and each discovered session's directories that hold sources. An event on
 * a known source names its session; anything else (a new session, a new helper's transcript, a
 * directory that came or went) asks for a whole pass. The interval's whole passes stay the safety
 * net: a missed event costs at most the interval, never data.
 */
import { watch, type FSWatcher } from 'node:fs';
import { dirname, join } from 'node:path';
import type { DiscoveryResult } from '../../adapters/claude-code/discovery.js';
import { MAIN_TRANSCRIPT, SESSION_ID } from '../../adapters/claude-code/paths.js';
import { listDir } from '../../storage/layout.js';

/** Events this close together are reported as one: a line is often written in more than one write. */
const SETTLE_MS = 20;
/** Directories watched at most; beyond them the interval alone finds what changed. */
export const DEFAULT_MAX_WATCHED_DIRS = 4096;

/** Where a directory sits: what an event there means. */
type Place = 'root' | 'project' | 'session';

interface Watched {
  watcher: FSWatcher;
  place: Place;
  /** Files of this directory that are known sources, by name: their session. */
  sources: Map<string, string>;
}

export class SourceWatch {
  private readonly dirs = new Map<string, Watched>();
  private pending: Set<string> | 'whole' | undefined;
  private settle: NodeJS.Timeout | undefined;
  private problemSaid = false;

  constructor(
    private readonly root: string,
    /** Sessions whose sources moved, or undefined when a whole pass must look. */
    private readonly onMoved: (sessions: string[] | undefined) => void,
    private readonly onProblem: (message: string) => void,
    private readonly maxDirs = DEFAULT_MAX_WATCHED_DIRS,
  ) {}

  /** After a whole pass's discovery: watch what it found, stop watching what is gone. */
  update(found: DiscoveryResult): void {
    const want = new Map<string, { place: Place; sources: Map<string, string> }>();
    const dir = (path: string, place: Place) => {
      let d = want.get(path);
      if (!d) want.set(path, (d = { place, sources: new Map() }));
      return d;
    };
    dir(this.root, 'root');
    // Every project directory, also one with no session yet: a new session's transcript appears in one.
    for (const name of listDir(this.root)) dir(join(this.root, name), 'project');
    for (const s of found.sessions) {
      for (const src of s.sources) {
        const parent = dirname(src.path);
        const inProject = parent === join(this.root, src.projectDir);
        // A session's own directory too, where its helpers' directories appear.
        if (!inProject) dir(join(this.root, src.projectDir, s.id), 'session');
        dir(parent, inProject ? 'project' : 'session').sources.set(src.path.slice(parent.length + 1), s.id);
      }
    }
    for (const [path, w] of this.dirs) {
      if (want.has(path)) continue;
      w.watcher.close();
      this.dirs.delete(path);
    }
    for (const [path, d] of want) {
      const have = this.dirs.get(path);
      if (have) {
        have.sources = d.sources;
        continue;
      }
      if (this.dirs.size >= this.maxDirs) {
        this.say(`watching stops at ${this.maxDirs} directories: changes in the others are found by the interval's pass`);
        break;
      }
      this.add(path, d.place, d.sources);
    }
  }

  private add(path: string, place: Place, sources: Map<string, string>): void {
    let watcher: FSWatcher;
    try {
      watcher = watch(path, { persistent: false }, (_event, name) => this.event(path, typeof name === 'string' ? name : undefined));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      // Gone since discovery: the next pass finds out. Out of watches (ENOSPC): the interval finds the rest.
      if (code !== 'ENOENT' && code !== 'ENOTDIR') this.say(`cannot watch ${path} (${(err as Error).message}): changes there are found by the interval's pass`);
      return;
    }
    watcher.on('error', () => {
      // The directory went away: a whole pass finds out what that means; the next update watches again.
      watcher.close();
      this.dirs.delete(path);
      this.moved(undefined);
    });
    this.dirs.set(path, { watcher, place, sources });
  }

  private event(dir: string, name: string | undefined): void {
    const w = this.dirs.get(dir);
    if (!w) return;
    const session = name === undefined ? undefined : w.sources.get(name);
    if (session !== undefined) this.moved([session]);
    // A project directory holds more than sessions (memory/, an index file): only a session's names ask for a whole pass.
    else if (w.place !== 'project' || name === undefined || MAIN_TRANSCRIPT.test(name) || SESSION_ID.test(name)) this.moved(undefined);
  }

  private moved(sessions: string[] | undefined): void {
    if (!sessions) this.pending = 'whole';
    else if (this.pending !== 'whole') {
      this.pending ??= new Set();
      for (const s of sessions) this.pending.add(s);
    }
    this.settle ??= setTimeout(() => {
      const p = this.pending;
      this.pending = undefined;
      this.settle = undefined;
      this.onMoved(p === 'whole' || p === undefined ? undefined : [...p]);
    }, SETTLE_MS);
  }

  private say(message: string): void {
    if (this.problemSaid) return;
    this.problemSaid = true;
    this.onProblem(message);
  }

  /** How many directories are watched now. */
  get watched(): number {
    return this.dirs.size;
  }

  close(): void {
    clearTimeout(this.settle);
    this.settle = undefined;
    for (const w of this.dirs.values()) w.watcher.close();
    this.dirs.clear();
  }
}
