/**
 * What the view server reads, and nothing it writes: the list of conversations off each head
 * round's header, one conversation's document folded on demand and kept until its head moves,
 * and one landed record read from disk every time it is asked for.
 */
import { statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { readFirstLine } from '../../storage/first-line.js';
import type { ViewDocument } from '../../formats/view/types.js';
import { loadViewInput, ViewUnavailable } from './load.js';
import { buildChanges, type ChangesAnswer } from './changes.js';

import type { RowFacts } from './row-facts.js';
import type { RowFactsStore } from './row-facts-store.js';
import { servedView } from './served-view.js';
import { readSessionData } from '../../formats/session-data/decode.js';
import type { Header, SdRecord } from '../../formats/session-data/types.js';
import type { RoundHeader } from '../../formats/session-flow/types.js';
import { listConversations, listRounds } from '../../storage/chain.js';
import { landedDirs, listDir, parseLandedName } from '../../storage/layout.js';
import type { ServiceDescription } from '../../component/component.js';

/** Documents kept in memory at once, most recently read first. */
const MAX_CACHED_DOCS = 8;

export const FILL_HINT = 'run `aszcol collect --once && aszcol parse` to fill it';

/** One row of the list. A count the head round's header does not carry is left out: unknown, not zero. */
export interface ConversationRow extends RowFacts {
  id: string;
  title?: string;
  /** `runtime`: the runtime's own title records; `prompt`: the first prompt, trimmed, where the runtime gave none. */
  title_from?: 'runtime' | 'prompt';
  talks?: number;
  steps?: number;
  streams?: number;
  segments?: number;
  rounds: number;
  from?: number;
  to?: number;
  unresolved?: number;
  changes?: number;
  lines_added?: number;
  lines_removed?: number;
  llm_calls?: number;
  subagents?: number;
  bash_runs?: number;
}

export interface ViewStatus {
  /** `view`: `aszcol view` reading a root on its own; `service`: the view inside the running service. */
  mode: 'view' | 'service';
  service?: ServiceDescription;
  root: string;
  conversations: number;
  /** The last time a head round, or the size of its file, was seen to change (RFC 3339). */
  last_refresh?: string;
  /** Moves whenever `last_refresh` does: cheaper to compare. */
  generation: number;
  /** Each conversation's head as listed: round file name and size. */
  heads: Record<string, string>;
  hint?: string;
}

export interface RecordAnswer {
  conversation: string;
  session: string;
  seq: number;
  row: number;
  file: string;
  header: Header;
  record: SdRecord;
}

const HEADER_COUNTS = [
  'talks',
  'steps',
  'streams',
  'segments',
  'unresolved',
  'changes',
  'lines_added',
  'lines_removed',
  'llm_calls',
  'subagents',
  'bash_runs',
] as const;

/** The first line of a round file, read without reading the rest. */
export function readRoundHeader(path: string): RoundHeader | undefined {
  try {
    const line = readFirstLine(path, 16 * 1024 * 1024);
    if (line === undefined) return undefined;
    const h = JSON.parse(line) as RoundHeader;
    return h && h.t === 'header' && typeof h.round === 'number' ? h : undefined;
  } catch {
    return undefined;
  }
}

function ms(iso: string | undefined): number | undefined {
  if (!iso) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
}

/** A conversation id names one directory under `_conversations`, nothing else. */
const SAFE_ID = /^[^/\\.][^/\\]*$/;

export class ViewCatalog {
  /** One serialised document per conversation, as of the listing it was built from: the object itself is not kept. */
  private readonly docs = new Map<string, { key: string; json: string; builtMs: number }>();
  private readonly landedScans = new Map<string, { at: number; sig: string }>();
  private readonly sessions = new Map<string, string>();
  /** What each list row adds to its header, as of the rounds it was worked out from. */
  private readonly facts = new Map<string, { key: string; facts: RowFacts }>();
  private seen = '';
  private generation = 0;
  private lastRefresh: string | undefined;

  constructor(
    readonly root: string,
    private readonly now: () => number = Date.now,
    /** Row facts kept between starts; none: worked out again after every start. */
    private readonly store?: RowFactsStore,
  ) {}

  /** The conversations that have at least one round. */
  ids(): string[] {
    return listConversations(this.root).filter((id) => listRounds(this.root, id).length > 0);
  }

  exists(id: string): boolean {
    return SAFE_ID.test(id) && listRounds(this.root, id).length > 0;
  }

  /** The newest header that reads, walking back past a round still being written. */
  private headHeader(id: string): RoundHeader | undefined {
    const rounds = listRounds(this.root, id);
    for (let i = rounds.length - 1; i >= 0; i--) {
      const h = readRoundHeader(rounds[i]!.path);
      if (h) return h;
    }
    return undefined;
  }

  rows(): ConversationRow[] {
    const rows: ConversationRow[] = [];
    for (const id of this.ids()) {
      const h = this.headHeader(id);
      if (!h) continue;
      const row: ConversationRow = { id, rounds: h.round };
      const facts = this.rowFactsOf(id);
      Object.assign(row, facts);
      if (h.title) Object.assign(row, { title: h.title, title_from: 'runtime' });
      else if (facts.first_prompt) Object.assign(row, { title: facts.first_prompt, title_from: 'prompt' });
      const from = ms(h.session_from_time),
        to = ms(h.session_through_time);
      if (from !== undefined) row.from = from;
      if (to !== undefined) row.to = to;
      for (const k of HEADER_COUNTS) {
        const v = (h as unknown as Record<string, unknown>)[k];
        if (typeof v === 'number') row[k] = v;
      }
      rows.push(row);
    }
    // Most recent activity first; a conversation with no time goes last.
    return rows.sort((a, b) => (b.to ?? -Infinity) - (a.to ?? -Infinity) || (a.id < b.id ? -1 : 1));
  }

  /**
   * A row's facts, worked out again only when the conversation's rounds moved: a list read while
   * nothing is parsed folds nothing. A chain that does not fold gives the reason instead of facts.
   */
  private rowFactsOf(id: string): RowFacts {
    const key = this.factsKey(id);
    const hit = this.facts.get(id);
    if (hit && hit.key === key) return hit.facts;
    const stored = this.store?.get(id, key);
    if (stored) {
      this.facts.set(id, { key, facts: stored });
      return stored;
    }
    let facts: RowFacts;
    try {
      facts = this.build(id).facts;
    } catch (err) {
      // Said on the row; the conversation's own page says it in full.
      facts = { unreadable: (err as Error).message };
    }
    this.keepFacts(id, key, facts);
    return facts;
  }

  /**
   * What a row's facts are worked out from: the chain's round files and the session's landed
   * files. A parse or a newly landed file changes it; so does a round file rewritten in place.
   */
  private factsKey(id: string): string {
    const rounds = listRounds(this.root, id).map((r) => {
      try {
        const st = statSync(r.path);
        return `${r.name}:${st.size}:${Math.trunc(st.mtimeMs)}`;
      } catch {
        return `${r.name}:gone`;
      }
    });
    return `${rounds.join('|')}#${this.landedKey(this.sessionOf(id))}`;
  }

  private keepFacts(id: string, key: string, facts: RowFacts): void {
    this.facts.set(id, { key, facts });
    // A chain that does not read now may read after the next parse: only facts worked out are kept on disk.
    if (!facts.unreadable) this.store?.put(id, key, facts);
  }

  /** Why the list's cache is not kept between starts, when it cannot be written. */
  cacheProblem(): string | undefined {
    return this.store?.writeProblem;
  }

  private build(id: string): { doc: ViewDocument; facts: RowFacts } {
    return servedView(this.root, id);
  }

  /** A round file as a listing sees it: its name and its size, which moves while it is being written. */
  private sized(r: { name: string; path: string }): string {
    let size = -1;
    try {
      size = statSync(r.path).size;
    } catch {
      /* gone since the listing */
    }
    return `${r.name}:${size}`;
  }

  status(): ViewStatus {
    const heads: Record<string, string> = {};
    for (const id of listConversations(this.root)) {
      const rounds = listRounds(this.root, id);
      if (rounds.length) heads[id] = this.sized(rounds[rounds.length - 1]!);
    }
    const sig = JSON.stringify(heads);
    if (sig !== this.seen) {
      this.seen = sig;
      this.generation++;
      this.lastRefresh = new Date(this.now()).toISOString();
    }
    const n = Object.keys(heads).length;
    return {
      mode: 'view',
      root: this.root,
      conversations: n,
      ...(this.lastRefresh ? { last_refresh: this.lastRefresh } : {}),
      generation: this.generation,
      heads,
      ...(n === 0 ? { hint: `No conversations under ${this.root} yet: ${FILL_HINT}.` } : {}),
    };
  }

  /**
   * Landed file names, listed again at most once a second: a file that lands after the fold is
   * found without walking the directories on every request.
   */
  private landedKey(session: string): string {
    const prev = this.landedScans.get(session);
    if (prev && this.now() - prev.at < 1000) return prev.sig;
    const names: string[] = [];
    for (const { dir } of landedDirs(this.root, session)) for (const n of listDir(dir)) if (parseLandedName(n)) names.push(n);
    const sig = names.sort().join('|');
    this.landedScans.set(session, { at: this.now(), sig });
    return sig;
  }

  /**
   * The document, folded again only when the rounds directory or the landed files moved. The
   * comparison is with what the last fold read, so a round still being written at one read is
   * folded at the next.
   */
  view(id: string): { json: string; builtMs: number; cached: boolean } {
    const rounds = SAFE_ID.test(id) ? listRounds(this.root, id) : [];
    if (!rounds.length) throw new ViewUnavailable(id, 'no such conversation', 404);
    const session = this.sessionOf(id);
    const key = `${rounds.map((r) => this.sized(r)).join('|')}#${this.landedKey(session)}`;
    const hit = this.docs.get(id);
    if (hit && hit.key === key) {
      this.docs.delete(id);
      this.docs.set(id, hit);
      return { ...hit, cached: true };
    }
    const t0 = performance.now();
    const { doc, facts } = this.build(id);
    this.keepFacts(id, this.factsKey(id), facts);
    const json = JSON.stringify(doc);
    const built = { key, json, builtMs: performance.now() - t0 };
    // The most recently read conversations stay; a reader going through a long list does not grow memory without end.
    this.docs.delete(id);
    this.docs.set(id, built);
    while (this.docs.size > MAX_CACHED_DOCS) this.docs.delete(this.docs.keys().next().value!);
    return { ...built, cached: false };
  }

  /** The conversation's workspace changes, read from its landed files each time it is asked for. */
  changes(id: string): ChangesAnswer {
    if (!SAFE_ID.test(id) || !listRounds(this.root, id).length) throw new ViewUnavailable(id, 'no such conversation', 404);
    return buildChanges(loadViewInput(this.root, id));
  }

  /** The session a chain is about: its header says, and a chain never changes session. */
  private sessionOf(id: string): string {
    let s = this.sessions.get(id);
    if (s === undefined) {
      s = this.headHeader(id)?.session;
      if (s === undefined) return id;
      this.sessions.set(id, s);
    }
    return s;
  }

  /** One landed record, read from disk every time; 404 when the sequence or the row does not exist. */
  record(id: string, seqText: string, rowText: string): RecordAnswer {
    if (!this.exists(id)) throw new ViewUnavailable(id, 'no such conversation', 404);
    const seq = Number(seqText),
      row = Number(rowText);
    if (!/^\d+$/.test(seqText) || !/^\d+$/.test(rowText) || seq < 1 || row < 1) {
      throw new ViewUnavailable(id, `no record ${seqText}/${rowText}: a sequence and a row are positive integers`, 404);
    }
    const session = this.sessionOf(id);
    let path: string | undefined;
    for (const { dir } of landedDirs(this.root, session)) {
      for (const name of listDir(dir)) if (parseLandedName(name)?.seq === seq) path = join(dir, name);
    }
    if (!path) throw new ViewUnavailable(id, `session ${session} has no landed file with sequence ${seq}`, 404);
    let read;
    try {
      read = readSessionData(path);
    } catch (err) {
      throw new ViewUnavailable(id, `the landed file with sequence ${seq} does not verify: ${(err as Error).message}`, 422);
    }
    const record = read.records[row - 1];
    if (!record) throw new ViewUnavailable(id, `sequence ${seq} holds ${read.records.length} record(s); there is no row ${row}`, 404);
    return { conversation: id, session, seq, row, file: relative(this.root, path).split('\\').join('/'), header: read.header, record };
  }
}
