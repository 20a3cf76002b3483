/**
 * The parse step: assemble a session from its index and append the difference to its chain.
 * I/O lives here; assembly itself is pure (src/assemble).
 */
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { assemble, headerCounts } from '../../assemble/assemble.js';
import { chainInputDigest, encodeRound } from '../../formats/session-flow/encode.js';
import { applyRound, type Fold } from '../../formats/session-flow/fold.js';
import { PARSER, POLICY, SF_SCHEMA, type RoundHeader } from '../../formats/session-flow/types.js';
import { chainDir, listRounds, loadChain, roundName, roundsDir, saveConversationState } from '../../storage/chain.js';
import { indexDir, indexIfCurrent, loadIndex, updateIndex, type SessionIndex } from '../../storage/index.js';
import { FileLock } from '../../storage/lock.js';
import { headKey } from '../../storage/usage-cache.js';
import { sessionLockPath } from '../../storage/layout.js';
import { removeDeadTemporaries, WriteOnceFile } from '../../storage/write-once.js';
import type { SyncBatch } from '../../storage/sync-batch.js';
import { AszError } from '../../util/errors.js';
import { diffAssembly } from './diff.js';
import { removeDuplicates } from '../../assemble/stage1-dedupe.js';
import { addTotals, windowChanges } from './window-changes.js';

export interface ParseOptions {
  root: string;
  session: string;
  /** A round over this many bytes is assembled again over a narrower window (a single landed file is never split). */
  maxRoundBytes: number;
  /**
   * Rounds made durable with other sessions' (a first parse of many): each round is staged in
   * `batch` unsynced, the chain's state that must follow its sync is queued in `after` (for the
   * caller to run once the batch has committed) and the chain lock's release in `release` (run
   * whether it committed or not).
   */
  deferred?: DeferredRounds;
}

export interface DeferredRounds {
  batch: SyncBatch;
  after: (() => void)[];
  release: (() => void)[];
  /** Told of each chain written, folded through its new head, that head's cache key (`headKey`) once its round is on disk, and the index it was assembled from. */
  written?: (session: string, fold: Fold, head: string, index: SessionIndex | undefined) => void;
}

export interface WrittenRound {
  round: number;
  path: string;
  bytes: number;
  fromSeq: number;
  throughSeq: number;
  nodes: number;
  relations: number;
  unresolved: number;
}

export interface ParseResult {
  session: string;
  status: 'written' | 'unchanged' | 'busy' | 'empty';
  rounds: WrittenRound[];
  /** The landed sequence the chain covers after this parse. */
  throughSeq: number;
  head: number;
  /** The head round's digest after this parse (what a cached summary is keyed by). */
  headDigest?: string;
  summary?: {
    talks: number;
    runs: number;
    steps: number;
    tools: { joined: number; total: number };
    children: { joined: number; total: number };
    unresolved: number;
  };
}

