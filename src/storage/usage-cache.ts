/**
 * A conversation's counted calls as of its head round, kept beside the chain so a usage report
 * over a landed root reads one small file per conversation instead of folding every chain and
 * reading its landed files again. Outside every digest, like `conversation.state`: the rounds
 * directory is what counts, and an entry whose head is not the chain's head now is ignored.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { chainDir, listRounds } from './chain.js';
import { replaceAtomically } from './write-once.js';

export const USAGE_CACHE = 'usage.cache.json';
const VERSION = 1;

/** A head round as a cache key: its file's name (which holds its digest) and size. */
export const headKey = (roundFile: string, bytes: number) => `${roundFile}:${bytes}`;

/** The chain's head as a cache key (`headKey`); none for a chain with no round. */
export function chainHeadKey(root: string, conversation: string): string | undefined {
  const rounds = listRounds(root, conversation);
  const last = rounds[rounds.length - 1];
  if (!last) return undefined;
  try {
    return headKey(last.name, statSync(last.path).size);
  } catch {
    return undefined;
  }
}

export function readUsageCache(root: string, conversation: string, head: string): unknown {
  try {
    const o = JSON.parse(readFileSync(join(chainDir(root, conversation), USAGE_CACHE), 'utf8')) as { v?: unknown; head?: unknown; value?: unknown };
    return o.v === VERSION && o.head === head ? o.value : undefined;
  } catch {
    return undefined; // none yet, or unreadable: worked out again from the chain
  }
}

/** Best effort: a root this process may not write to still gets its report, only not the faster next one. */
export function writeUsageCache(root: string, conversation: string, head: string, value: unknown): void {
  try {
    replaceAtomically(join(chainDir(root, conversation), USAGE_CACHE), JSON.stringify({ v: VERSION, head, value }), { sync: false });
  } catch {
    /* see above */
  }
}
