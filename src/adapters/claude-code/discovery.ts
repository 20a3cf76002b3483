import { readdirSync, type Dirent } from 'node:fs';
import { join } from 'node:path';
import { minimatch } from 'minimatch';
import type { FileKind } from '../../formats/session-data/types.js';
import { entryNameProblem } from '../../storage/entry-names.js';
import { SourceLinks } from './source-links.js';
import { AGENT_ID, AGENT_SIDECAR, AGENT_TRANSCRIPT, JOURNAL, MAIN_TRANSCRIPT, SESSION_ID, WORKFLOW_MANIFEST, slugifyPath, splitScriptName } from './paths.js';

/** One collectable file and where it lands. */
export interface SourceFile {
  session: string;
  projectDir: string;
  /** Absolute path on disk. */
  path: string;
  /** Relative to the source root, forward slashes: the header's `src` and the cursor's `source`. */
  rel: string;
  kind: FileKind;
  reading: 'append' | 'snapshot';
  /** Landing directory: `streams/<name>` or `runs/<name>`. */
  area: 'streams' | 'runs';
  areaName: string;
  /** Landed file name prefix and cursor name: `transcript`, `meta`, `journal`, `manifest`, `script`. */
  prefix: string;
  stream?: string;
  batch?: string;
  /** A name the file name itself gives (a workflow script's label). */
  label?: string;
}

export interface Skipped {
  path: string;
  why: string;
}

export interface DiscoveredSession {
  id: string;
  /** Project directories that yielded at least one source, sorted. */
  dirs: string[];
  /** The directory that holds the main transcript, else the first that yielded a source. */
  primaryDir: string;
  sources: SourceFile[];
}

export interface DiscoveryResult {
  root: string;
  sessions: DiscoveredSession[];
  /** Sessions the include/exclude filters keep out, by id. */
  filteredOut: string[];
  /** Project directories that could not be read: an error of the pass. */
  errors: { path: string; message: string }[];
  skipped: Skipped[];
}

export interface SessionFilter {
  include: string[];
  exclude: string[];
}

/**
 * Compiles a filter pattern judged against a project directory's name. A pattern that starts
 * with `/` is a path: it is slugified forward the way the runtime names directories (the
 * conversion loses information, so it cannot be run backwards), and `P/**` matches P's
 * directory itself and any directory whose name continues it with `-`.
 */
export function compileFilterPattern(pattern: string): (dirName: string) => boolean {
  if (!pattern.startsWith('/')) return (d) => minimatch(d, pattern, { dot: true });
  let body = pattern;
  let subtree = false;
  if (body.endsWith('/**')) {
    body = body.slice(0, -3);
    subtree = true;
  }
  const slug = body.replace(/[^A-Za-z0-9\-*?[\]]/g, '-');
  return (d) => minimatch(d, slug, { dot: true }) || (subtree && minimatch(d, `${slug}-*`, { dot: true }));
}

export function compileSessionFilter(f: SessionFilter): (primaryDir: string) => boolean {
  const inc = f.include.map(compileFilterPattern);
  const exc = f.exclude.map(compileFilterPattern);
  return (d) => (inc.length === 0 || inc.some((m) => m(d))) && !exc.some((m) => m(d));
}

function readDirents(dir: string): Dirent[] | 'gone' | Error {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return 'gone';
    return err as Error;
  }
}

/**
 * Whether a name that becomes a directory under the storage root (a session id, an agent id, a
 * workflow run) is refused by the root's rule; a refused one is skipped with the reason.
 */
function nameRefused(what: string, name: string, path: string, skipped: Skipped[]): boolean {
  const problem = entryNameProblem(name);
  if (problem) skipped.push({ path, why: `${what} ${JSON.stringify(name)} cannot name a directory in the storage root: ${problem}` });
  return problem !== undefined;
}

