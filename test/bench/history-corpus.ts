/**
 * A heavy user's `~/.claude/projects`, made by replicating the lab-recorded seed sessions with
 * fresh ids: every UUID, agent id, message id, request id and tool use id is mapped to a new one
 * of the same shape per replica, in the file names as in the lines, so each replica is a distinct
 * session to the collector and to ccusage (which drops a message id + request id it saw before).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { SeedSession } from './history-seeds.js';

/** The id shapes Claude Code writes: UUIDs, agent ids, and the API's prefixed ids. */
const ID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\bagent-a?[0-9a-f]{16,}|\b(?:toolu|msg|req|srvtoolu)_[A-Za-z0-9]{8,}/g;

/** A seed's text cut at its ids: literal pieces and the ids between them, so a replica is one join. */
interface CutFile {
  rel: string[];
  text: string[];
}

interface CutSeed {
  seed: SeedSession;
  ids: string[];
  files: CutFile[];
}

/** Pieces alternate literal, id index, literal, ...: odd positions are ids (as their index in `ids`). */
function cut(s: string, at: Map<string, number>, ids: string[]): string[] {
  const out: string[] = [];
  let last = 0;
  for (const m of s.matchAll(ID)) {
    out.push(s.slice(last, m.index));
    let i = at.get(m[0]);
    if (i === undefined) {
      i = ids.length;
      ids.push(m[0]);
      at.set(m[0], i);
    }
    out.push(String(i));
    last = m.index + m[0].length;
  }
  out.push(s.slice(last));
  return out;
}

function cutSeed(seed: SeedSession): CutSeed {
  const at = new Map<string, number>();
  const ids: string[] = [];
  const files = seed.files.map((rel) => ({ rel: cut(rel, at, ids), text: cut(readFileSync(join(seed.projectDir, rel), 'utf8'), at, ids) }));
  return { seed, ids, files };
}

const HEX = /[0-9a-f]/;
const ALNUM = /[A-Za-z0-9]/;
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** A fresh id of the same shape: each hex or alphanumeric character after the prefix replaced from a digest of (id, replica). */
function freshId(id: string, replica: number): string {
  const d = createHash('sha256').update(`${replica}:${id}`).digest();
  const agent = id.startsWith('agent-');
  // An agent id is `a` and 16 hex digits: the `a` is kept, or discovery refuses the replica's helper files.
  const prefixEnd = agent ? (id.startsWith('agent-a') ? 7 : 6) : id.includes('_') ? id.indexOf('_') + 1 : 0;
  const hexOnly = agent || prefixEnd === 0; // UUIDs and agent ids are hex; the API's ids are base62
  let out = id.slice(0, prefixEnd);
  for (let i = prefixEnd; i < id.length; i++) {
    const ch = id[i]!;
    const b = d[i % d.length]! ^ Math.floor(i / d.length);
    if (hexOnly ? HEX.test(ch) : ALNUM.test(ch)) out += hexOnly ? (b & 15).toString(16) : BASE62[b % 62];
    else out += ch;
  }
  return out;
}

function join2(pieces: string[], fresh: string[]): string {
  let s = '';
  for (let i = 0; i < pieces.length; i++) s += i % 2 ? fresh[Number(pieces[i])] : pieces[i];
  return s;
}

export interface HistoryCorpus {
  /** The `projects` directory (its parent is a `CLAUDE_CONFIG_DIR`). */
  projects: string;
  sessions: number;
  sources: number;
  bytes: number;
  kinds: Record<string, number>;
}

/**
 * Writes replicas of the seeds, kinds in turn, until both floors are met: at least `minSessions`
 * sessions and at least `minBytes` bytes. Sessions are spread over `projects` project directories.
 */
export function generateHistory(projects: string, seeds: SeedSession[], o: { minSessions: number; minBytes: number; projectDirs?: number }): HistoryCorpus {
  const cutSeeds = seeds.map(cutSeed);
  const dirs = o.projectDirs ?? 24;
  const corpus: HistoryCorpus = { projects, sessions: 0, sources: 0, bytes: 0, kinds: {} };
  for (let r = 0; corpus.sessions < o.minSessions || corpus.bytes < o.minBytes; r++) {
    const c = cutSeeds[r % cutSeeds.length]!;
    const fresh = c.ids.map((id) => freshId(id, r + 1));
    const project = join(projects, `-home-me-work-project-${String(r % dirs).padStart(2, '0')}`);
    for (const f of c.files) {
      const path = join(project, join2(f.rel, fresh));
      const text = join2(f.text, fresh);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, text);
      corpus.bytes += Buffer.byteLength(text);
      corpus.sources++;
    }
    corpus.sessions++;
    corpus.kinds[c.seed.kind] = (corpus.kinds[c.seed.kind] ?? 0) + 1;
  }
  return corpus;
}
