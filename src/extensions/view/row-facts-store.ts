/**
 * The list's per-conversation facts (`row-facts.ts`), kept on disk so the first list read after a
 * start reads one small file per conversation instead of building every conversation. Each entry
 * carries the key it was worked out from (the chain's round files and the session's landed files,
 * by name, size and time); an entry whose key differs is worked out again, so a parse or a landed
 * file that moves either invalidates it. The cache lives outside the storage root (the view only
 * reads the root), one directory per root; anything unreadable there is a miss, never an error.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import type { RowFacts } from './row-facts.js';

const FORMAT = 'aszcol.view.row-facts/1';

/** `$XDG_CACHE_HOME/aszcol/view/<root's hash>`, else `~/.cache/aszcol/view/<root's hash>`. */
export function defaultRowFactsDir(root: string, env: NodeJS.ProcessEnv = process.env): string {
  const base = env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'aszcol', 'view', createHash('sha256').update(resolve(root)).digest('hex').slice(0, 16));
}

export class RowFactsStore {
  /** The first write that failed, said once by whoever asks (the cache then works in memory only). */
  writeProblem: string | undefined;

  constructor(readonly dir: string) {}

  private path(id: string): string {
    return join(this.dir, `${encodeURIComponent(id)}.json`);
  }

  get(id: string, key: string): RowFacts | undefined {
    try {
      const e = JSON.parse(readFileSync(this.path(id), 'utf8')) as { format?: unknown; key?: unknown; facts?: unknown };
      return e.format === FORMAT && e.key === key && e.facts && typeof e.facts === 'object' ? (e.facts as RowFacts) : undefined;
    } catch {
      return undefined;
    }
  }

  put(id: string, key: string, facts: RowFacts): void {
    if (this.writeProblem) return;
    const path = this.path(id);
    const tmp = `${path}.${process.pid}.tmp`;
    try {
      mkdirSync(this.dir, { recursive: true });
      writeFileSync(tmp, JSON.stringify({ format: FORMAT, key, facts }));
      // Readers see the old entry or the new one, never half of one.
      renameSync(tmp, path);
    } catch (err) {
      this.writeProblem = `the list's cache ${this.dir} cannot be written (${(err as Error).message}); rows are worked out again after every start`;
    }
  }
}