/** Lists a directory inside a session; one that cannot be read is skipped (the pass stays complete without it). */
function entriesInside(dir: string): Dirent[] {
  const r = readDirents(dir);
  return Array.isArray(r) ? r : [];
}

/**
 * Session-first discovery: every project directory is scanned for session-id-shaped entries,
 * and a session's files are unioned across directories (a workflow script is filed under
 * whatever directory the agent was in). A directory counts for a session only once it yielded
 * a collectable source.
 */
export function discover(
  root: string,
  filter: SessionFilter = { include: [], exclude: [] },
  /** Test seam: runs just before a project directory is listed (to make one vanish mid-scan). */
  beforeProjectDir?: (path: string) => void,
  /**
   * Given, every directory whose entries decided what was found is pushed here: the root, each
   * project directory, each session directory (its fixed-name children are looked for), and each
   * directory listed inside one. While none of them changes, neither does what discovery finds.
   */
  listed?: string[],
): DiscoveryResult {
  const bySession = new Map<string, { dirs: Set<string>; mainDir?: string; sources: SourceFile[] }>();
  const errors: { path: string; message: string }[] = [];
  const skipped: Skipped[] = [];
  const links = new SourceLinks(root, skipped);
  const found: SourceFile[] = [];
  const top = readDirents(root);
  if (top === 'gone') return { root, sessions: [], filteredOut: [], errors: [], skipped: [] };
  if (top instanceof Error) return { root, sessions: [], filteredOut: [], errors: [{ path: root, message: top.message }], skipped: [] };
  listed?.push(root);

  const add = (s: SourceFile) => {
    let entry = bySession.get(s.session);
    if (!entry) bySession.set(s.session, (entry = { dirs: new Set(), sources: [] }));
    entry.dirs.add(s.projectDir);
    if (s.kind === 'transcript' && s.stream === 'main') entry.mainDir = s.projectDir;
    entry.sources.push(s);
  };

  for (const pe of top.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    if (!links.is(root, pe, 'dir')) continue;
    const projectDir = pe.name;
    const pdPath = join(root, projectDir);
    beforeProjectDir?.(pdPath);
    const entries = readDirents(pdPath);
    if (entries === 'gone') continue; // vanished mid-scan: the corpus is live
    if (entries instanceof Error) {
      errors.push({ path: pdPath, message: entries.message });
      continue;
    }
    listed?.push(pdPath);
    for (const e of entries) {
      const main = MAIN_TRANSCRIPT.exec(e.name);
      if (main && links.is(pdPath, e, 'file')) {
        const session = main[1]!;
        if (nameRefused('session id', session, join(pdPath, e.name), skipped)) continue;
        found.push({
          session,
          projectDir,
          path: join(pdPath, e.name),
          rel: `${projectDir}/${e.name}`,
          kind: 'transcript',
          reading: 'append',
          area: 'streams',
          areaName: 'main',
          prefix: 'transcript',
          stream: 'main',
        });
        continue;
      }
      if (SESSION_ID.test(e.name) && links.is(pdPath, e, 'dir')) {
        if (nameRefused('session id', e.name, join(pdPath, e.name), skipped)) continue;
        found.push(...sessionDirSources(root, projectDir, e.name, skipped, links, listed));
      }
      // Anything else (memory/, tool-results/, sessions-index.json, …) is not a session.
    }
  }

  // Links are resolved before sessions are formed: a file reached under two names is one source.
  for (const s of links.once(found)) add(s);

  const keep = compileSessionFilter(filter);
  const sessions: DiscoveredSession[] = [];
  const filteredOut: string[] = [];
  for (const [id, e] of [...bySession].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0))) {
    const dirs = [...e.dirs].sort();
    const primaryDir = e.mainDir ?? e.sources.find((s) => s.area === 'streams')?.projectDir ?? dirs[0]!;
    // With the main transcript pruned there is no primary directory: the session is kept out
    // only when every directory it was found in is kept out.
    if (e.mainDir !== undefined ? !keep(primaryDir) : !dirs.some(keep)) {
      filteredOut.push(id);
      continue;
    }
    sessions.push({ id, dirs, primaryDir, sources: e.sources });
  }
  return { root, sessions, filteredOut, errors, skipped };
}

