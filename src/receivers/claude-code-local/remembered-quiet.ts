/**
 * A one-shot collector's memory of its last pass, kept in the storage root between commands
 * (storage/collect-quiet.ts): where discovery found the sources, the sessions it left with nothing
 * to do, and the hook spools wholly landed. The next one-shot pass then costs a stat per directory
 * discovery listed, per source and per session directory, instead of listing every project and
 * session directory, every session's landed directories, and reading each cursor and index state.
 *
 * What the memory cannot see (a landed file, cursor or index removed by hand inside a session's
 * directories) waits until the session's sources or directory move; `aszcol verify` is the tool for
 * files removed by hand. A running collector keeps its own memory in memory (quiet-memo.ts).
 */
import { join } from 'node:path';
import { discover, type DiscoveredSession, type DiscoveryResult, type SessionFilter, type SourceFile } from '../../adapters/claude-code/discovery.js';
import { loadCollectQuiet, saveCollectQuiet, statNow, trustedStat, type CollectQuiet } from '../../storage/collect-quiet.js';

/** A session's signature as `QuietMemo` passes them around: its directory's stat, a newline, its sources' stats. */
type Signature = string | undefined;

/** A source as remembered: what its session and relative path say is left out (a path only when it is not the root's join). */
type PackedSource = Omit<SourceFile, 'session' | 'projectDir' | 'path'> & { path?: string };
type PackedDiscovery = Omit<DiscoveryResult, 'sessions'> & { sessions: (Omit<DiscoveredSession, 'sources'> & { sources: PackedSource[] })[] };

function pack(found: DiscoveryResult): PackedDiscovery {
  return {
    ...found,
    sessions: found.sessions.map((s) => ({
      ...s,
      sources: s.sources.map(({ session: _s, projectDir: _d, path, ...rest }) => (path === join(found.root, rest.rel) ? rest : { ...rest, path })),
    })),
  };
}

function unpack(p: PackedDiscovery): DiscoveryResult {
  const sessions: DiscoveredSession[] = [];
  for (const s of p.sessions) {
    const sources: SourceFile[] = [];
    for (const { path, ...src } of s.sources)
      sources.push({ session: s.id, projectDir: src.rel.slice(0, src.rel.indexOf('/')), path: path ?? join(p.root, src.rel), ...src });
    sessions.push({ id: s.id, dirs: s.dirs, primaryDir: s.primaryDir, sources });
  }
  return { root: p.root, sessions, filteredOut: p.filteredOut, errors: p.errors, skipped: p.skipped };
}

export class RememberedQuiet {
  private readonly old: CollectQuiet<PackedDiscovery> | undefined;
  private readonly next: CollectQuiet<PackedDiscovery>;
  private changed = false;

  constructor(
    private readonly root: string,
    private readonly sourceRoot: string,
    private readonly filter: SessionFilter,
    /** The caller's build: another build may discover or judge otherwise. */
    build: string,
  ) {
    const key = JSON.stringify([build, sourceRoot, filter.include, filter.exclude]);
    this.old = loadCollectQuiet(root, key);
    this.next = { key, sessions: {}, spools: {} };
    if (!this.old) this.changed = true;
  }

  /** What discovery finds: the remembered result while every directory it listed stats the same, else a new discovery. */
  discover(): DiscoveryResult {
    const d = this.old?.discovery;
    if (d && d.dirs.every(([dir, stat]) => statNow(dir) === stat)) {
      this.next.discovery = d;
      return unpack(d.found);
    }
    this.changed = true;
    // Read before the listing: a directory whose time after it is older than this (less the grain) did not change while it was listed.
    const nowMs = Date.now();
    const listed: string[] = [];
    const found = discover(this.sourceRoot, this.filter, undefined, listed);
    // A refused link or an unreadable directory may resolve without any listed directory moving: not remembered.
    if (found.errors.length > 0 || found.skipped.length > 0) return found;
    const dirs: [string, string][] = [];
    for (const dir of listed) {
      const stat = trustedStat(dir, nowMs);
      if (stat === undefined) return found;
      dirs.push([dir, stat]);
    }
    this.next.discovery = { dirs, found: pack(found) };
    return found;
  }

  /** The sessions whose sources and directory stat as remembered, and the rest to judge with their signature taken now. */
  split(sessions: DiscoveredSession[]): { unchanged: DiscoveredSession[]; judge: { session: DiscoveredSession; sig: Signature }[] } {
    const nowMs = Date.now();
    const unchanged: DiscoveredSession[] = [];
    const judge: { session: DiscoveredSession; sig: Signature }[] = [];
    for (const s of sessions) {
      const sig = this.signature(s, nowMs);
      const old = this.old?.sessions[s.id];
      if (sig !== undefined && old !== undefined && old.dir !== '' && sig === `${old.dir}\n${old.sources}`) {
        this.next.sessions[s.id] = old;
        unchanged.push(s);
      } else judge.push({ session: s, sig });
    }
    return { unchanged, judge };
  }

  /** A session judged quiet in full, with the signature taken before that judgement. */
  keep(session: string, sig: Signature): void {
    const nl = sig?.indexOf('\n') ?? 0;
    if (sig === undefined || nl <= 0) return;
    this.next.sessions[session] = { dir: sig.slice(0, nl), sources: sig.slice(nl + 1) };
    this.changed = true;
  }

  /**
   * Sessions collected by a pass that left nothing undone: each has landed at least what its sources
   * held when `sig` was taken, so it is quiet while they stat the same and no writer touched its
   * directory since now (a directory this pass changed within the grain is judged again next time).
   */
  landed(judged: { session: DiscoveredSession; sig: Signature }[]): void {
    const nowMs = Date.now();
    for (const { session, sig } of judged) {
      const nl = sig?.indexOf('\n') ?? -1;
      const dir = trustedStat(join(this.root, session.id), nowMs);
      if (sig === undefined || nl < 0 || dir === undefined) continue;
      this.next.sessions[session.id] = { dir, sources: sig.slice(nl + 1) };
      this.changed = true;
    }
  }

  /** The hook spools remembered wholly landed (hook-observations.ts's `settled`). */
  spools(): Map<string, number> {
    return new Map(Object.entries(this.old?.spools ?? {}).filter(([, size]) => typeof size === 'number'));
  }

  /** Writes the memory when it differs from what was read; a root that refuses it only costs the next pass its full look. */
  save(spools: ReadonlyMap<string, number>): void {
    this.next.spools = Object.fromEntries(spools);
    const sameSessions = this.old && Object.keys(this.old.sessions).length === Object.keys(this.next.sessions).length;
    const sameSpools = this.old && JSON.stringify(this.old.spools) === JSON.stringify(this.next.spools);
    if (!this.changed && sameSessions && sameSpools && this.next.discovery === this.old?.discovery) return;
    try {
      saveCollectQuiet(this.root, this.next);
    } catch {
      // A cache.
    }
  }

  /**
   * The session directory's stat (empty when it has none yet or it is too recent), a newline, then
   * each source's stat in discovery's order (a source added, gone or renamed changes them); undefined
   * when a source is unreadable or too recent.
   */
  private signature(s: DiscoveredSession, nowMs: number): Signature {
    let sig = `${trustedStat(join(this.root, s.id), nowMs) ?? ''}\n`;
    for (const src of s.sources) {
      const stat = trustedStat(src.path, nowMs);
      if (stat === undefined) return undefined;
      sig += `${stat}\n`;
    }
    return sig;
  }
}