function toIso(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

/**
 * The index as far as the landed files reach: read as it is when it covers them all (a first parse
 * after a collect: no lock to take, so no lock file made and removed per session), else brought up to
 * them under the session's lock; a busy session keeps the index it has.
 */
function freshIndex(root: string, session: string): SessionIndex | undefined {
  const current = indexIfCurrent(root, session);
  if (current) return current;
  const lock = new FileLock(sessionLockPath(root, session));
  if (lock.tryAcquire()) {
    try {
      removeDeadTemporaries(indexDir(root, session)); // a killed run's leftovers, under the lock that guards them
      const { index, problems } = updateIndex(root, session);
      if (problems.length) throw new AszError(problems.join('; '), session);
      return index;
    } finally {
      lock.release();
    }
  }
  return loadIndex(root, session);
}

export function parseSession(o: ParseOptions): ParseResult {
  const { root, session } = o;
  const index = freshIndex(root, session);
  const result: ParseResult = { session, status: 'unchanged', rounds: [], throughSeq: 0, head: 0 };
  const lock = new FileLock(join(chainDir(root, session), '.lock'));
  // Only whether rounds exist: the chain is read and folded once, under the lock, below.
  const hasChain = listRounds(root, session).length > 0;
  if (!index || index.indexedSeq === 0) {
    if (!hasChain) return { ...result, status: 'empty' };
  }
  mkdirSync(chainDir(root, session), { recursive: true });
  if (!lock.tryAcquire()) return { ...result, status: 'busy' };
  const deferred = o.deferred;
  // Until the batch commits, a round is not on disk under its name: the chain stays locked so no other parser extends it meanwhile.
  const afterSync = (step: () => void) => (deferred ? deferred.after.push(step) : step());
  const unlock = () => (deferred ? deferred.release.push(() => lock.release()) : lock.release());
  try {
    for (const dir of [chainDir(root, session), roundsDir(root, session)]) removeDeadTemporaries(dir);
    // Under the lock: read the chain again, so a round written meanwhile is the head we extend.
    const { fold, rounds } = loadChain(root, session, { sweep: true });
    if (fold.parser && (fold.parser !== PARSER || fold.policy !== POLICY)) {
      throw new AszError(
        `the chain was built by parser ${fold.parser} under policy ${fold.policy}; this is ${PARSER} under ${POLICY}. Remove ${chainDir(root, session)} and parse again to rebuild it.`,
        session,
      );
    }
    let head = fold.head;
    const watermark = index?.indexedSeq ?? 0; // fixed before assembly: nothing past it is read
    let through = head?.through_seq ?? 0;
    if (through > watermark) throw new AszError(`the chain covers landed sequence ${through}, the index only ${watermark}`, session);
    const files = (index?.files ?? []).filter((f) => f.seq <= watermark).sort((a, b) => a.seq - b.seq);
    const entries = (index?.entries ?? []).filter((e) => e.seq <= watermark);
    let assembled: ReturnType<typeof assemble> | undefined;
    const live = new Set(removeDuplicates(entries).live.map((e) => `${e.seq}/${e.row}`));
    const isLive = (seq: number, row: number) => live.has(`${seq}/${row}`);
    while (through < watermark) {
      const pending = files.filter((f) => f.seq > through);
      let take = pending.length;
      let built:
        { text: string; digest: string; header: RoundHeader; frames: ReturnType<typeof diffAssembly>; assembly: ReturnType<typeof assemble> } | undefined;
      for (;;) {
        const upTo = pending[take - 1]!.seq;
        const window = pending.slice(0, take);
        const assembly = assemble({ session, entries: entries.filter((e) => e.seq <= upTo) });
        const roundNo = fold.rounds + 1;
        const frames = diffAssembly(fold, assembly, roundNo);
        let fromT: number | undefined, toT: number | undefined;
        for (const e of entries) {
          if (e.seq <= through || e.seq > upTo || e.time === undefined) continue;
          fromT = fromT === undefined ? e.time : Math.min(fromT, e.time);
          toT = toT === undefined ? e.time : Math.max(toT, e.time);
        }
        const open = [...assembly.unresolved.values()].filter((u) => u.state === 'open').length;
        const header: RoundHeader = {
          t: 'header',
          schema: SF_SCHEMA,
          conversation: session,
          session,
          round: roundNo,
          ...(head ? { previous: fold.headDigest } : {}),
          from_seq: through + 1,
          through_seq: upTo,
          input_digest: chainInputDigest(
            head?.input_digest ?? '',
            window.map((f) => f.digest),
          ),
          parser: PARSER,
          policy: POLICY,
          from_time: toIso(fromT),
          through_time: toIso(toT),
          session_from_time: toIso(assembly.sessionFrom),
          session_through_time: toIso(assembly.sessionThrough),
          title: assembly.title,
          ...headerCounts(assembly.nodes.values(), open),
          ...addTotals(head, windowChanges(root, window, isLive)),
        };
        const { text, digest } = encodeRound(header, frames);
        built = { text, digest, header, frames, assembly };
        if (Buffer.byteLength(text) <= o.maxRoundBytes || take === 1) break;
        take = Math.max(1, Math.floor(take / 2));
      }
      const path = join(roundsDir(root, session), roundName(built.header.round, built.digest));
      const file = new WriteOnceFile(path); // exclusive: a round that exists is never replaced
      file.write(built.text);
      if (deferred) {
        const r = file.release();
        deferred.batch.stageFile(r.fd, r.tmp, r.final);
      } else file.commit();
      const round = {
        header: built.header,
        frames: built.frames,
        commit: { t: 'commit' as const, digest: built.digest, counts: { nodes: 0, relations: 0, unresolved: 0 } },
      };
      for (const f of built.frames) round.commit.counts[f.t === 'node' ? 'nodes' : f.t === 'relation' ? 'relations' : 'unresolved']++;
      applyRound(fold, round, path);
      rounds.push(round);
      head = built.header;
      through = built.header.through_seq;
      assembled = built.assembly;
      result.rounds.push({
        round: built.header.round,
        path,
        bytes: Buffer.byteLength(built.text),
        fromSeq: built.header.from_seq,
        throughSeq: through,
        nodes: round.commit.counts.nodes,
        relations: round.commit.counts.relations,
        unresolved: round.commit.counts.unresolved,
      });
      const state = {
        head: built.header.round,
        headDigest: built.digest,
        throughSeq: through,
        inputDigest: built.header.input_digest,
        parser: PARSER,
        policy: POLICY,
      };
      afterSync(() => saveConversationState(root, session, state));
    }
    result.status = result.rounds.length ? 'written' : 'unchanged';
    const last = result.rounds[result.rounds.length - 1];
    if (last && fold.headDigest) deferred?.written?.(session, fold, headKey(roundName(fold.rounds, fold.headDigest), last.bytes), index);
    result.throughSeq = through;
    result.head = fold.rounds;
    result.headDigest = fold.headDigest;
    assembled ??= assemble({ session, entries });
    result.summary = summarize(assembled);
    return result;
  } finally {
    unlock();
  }
}

/** The whole conversation's counts, with the denominators a reader needs for tools and children. */
function summarize(a: ReturnType<typeof assemble>): NonNullable<ParseResult['summary']> {
  let talks = 0,
    runs = 0,
    toolsTotal = 0,
    toolsJoined = 0,
    children = 0;
  for (const n of a.nodes.values()) {
    if (n.kind === 'talk') talks++;
    else if (n.kind === 'run') runs++;
    if (n.kind === 'tool' || n.kind === 'agent.call') {
      toolsTotal++;
      if (n.attrs?.result_join === 'exact_unique') toolsJoined++;
    }
    if (n.kind === 'stream' && n.attrs?.role === 'child') children++;
  }
  const steps = headerCounts(a.nodes.values(), 0).steps;
  const orphans = [...a.unresolved.values()].filter((u) => u.kind === 'spawn_of_child' && u.state === 'open').length;
  const open = [...a.unresolved.values()].filter((u) => u.state === 'open').length;
  return { talks, runs, steps, tools: { joined: toolsJoined, total: toolsTotal }, children: { joined: children - orphans, total: children }, unresolved: open };
}
