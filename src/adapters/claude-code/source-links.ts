/**
 * Symbolic links under the source root. A link is followed only when its real path is inside
 * the root, and every file is collected once, under its real path: two names for one file (a link
 * beside its target, a directory linked twice) make one source. Everything refused is said.
 */
import { lstatSync, realpathSync, statSync, type Dirent } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';

type Want = 'file' | 'dir';

/** Some filesystems report no entry type: such an entry is judged by lstat. */
const typeUnknown = (e: Dirent) =>
  !e.isFile() && !e.isDirectory() && !e.isSymbolicLink() && !e.isFIFO() && !e.isSocket() && !e.isBlockDevice() && !e.isCharacterDevice();

function realOrSelf(path: string): string {
  try {
    return realpathSync.native(path);
  } catch {
    return path;
  }
}

const errCode = (err: unknown) => (err as NodeJS.ErrnoException).code ?? '';

export class SourceLinks {
  /** The root with its own links resolved: a configured root that is itself a link is fine. */
  readonly realRoot: string;
  /** Files and directories accepted through a link: whatever lies at or under them is resolved before it is collected. */
  private readonly linked = new Set<string>();
  /** Links refused: a fixed name under one of them (`workflows/scripts`) is never listed. */
  private readonly refused = new Set<string>();

  constructor(
    readonly root: string,
    private readonly skipped: { path: string; why: string }[],
  ) {
    this.realRoot = realOrSelf(root);
  }

  /** Whether `dir/name` is a `want`. A link counts only when it resolves inside the root; else it is skipped with the reason. */
  is(dir: string, e: Dirent, want: Want): boolean {
    if (want === 'file' ? e.isFile() : e.isDirectory()) return true;
    if (!e.isSymbolicLink() && !typeUnknown(e)) return false;
    const path = join(dir, e.name);
    if (!e.isSymbolicLink()) {
      try {
        const st = lstatSync(path);
        if (!st.isSymbolicLink()) return want === 'file' ? st.isFile() : st.isDirectory();
      } catch {
        return false;
      }
    }
    return this.follow(path, want);
  }

  /** A directory reached by a fixed name (`subagents`, `workflows`, `scripts`): absent is nothing to list; a link, the same rule. */
  enter(path: string): boolean {
    for (const r of this.refused) if (path.startsWith(r + sep)) return false;
    let st;
    try {
      // Most sessions have no `workflows/`: absent is answered without an exception, which costs more than the lstat.
      st = lstatSync(path, { throwIfNoEntry: false });
    } catch {
      return false;
    }
    if (!st) return false;
    if (!st.isSymbolicLink()) return st.isDirectory();
    return this.follow(path, 'dir');
  }

  private follow(path: string, want: Want): boolean {
    let real: string;
    try {
      real = realpathSync.native(path);
    } catch (err) {
      const code = errCode(err);
      const why =
        code === 'ELOOP'
          ? 'a symbolic link loop: not followed'
          : code === 'ENOENT'
            ? 'a symbolic link to nothing: not followed'
            : `a symbolic link that does not resolve (${(err as Error).message}): not followed`;
      this.skipped.push({ path, why });
      this.refused.add(path);
      return false;
    }
    if (!this.inside(real)) {
      this.refused.add(path);
      this.skipped.push({ path, why: `a symbolic link to ${real}, outside the source root ${this.realRoot}: not followed` });
      return false;
    }
    try {
      const st = statSync(real);
      if (!(want === 'file' ? st.isFile() : st.isDirectory())) return false;
    } catch {
      return false;
    }
    this.linked.add(path);
    return true;
  }

  private inside(real: string): boolean {
    const r = relative(this.realRoot, real);
    return r !== '' && !isAbsolute(r) && r.split(sep)[0] !== '..';
  }

  private reachedThroughLink(path: string): boolean {
    if (this.linked.has(path)) return true;
    for (const d of this.linked) if (path.startsWith(d + sep)) return true;
    return false;
  }

  /**
   * One source per real file, with `path` and `rel` made its real path. The name reached with no
   * link wins; without one, the first name in order. Every other name is skipped with the reason.
   */
  once<T extends { path: string; rel: string }>(found: T[]): T[] {
    const byReal = new Map<string, { src: T; direct: boolean }>();
    const names: { src: T; real: string; direct: boolean }[] = [];
    for (const src of found) {
      const direct = !this.reachedThroughLink(src.path);
      let real: string;
      if (direct) real = join(this.realRoot, relative(this.root, src.path));
      else {
        try {
          real = realpathSync.native(src.path);
        } catch (err) {
          this.skipped.push({ path: src.path, why: `its real path cannot be resolved (${errCode(err) || (err as Error).message}): not collected` });
          continue;
        }
        if (!this.inside(real)) {
          this.skipped.push({ path: src.path, why: `its real path ${real} is outside the source root ${this.realRoot}: not collected` });
          continue;
        }
      }
      names.push({ src, real, direct });
      const held = byReal.get(real);
      if (!held || (direct && !held.direct)) byReal.set(real, { src, direct });
    }
    const out: T[] = [];
    for (const { src, real } of names) {
      const chosen = byReal.get(real)!.src;
      const rel = relative(this.realRoot, real).split(sep).join('/');
      if (chosen !== src) {
        this.skipped.push({ path: src.path, why: `another name for ${rel}, which is collected once under its real path` });
        continue;
      }
      out.push({ ...src, path: real, rel });
    }
    return out;
  }
}
