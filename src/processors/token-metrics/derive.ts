/**
 * Deriving `claude_code.token.usage` from the landed transcripts, by the assembler's rule:
 *
 * - A provider call is every record sharing a call id; its usage is its last fragment's in line
 *   order, never a sum, and it counts only when one of its fragments reports a stop reason (the
 *   `finished` flag): an unfinished call's usage block is a streaming stub, not a count.
 * - A call cut at a landed file boundary is read on into the next transcript files of its stream
 *   only when the file's last record is a fragment of that call, and the reading stops at the
 *   first record that is not. So a call cut next to one of its own tool results is read short:
 *   on a child stream (where only the last fragment says the call finished) it is left out.
 * - Every call is decided once, in the file it is first met in: counted, or left out. A call is
 *   never counted twice however many files its records reach, and a record the runtime re-emitted
 *   before a context reset is the same call again.
 * - Under the service, a file whose last record is a fragment of an undecided call, with no next
 *   file of its stream landed yet, waits `grace` for it, then is derived with what it has. A file
 *   ending in anything else (a tool result) does not wait; a one-shot derivation never waits.
 * - Points are summed per minute (the minute the call's last fragment was written) and series
 *   (session, model, query_source; the four types together), and the windows of a series never
 *   overlap: a window whose series already reaches past its minute starts where the series ends.
 * - The root's first derivation counts no call older than `lookback` in the files landed by then.
 */
import { dirname, join } from 'node:path';
import { readSessionData } from '../../formats/session-data/decode.js';
import type { SdRecord } from '../../formats/session-data/types.js';
import { landedSessions, listLanded, type LandedFileRef } from '../../storage/landed-files.js';
import { MAIN_STREAM, parseLandedName } from '../../storage/layout.js';
import { FileLock } from '../../storage/lock.js';
import { writeOnce } from '../../storage/write-once.js';
import { METRICS_DIR, MetricsSpool, receiptPath } from '../../storage/metrics-spool.js';
import { readFileSync, existsSync, unlinkSync } from 'node:fs';
import { encodeTokenUsage, type QuerySource, type Window } from '../../otlp/token-usage.js';
import { mcpCallsIn, mcpWindows, type McpCallSeen } from './mcp-calls.js';
import {
  applyReceipt,
  listReceipts,
  loadSessionState,
  metricsStateDir,
  readReceipt,
  rootState,
  saveSessionState,
  seriesKey,
  writeReceipt,
  type Receipt,
  type RootMetricsState,
  type SessionMetricsState,
} from './state.js';

export interface DeriveOptions {
  root: string;
  lookbackMs: number;
  /** 0: never wait for a continuation (a one-shot derivation). */
  graceMs: number;
  /** Remembered across passes: when each waiting file was first seen waiting (ms). */
  waiting?: Map<string, number>;
  now?: () => number;
  signal?: AbortSignal;
  /** Only this session. */
  session?: string;
  /**
   * False when the runtime's own token usage is received in the same pipeline: then only what the
   * runtime does not send (the MCP metrics) is derived, never a second copy of its tokens.
   */
  tokens?: boolean;
}

export interface DeriveReport {
  sessions: number;
  /** Landed transcript files derived this pass. */
  files: number;
  /** Calls decided this pass, and of those: counted, unfinished (left out), outside the look-back. */
  calls: number;
  counted: number;
  unfinished: number;
  outside_lookback: number;
  /** MCP calls counted this pass (agent.mcp.calls). */
  mcp_calls: number;
  /** Derived requests written to the spool. */
  spooled: number;
  windows: number;
  /** Files waiting for the next file of their stream. */
  waiting: number;
  /** Sessions another process was deriving. */
  busy: number;
  /** Receipts of an interrupted pass applied. */
  recovered: number;
  problems: string[];
}

const MINUTE = 60_000;
const TOKENS = { input: 'in', output: 'out', cacheRead: 'cache_read', cacheCreation: 'cache_write' } as const;

const has = (r: SdRecord, flag: string) => r.flags?.includes(flag) ?? false;

interface Call {
  frags: SdRecord[];
}

interface Accum {
  model: string;
  qs: QuerySource;
  minute: number;
  tokens: { input: number; output: number; cacheRead: number; cacheCreation: number };
}

export async function deriveTokenUsage(o: DeriveOptions): Promise<DeriveReport> {
  const r: DeriveReport = {
    sessions: 0,
    files: 0,
    calls: 0,
    counted: 0,
    unfinished: 0,
    outside_lookback: 0,
    mcp_calls: 0,
    spooled: 0,
    windows: 0,
    waiting: 0,
    busy: 0,
    recovered: 0,
    problems: [],
  };
  const now = o.now ?? Date.now;
  o.waiting ??= new Map();
  const list = o.session ? [o.session] : landedSessions(o.root);
  let rs: RootMetricsState | undefined;
  for (const session of list) {
    if (o.signal?.aborted) break;
    const landed = listLanded(o.root, session).filter((f) => f.prefix === 'transcript');
    if (landed.length === 0) continue;
    rs ??= rootState(o.root, o.lookbackMs, now());
    try {
      new SessionDerivation(o, r, session, rs, now).run(landed);
    } catch (err) {
      r.problems.push(`${session}: ${(err as Error).message}`);
    }
    await new Promise((res) => setImmediate(res));
  }
  return r;
}

