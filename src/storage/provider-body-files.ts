/**
 * A session's provider bodies read from its landed `provider_body` files, for bodies whose
 * records refer to earlier ones (asz 0.6's `piece` and `copy`): every such file up to the one asked
 * for is read once, in landing order, into one store (formats/session-data/provider-body-store.ts).
 * A record the store held back or refused keeps its reason, so asking for its body says why.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ProviderBodyError, ProviderBodyStore } from '../formats/session-data/provider-body-store.js';
import { listDir, parseLandedName, providerBodyDir } from './layout.js';

/** A session's landed `provider_body` files, in landing order. */
export function landedBodyFiles(root: string, session: string): { seq: number; path: string }[] {
  const dir = providerBodyDir(root, session);
  const out: { seq: number; path: string }[] = [];
  for (const name of listDir(dir)) {
    const p = parseLandedName(name);
    if (p) out.push({ seq: p.seq, path: join(dir, name) });
  }
  return out.sort((a, b) => a.seq - b.seq);
}

/**
 * Everything a session's landed `provider_body` files hold, for a writer to cut new bodies against:
 * only what is on disk can be referred to. A record the store refuses or holds back is simply not
 * held, so nothing later refers to it.
 */
export function landedBodyStore(root: string, session: string): ProviderBodyStore {
  const store = new ProviderBodyStore();
  for (const f of landedBodyFiles(root, session)) store.addFile(f.seq, readFileSync(f.path, 'utf8'));
  return store;
}

export class SessionProviderBodies {
  private readonly store = new ProviderBodyStore();
  private readonly files: { seq: number; path: string }[];
  private next = 0;
  private readonly notHeld = new Map<string, string>();

  /** `files`: the session's `provider_body` files, any order. */
  constructor(files: { seq: number; path: string }[]) {
    this.files = [...files].sort((a, b) => a.seq - b.seq);
  }

  /** The body landed at (seq, row); throws ProviderBodyError saying why when it cannot be rebuilt. */
  bodyAt(seq: number, row: number): Buffer {
    for (; this.next < this.files.length && this.files[this.next]!.seq <= seq; this.next++) {
      const f = this.files[this.next]!;
      let text: string;
      try {
        text = readFileSync(f.path, 'utf8');
      } catch (err) {
        this.notHeld.set(`${f.seq}`, `the provider body file ${f.path} cannot be read: ${(err as Error).message}`);
        continue;
      }
      for (const { row: r, outcome } of this.store.addFile(f.seq, text))
        this.notHeld.set(`${f.seq}/${r}`, 'refused' in outcome ? `refused: ${outcome.refused}` : `waiting: ${outcome.unresolved}`);
    }
    const why = this.notHeld.get(`${seq}/${row}`) ?? this.notHeld.get(`${seq}`);
    if (why && !this.store.has(seq, row)) throw new ProviderBodyError(why);
    return this.store.bodyAt(seq, row);
  }
}
