import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseKv } from '../../storage/kv-text.js';
import { readIndexState } from '../../storage/index.js';
import { chainDir } from '../../storage/chain.js';
import { landedSessions } from '../../storage/landed-files.js';
import { isSessionEntryName } from '../../storage/layout.js';
import { parseSession } from './parse.js';
import type { AssemblerConfig } from './config.js';

/** The chain's cached head: enough to skip a session nothing new landed in. */
function chainThrough(root: string, session: string): number | undefined {
  try {
    return Number(parseKv(readFileSync(join(chainDir(root, session), 'conversation.state'), 'utf8')).get('through_seq'));
  } catch {
    return undefined;
  }
}

export interface ParseStepReport {
  sessions: number;
  rounds: number;
  busy: number;
  problems: string[];
  /** Sessions left for the next pass because the step was asked to stop. */
  left?: number;
}

/**
 * The parse step of a pass: every session whose landed evidence moved past its chain gets a round.
 * A session whose chain already covers its index is skipped without reading either, so a quiet
 * pass costs two small file reads per session. A nudged pass names its sessions (`only`): the
 * others wait for the next whole pass.
 */
export async function parseStep(root: string, cfg: AssemblerConfig, shouldStop: () => boolean = () => false, only?: string[]): Promise<ParseStepReport> {
  const r: ParseStepReport = { sessions: 0, rounds: 0, busy: 0, problems: [] };
  // A named session with nothing landed yet has no directory, and gets none from here.
  const sessions = only ? only.filter((s) => isSessionEntryName(s) && existsSync(join(root, s))).sort() : landedSessions(root);
  for (const [i, session] of sessions.entries()) {
    // Stopping between sessions leaves nothing half-written: a round is written whole or not at all.
    if (shouldStop()) {
      r.left = sessions.length - i;
      break;
    }
    const indexed = readIndexState(root, session)?.indexedSeq;
    const through = chainThrough(root, session);
    if (indexed !== undefined && through !== undefined && through >= indexed) continue;
    try {
      const p = parseSession({ root, session, maxRoundBytes: cfg.maxRoundBytes });
      if (p.status === 'busy') r.busy++;
      else if (p.status !== 'empty') r.sessions++;
      r.rounds += p.rounds.length;
    } catch (err) {
      r.problems.push(`${session}: ${(err as Error).message}`);
    }
    // A turn of the event loop between sessions: a request to stop gets read.
    await new Promise((res) => setImmediate(res));
  }
  return r;
}