function sessionDirSources(root: string, projectDir: string, session: string, skipped: Skipped[], links: SourceLinks, seen?: string[]): SourceFile[] {
  const out: SourceFile[] = [];
  const base = join(root, projectDir, session);
  const relBase = `${projectDir}/${session}`;
  seen?.push(base);
  const listed = (dir: string) => (links.enter(dir) ? (seen?.push(dir), entriesInside(dir)) : []);
  const children = (dir: string, relDir: string, batch: string | undefined) => {
    for (const e of listed(dir)) {
      const t = AGENT_TRANSCRIPT.exec(e.name);
      const m = t ? undefined : AGENT_SIDECAR.exec(e.name);
      const id = (t ?? m)?.[1];
      if (id === undefined) {
        if (batch !== undefined && e.name === JOURNAL && links.is(dir, e, 'file')) {
          out.push({
            session,
            projectDir,
            path: join(dir, e.name),
            rel: `${relDir}/${e.name}`,
            kind: 'journal',
            reading: 'append',
            area: 'runs',
            areaName: batch,
            prefix: 'journal',
            batch,
          });
        }
        continue;
      }
      if (!links.is(dir, e, 'file')) continue;
      if (!AGENT_ID.test(id)) {
        skipped.push({ path: join(dir, e.name), why: `"${id}" is not an agent id (a${'[0-9a-f]'}{16})` });
        continue;
      }
      if (nameRefused('agent id', id, join(dir, e.name), skipped)) continue;
      out.push({
        session,
        projectDir,
        path: join(dir, e.name),
        rel: `${relDir}/${e.name}`,
        kind: t ? 'transcript' : 'agent_meta',
        reading: t ? 'append' : 'snapshot',
        area: 'streams',
        areaName: id,
        prefix: t ? 'transcript' : 'meta',
        stream: id,
        batch,
      });
    }
  };
  const subagents = join(base, 'subagents');
  children(subagents, `${relBase}/subagents`, undefined);
  for (const e of listed(join(subagents, 'workflows'))) {
    if (links.is(join(subagents, 'workflows'), e, 'dir') && !nameRefused('workflow run', e.name, join(subagents, 'workflows', e.name), skipped)) {
      children(join(subagents, 'workflows', e.name), `${relBase}/subagents/workflows/${e.name}`, e.name);
    }
  }
  const workflows = join(base, 'workflows');
  for (const e of listed(workflows)) {
    const m = WORKFLOW_MANIFEST.exec(e.name);
    if (m && links.is(workflows, e, 'file') && !nameRefused('workflow run', m[1]!, join(workflows, e.name), skipped)) {
      out.push({
        session,
        projectDir,
        path: join(workflows, e.name),
        rel: `${relBase}/workflows/${e.name}`,
        kind: 'workflow_manifest',
        reading: 'snapshot',
        area: 'runs',
        areaName: m[1]!,
        prefix: 'manifest',
        batch: m[1]!,
      });
    }
  }
  const scripts = join(workflows, 'scripts');
  for (const e of listed(scripts)) {
    const s = splitScriptName(e.name);
    if (s && links.is(scripts, e, 'file') && !nameRefused('workflow run', s.run, join(scripts, e.name), skipped)) {
      out.push({
        session,
        projectDir,
        path: join(scripts, e.name),
        rel: `${relBase}/workflows/scripts/${e.name}`,
        kind: 'workflow_script',
        reading: 'snapshot',
        area: 'runs',
        areaName: s.run,
        prefix: 'script',
        batch: s.run,
        label: s.label,
      });
    }
  }
  return out;
}

export { slugifyPath };
