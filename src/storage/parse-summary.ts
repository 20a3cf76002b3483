/**
 * `_conversations/<id>/parse.summary`: the whole conversation's counts `aszcol parse` prints,
 * kept beside the chain under the digest of the head round they were counted at. A cache only:
 * it is believed only while that round is still the head, and anything unreadable is no cache.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { chainDir } from './chain.js';
import { replaceAtomically } from './write-once.js';

export interface ConversationSummary {
  talks: number;
  runs: number;
  steps: number;
  tools: { joined: number; total: number };
  children: { joined: number; total: number };
  unresolved: number;
}

const summaryPath = (root: string, conversation: string) => join(chainDir(root, conversation), 'parse.summary');

/** The summary counted at the head round `headDigest`; undefined when none was, or the file does not read. */
export function loadParseSummary(root: string, conversation: string, headDigest: string): ConversationSummary | undefined {
  try {
    const o = JSON.parse(readFileSync(summaryPath(root, conversation), 'utf8')) as { head_digest?: unknown; summary?: ConversationSummary };
    return o.head_digest === headDigest && o.summary && typeof o.summary.talks === 'number' ? o.summary : undefined;
  } catch {
    return undefined;
  }
}

/** Unsynced: a summary lost in a crash is counted again by the next parse. */
export function saveParseSummary(root: string, conversation: string, headDigest: string, summary: ConversationSummary): void {
  replaceAtomically(summaryPath(root, conversation), JSON.stringify({ head_digest: headDigest, summary }) + '\n', { sync: false });
}