class SessionDerivation {
  private readonly cache = new Map<number, SdRecord[]>();
  private state!: SessionMetricsState;

  constructor(
    private readonly o: DeriveOptions,
    private readonly r: DeriveReport,
    private readonly session: string,
    private readonly rs: RootMetricsState,
    private readonly now: () => number,
  ) {}

  run(landed: LandedFileRef[]): void {
    const lock = new FileLock(join(metricsStateDir(this.o.root, this.session), '.lock'));
    if (!lock.tryAcquire()) {
      this.r.busy++;
      return;
    }
    try {
      lock.removeDeadLeftovers();
      this.state = loadSessionState(this.o.root, this.session);
      this.recover();
      const pending = landed.filter((f) => !this.state.derived.has(f.seq));
      if (pending.length === 0) return;
      this.r.sessions++;
      const streams = new Map<string, LandedFileRef[]>();
      for (const f of landed) {
        const k = dirname(f.path);
        (streams.get(k) ?? streams.set(k, []).get(k)!).push(f);
      }
      for (const files of streams.values()) {
        files.sort((a, b) => a.seq - b.seq);
        for (let i = 0; i < files.length; i++) {
          const f = files[i]!;
          if (this.state.derived.has(f.seq)) continue;
          let records: SdRecord[];
          let header;
          try {
            ({ header, records } = this.read(f));
          } catch (err) {
            this.r.problems.push(`${f.rel}: ${(err as Error).message}; its stream waits until it reads`);
            break;
          }
          const outcome = this.deriveFile(f, header, records, files.slice(i + 1), files.slice(0, i));
          if (outcome === 'wait') break; // later files of the stream wait with it
        }
      }
    } finally {
      lock.release();
    }
  }

  private read(f: LandedFileRef): { header: { at: string; stream?: string }; records: SdRecord[] } {
    const { header, records } = readSessionData(f.path);
    this.cache.set(f.seq, records);
    return { header, records };
  }

  private records(f: LandedFileRef): SdRecord[] {
    return this.cache.get(f.seq) ?? this.read(f).records;
  }

  /** Receipts of a pass whose state was not saved: the spool already holds (or gets) their requests. */
  private recover(): void {
    const receipts = listReceipts(this.o.root, this.session);
    if (receipts.length === 0) return;
    for (const { seq, path } of receipts) {
      if (this.state.derived.has(seq)) continue;
      const rc = readReceipt(path);
      this.spool(rc);
      applyReceipt(this.state, rc);
      this.r.recovered++;
    }
    saveSessionState(this.o.root, this.session, this.state);
    for (const { path } of receipts)
      try {
        unlinkSync(path);
      } catch {
        /* gone */
      }
  }

  private spool(rc: Receipt): void {
    const path = join(this.o.root, METRICS_DIR, rc.spool);
    const bytes = encodeTokenUsage(this.session, rc.windows, rc.mcp ?? []);
    if (existsSync(path)) {
      if (!readFileSync(path).equals(bytes))
        this.r.problems.push(`${METRICS_DIR}/${rc.spool}: already in the spool with other bytes than its receipt gives; kept as it is`);
      return;
    }
    writeOnce(path, bytes);
    this.r.spooled++;
  }

  /** The stream's earlier files, newest first, read only as far as a caller goes. */
  private *newestFirst(before: LandedFileRef[]): Generator<SdRecord[]> {
    for (let i = before.length - 1; i >= 0; i--) {
      try {
        yield this.records(before[i]!);
      } catch {
        return; // a file that does not read ends the look-back; it is reported when its turn comes
      }
    }
  }

  private deriveFile(
    f: LandedFileRef,
    header: { at: string; stream?: string },
    records: SdRecord[],
    after: LandedFileRef[],
    before: LandedFileRef[],
  ): 'done' | 'wait' {
    const decided = this.state.decided;
    const calls = new Map<string, Call>();
    for (const rec of records) if (rec.call) (calls.get(rec.call) ?? calls.set(rec.call, { frags: [] }).get(rec.call)!).frags.push(rec);
    // A call cut at the end of this file: read on while the next records are its fragments.
    const last = records[records.length - 1];
    if (last?.call && !decided.has(last.call)) {
      const x = last.call;
      const call = calls.get(x)!;
      let cutAtEnd = true;
      read: for (const g of after) {
        let recs: SdRecord[];
        try {
          recs = this.records(g);
        } catch {
          break; // a file that does not read ends the reading; it is reported when its turn comes
        }
        for (const rec of recs) {
          if (rec.call !== x) {
            cutAtEnd = false;
            break read;
          }
          call.frags.push(rec);
        }
      }
      // On a child stream only the last fragment reports a stop reason: once it is read, nothing is left to wait for.
      const complete = header.stream !== undefined && header.stream !== MAIN_STREAM && call.frags.some((x) => has(x, 'finished'));
      if (cutAtEnd && !complete && this.o.graceMs > 0) {
        const key = `${this.session}/${f.seq}/${call.frags.length}`;
        const waiting = this.o.waiting!;
        const since = waiting.get(key) ?? this.now();
        waiting.set(key, since);
        if (this.now() - since < this.o.graceMs) {
          this.r.waiting++;
          return 'wait';
        }
        waiting.delete(key);
      }
    }
    const atMs = Date.parse(header.at);
    const bounded = this.rs.cutoff !== undefined && Number.isFinite(atMs) && atMs <= this.rs.firstAt;
    const qs: QuerySource = header.stream === undefined || header.stream === MAIN_STREAM ? 'main' : 'subagent';
    const acc = new Map<string, Accum>();
    const decidedNow: string[] = [];
    // Calls in the order their last fragment was written.
    const ordered = [...calls.entries()].sort((a, b) => a[1].frags.at(-1)!.ord - b[1].frags.at(-1)!.ord || 0);
    for (const [id, call] of this.o.tokens === false ? [] : ordered) {
      if (decided.has(id)) continue;
      decided.add(id);
      decidedNow.push(id);
      this.r.calls++;
      const lastFrag = call.frags[call.frags.length - 1]!;
      if (call.frags.some((x) => has(x, 'synthetic')) || lastFrag.model === '<synthetic>') continue; // the client's own record, no provider call
      if (!call.frags.some((x) => has(x, 'finished'))) {
        this.r.unfinished++;
        continue;
      }
      const t = lastFrag.time ? Date.parse(lastFrag.time) : NaN;
      const at = Number.isFinite(t) ? t : atMs;
      if (bounded && at < this.rs.cutoff!) {
        this.r.outside_lookback++;
        continue;
      }
      this.r.counted++;
      const model = lastFrag.model ?? 'unknown';
      const minute = Math.floor(at / MINUTE) * MINUTE;
      const k = `${seriesKey(model, qs)}\u0000${minute}`;
      const a = acc.get(k) ?? acc.set(k, { model, qs, minute, tokens: { input: 0, output: 0, cacheRead: 0, cacheCreation: 0 } }).get(k)!;
      const u = lastFrag.usage ?? {};
      for (const [type, field] of Object.entries(TOKENS) as [keyof Accum['tokens'], keyof typeof u][]) a.tokens[type] += u[field] ?? 0;
    }
    const windows: Window[] = [];
    const series = new Map(this.state.series);
    for (const a of [...acc.values()].sort((x, y) => x.minute - y.minute || (x.model < y.model ? -1 : x.model > y.model ? 1 : 0))) {
      const key = seriesKey(a.model, a.qs);
      const end = series.get(key);
      const start = end !== undefined && end > a.minute ? end : a.minute;
      series.set(key, start + MINUTE);
      windows.push({ model: a.model, query_source: a.qs, start_ms: start, end_ms: start + MINUTE, tokens: a.tokens });
    }
    // MCP calls ended in this file, each decided once, by its tool use id.
    const mcpKept: { call: McpCallSeen; at: number }[] = [];
    for (const call of mcpCallsIn(records, () => this.newestFirst(before))) {
      const key = `mcp:${call.id}`;
      if (decided.has(key)) continue;
      decided.add(key);
      decidedNow.push(key);
      const at = call.at ?? atMs;
      if (bounded && at < this.rs.cutoff!) {
        this.r.outside_lookback++;
        continue;
      }
      mcpKept.push({ call, at });
    }
    this.r.mcp_calls += mcpKept.length;
    const mcp = mcpWindows(mcpKept, qs, series);
    this.r.files++;
    if (windows.length === 0 && mcp.length === 0) {
      this.state.derived.add(f.seq);
      saveSessionState(this.o.root, this.session, this.state);
      return 'done';
    }
    const stamp = parseLandedName(f.path.slice(f.path.lastIndexOf('/') + 1))!.stamp;
    const rc: Receipt = {
      schema: 1,
      seq: f.seq,
      file: f.rel,
      spool: MetricsSpool.derivedName(stamp, f.seq, this.session),
      calls: decidedNow,
      windows,
      ...(mcp.length ? { mcp } : {}),
    };
    writeReceipt(this.o.root, this.session, rc);
    this.spool(rc);
    applyReceipt(this.state, rc);
    saveSessionState(this.o.root, this.session, this.state);
    try {
      unlinkSync(receiptPath(this.o.root, this.session, f.seq));
    } catch {
      /* gone */
    }
    this.r.windows += windows.length + mcp.length;
    return 'done';
  }
}
