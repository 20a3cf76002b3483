/**
 * What the receiver does with one export request, whatever carried it (gRPC or HTTP): drop an
 * exact retry, check the bytes, find which items have no usable session (refused singly, as
 * OTLP's partial success), append the request to the journal and answer once it is written there
 * (or synced, under `durability: machine`). The landing thread lands it afterwards — metrics
 * requests in the spool as received, log records and spans in their sessions (landing/).
 */
import { join } from 'node:path';
import { OtlpRequestError, checkedRequest, type BodyFormat, type PartialSuccess, type RefusalReason } from '../../otlp/codec.js';
import type { Signal } from '../../otlp/proto.js';
import { itemStringAttribute } from '../../otlp/item-attribute.js';
import { SESSION_ATTRIBUTE, badSessionId } from '../../adapters/claude-code/otlp-dialect.js';
import { nowNs } from '../../util/time.js';
import { Journal, type Durability } from './journal.js';
import { JOURNAL_DIR } from './journal-format.js';
import { Lander } from './lander.js';
import { METRICS_DIR } from '../../storage/metrics-spool.js';
import { RetryWindow } from './retry-window.js';
import type { ReceiverLog } from './log.js';
import { ITEM_OF, cloneStats, emptyStats, type ItemRefusalReason, type OtlpReceiverStats, type Transport } from './stats.js';

export type ExportResult = { ok: true; partial?: PartialSuccess } | { ok: false; error: OtlpRequestError };

export interface HandlerOptions {
  storageRoot: string;
  /** The journal's directory name under `<root>/_journal/` (one per receiver instance). */
  journalName: string;
  maxRequestBytes: number;
  maxSpoolBytes: number;
  /** Bytes accepted but not yet landed past which requests are refused as retryable. */
  maxJournalBytes: number;
  lockWaitMs: number;
  /** When an answer may go out: once the request is written to the journal, or once it is synced. */
  durability: Durability;
  /**
   * Whether received metrics go into the `_metrics/` spool. Only a metrics pipeline reads the spool;
   * without one they are answered (Claude Code must not see errors) and counted, not kept.
   */
  keepMetrics?: boolean;
  log: ReceiverLog;
}

/** What the request thread answers a logs or traces request with, decided from the bytes alone. */
interface ItemPlan {
  landable: number;
  refusedItems: Map<ItemRefusalReason, number>;
  rejected: number;
  message: string;
}

/**
 * Landing stops pacing itself once this much is accepted and not landed (or a quarter of
 * max_journal_bytes, if less): what a pass or a shutdown may have to wait for stays a second or
 * two of landing.
 */
const PACE_BACKLOG_CAP = 64 * 1024 * 1024;

export class ExportHandler {
  readonly stats: OtlpReceiverStats = emptyStats();
  private readonly window = new RetryWindow();
  private readonly journal: Journal;
  private lander?: Lander;
  private active = 0;
  private inflightBytes = 0;
  private readonly maxInflightBytes: number;
  private idleWaiters: (() => void)[] = [];
  private closing = false;
  private readonly lastWarn = new Map<string, { at: number; suppressed: number }>();
  /** Metrics requests journaled but maybe not yet in the spool: their end positions and sizes, oldest first. */
  private metricsPending: { end: number; bytes: number }[] = [];
  /** The first entry of metricsPending still waiting; those before it have landed. */
  private metricsPendingHead = 0;
  private metricsPendingBytes = 0;

  constructor(private readonly o: HandlerOptions) {
    this.journal = new Journal(join(o.storageRoot, JOURNAL_DIR, o.journalName), o.durability);
    // Bodies held at once: enough for several large requests, bounded so memory stays flat under load.
    this.maxInflightBytes = Math.max(4 * o.maxRequestBytes, 64 * 1024 * 1024);
  }

  /** Current counters. */
  snapshot(): OtlpReceiverStats {
    const s = cloneStats(this.stats);
    s.journal_bytes = this.lander ? this.journal.pendingBytes(this.lander.landedThrough) : 0;
    s.waiting_sessions = this.lander?.waitingSessions ?? 0;
    return s;
  }

  /** Opens the journal (recovering it after a crash) and starts the landing thread, which lands what it held first. */
  async open(): Promise<void> {
    this.journal.onLog = (level, msg) => this.o.log(level, msg, { journal: this.journal.dir });
    const rec = await this.journal.open();
    if (rec.tornBytes > 0) {
      this.o.log(
        'warn',
        `the receiver's journal ended in ${rec.tornBytes} bytes of an incomplete write (a crash before it was synced, so never acknowledged); they were cut`,
        { journal: this.journal.dir, bytes: rec.tornBytes },
      );
    }
    if (rec.to > rec.from)
      this.o.log('info', `the receiver's journal holds ${rec.to - rec.from} bytes accepted but not landed before the last stop; landing them first`, {
        journal: this.journal.dir,
      });
    const lander = new Lander(
      {
        root: this.o.storageRoot,
        journalDir: this.journal.dir,
        from: rec.from,
        to: rec.to,
        lockWaitMs: this.o.lockWaitMs,
        paceBelowBytes: Math.min(Math.floor(this.o.maxJournalBytes / 4), PACE_BACKLOG_CAP),
      },
      this.o.log,
    );
    lander.onProgress = (p) => {
      this.stats.landed.files += p.files;
      this.stats.landed.records += p.records;
      this.stats.landed.spool_files += p.spoolFiles;
      this.stats.damaged_entries += p.damaged;
      for (const [reason, n] of Object.entries(p.quarantined)) this.stats.quarantined_records[reason] = (this.stats.quarantined_records[reason] ?? 0) + n;
      this.stats.spool_bytes = p.spoolBytes;
      // A head index, not shift(): thousands wait at once under load, and shift is linear in them.
      let n = this.metricsPendingHead;
      while (n < this.metricsPending.length && this.metricsPending[n]!.end <= p.landedThrough) this.metricsPendingBytes -= this.metricsPending[n++]!.bytes;
      this.metricsPendingHead = n;
      if (n > 1024 && n * 2 > this.metricsPending.length) {
        this.metricsPending = this.metricsPending.slice(n);
        this.metricsPendingHead = 0;
      }
    };
    try {
      await lander.start();
    } catch (err) {
      await lander.close(1000).catch(() => {});
      await this.journal.close();
      throw err;
    }
    this.lander = lander;
    this.journal.onDurable = (end) => lander.durable(end);
    this.stats.spool_bytes = lander.spoolBytes;
  }

  /**
   * After `idle`: waits up to `timeoutMs` for everything accepted to land, writes the pending
   * state files, stops the landing thread and closes the journal. What has not landed by then
   * stays in the journal and lands at the next start.
   */
  async release(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    // The last sync, bounded: a disk that hangs in fdatasync must not hold shutdown past its deadline.
    let timer: NodeJS.Timeout | undefined;
    const synced = await Promise.race([
      this.journal.idle().then(() => true),
      new Promise<false>((r) => (timer = setTimeout(() => r(false), Math.max(0, timeoutMs / 2)))),
    ]).finally(() => clearTimeout(timer));
    if (!synced)
      this.o.log(
        'warn',
        `the OTLP receiver's journal did not finish its last sync in time; what was written after the last sync lands at the next start if the machine does not crash first`,
        { journal: this.journal.dir },
      );
    if (this.lander) {
      const all = await this.lander.landed(this.journal.durableEnd, Math.max(0, deadline - Date.now()));
      if (!all) {
        this.o.log(
          'warn',
          `the OTLP receiver stops with ${this.journal.pendingBytes(this.lander.landedThrough)} accepted bytes not yet landed; they stay in its journal and land at the next start`,
          { journal: this.journal.dir },
        );
      }
      await this.lander.close(Math.max(100, deadline - Date.now()));
    }
    await this.journal.close();
  }

  /**
   * Resolves once everything accepted so far has landed (true), or after `timeoutMs` (false):
   * for the service's pass, so that what it parses includes every request answered before it.
   */
  async landed(timeoutMs: number): Promise<boolean> {
    if (!this.lander) return true;
    // The end of what was taken so far, not an idle journal: under steady load the journal is never idle.
    return this.lander.landed(this.journal.acceptedEnd, timeoutMs);
  }

  /** What keeps the receiver from taking or landing requests now (empty when nothing does). */
  problems(): string[] {
    const out: string[] = [];
    const j = this.journal.failed;
    if (j) out.push(j.message);
    if (this.lander?.failed) out.push(`the landing thread failed (accepted requests wait in the journal for the next start): ${this.lander.failed.message}`);
    const failing = this.lander?.failing;
    if (failing)
      out.push(
        `landing is failing since ${new Date(failing.sinceMs).toISOString()} (accepted requests wait in the journal and landing retries): ${failing.message}`,
      );
    return out;
  }

  /** From now on every request is refused as retryable (503 / UNAVAILABLE). */
  close(): void {
    this.closing = true;
  }

  /** Resolves when no request is being handled. */
  async idle(): Promise<void> {
    if (this.active > 0) await new Promise<void>((r) => this.idleWaiters.push(r));
    await this.journal.idle();
  }

  /** Whether a body of `bytes` may be read now; past the bound the client is told to come back. */
  admits(bytes: number): boolean {
    return this.inflightBytes + bytes <= this.maxInflightBytes || this.inflightBytes === 0;
  }

  /** Counts a request refused before it reached `handle` (by the transport: size, media type, path). */
  refused(transport: Transport, signal: Signal | undefined, error: OtlpRequestError, items?: number): ExportResult {
    this.stats.requests[transport]++;
    this.countRefusal(signal, error, items);
    return { ok: false, error };
  }

  private countRefusal(signal: Signal | undefined, error: OtlpRequestError, items?: number): void {
    this.stats.refused_requests[error.reason] = (this.stats.refused_requests[error.reason] ?? 0) + 1;
    if (signal && items) this.stats.refused[ITEM_OF[signal]] += items;
    this.warn(error.reason, `OTLP ${signal ?? ''} request refused (${error.reason}): ${error.message}`.replace('  ', ' '), { reason: error.reason, signal });
  }

  /** Logs a refusal, at most once a second per reason, saying how many were not logged since. */
  private warn(reason: RefusalReason | ItemRefusalReason, msg: string, fields: Record<string, unknown>): void {
    const now = Date.now();
    const last = this.lastWarn.get(reason);
    if (last && now - last.at < 1000) {
      last.suppressed++;
      return;
    }
    this.lastWarn.set(reason, { at: now, suppressed: 0 });
    this.o.log('warn', msg, last?.suppressed ? { ...fields, suppressed_since_last: last.suppressed } : fields);
  }

  /**
   * One request. `wire` is the body as it came (before any Content-Encoding was undone), the
   * identity of an exact retry; `body` is the decoded body in `format`.
   */
  async handle(signal: Signal, transport: Transport, wire: Buffer, body: Buffer, format: BodyFormat): Promise<ExportResult> {
    this.stats.requests[transport]++;
    if (this.closing) {
      const error = new OtlpRequestError('shutting_down', 'the receiver is shutting down; send again to its next instance', 5);
      this.countRefusal(signal, error);
      return { ok: false, error };
    }
    this.active++;
    this.inflightBytes += body.length;
    try {
      const key = RetryWindow.key(`${signal}|${format}`, wire);
      const seen = this.window.lookup(key);
      const prior = seen && 'inflight' in seen ? await seen.inflight : seen?.outcome;
      if (prior) {
        this.stats.requests.duplicates++;
        return { ok: true, partial: prior.rejected ? prior : undefined };
      }
      const finish = this.window.begin(key);
      let result: ExportResult | undefined;
      try {
        result = await this.process(signal, body, format);
        return result;
      } finally {
        finish(result?.ok ? { rejected: result.partial?.rejected ?? 0, message: result.partial?.message ?? '' } : undefined);
      }
    } catch (err) {
      if (err instanceof OtlpRequestError) return { ok: false, error: err };
      // A bug, not bad input: answered 500 / INTERNAL, counted and logged with its stack.
      const error = new OtlpRequestError('internal', `internal error: ${(err as Error).message}`);
      this.countRefusal(signal, error);
      this.o.log('error', 'the OTLP receiver failed on a request', { signal, error: (err as Error).stack });
      return { ok: false, error };
    } finally {
      this.inflightBytes -= body.length;
      if (--this.active === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  private async process(signal: Signal, body: Buffer, format: BodyFormat): Promise<ExportResult> {
    let checked;
    try {
      checked = checkedRequest(signal, body, format);
    } catch (err) {
      if (err instanceof OtlpRequestError) this.countRefusal(signal, err);
      throw err;
    }
    const item = ITEM_OF[signal];
    if (signal === 'metrics' && this.o.keepMetrics === false) {
      if (this.stats.unkept_metric_points === 0)
        this.o.log('info', 'metrics are answered but not kept: no metrics pipeline includes this receiver, so nothing would read the spool', {
          points: checked.items,
        });
      this.stats.unkept_metric_points += checked.items;
      return { ok: true };
    }
    const plan = signal === 'metrics' ? undefined : this.plan(signal, checked.bytes);
    const accepted = plan ? plan.landable : checked.items;
    // Nothing to land (an empty request, or no item with a usable session): nothing to journal.
    if (accepted > 0 || (signal === 'metrics' && checked.bytes.length > 0)) {
      try {
        await this.append(signal, checked.bytes);
      } catch (err) {
        const e = err instanceof OtlpRequestError ? err : new OtlpRequestError('storage_error', (err as Error).message, 5);
        this.countRefusal(signal, e, checked.items);
        throw e;
      }
    }
    this.stats.accepted[item] += accepted;
    if (!plan) return { ok: true };
    for (const [reason, n] of plan.refusedItems) {
      this.stats.refused_items[reason] = (this.stats.refused_items[reason] ?? 0) + n;
      this.stats.refused[item] += n;
    }
    if (plan.rejected > 0) {
      this.warn([...plan.refusedItems.keys()][0] ?? 'no_session_id', `OTLP ${signal}: ${plan.message}`, { signal, rejected: plan.rejected });
      return { ok: true, partial: { rejected: plan.rejected, message: plan.message } };
    }
    return { ok: true };
  }

  /** Appends to the journal, unless the spool or the journal is at its limit; resolves once it is as safe as `durability` asks. */
  private async append(signal: Signal, bytes: Buffer): Promise<void> {
    const lander = this.lander;
    if (!lander) throw new OtlpRequestError('storage_error', 'the receiver has not opened its journal', 5);
    if (lander.failed) throw new OtlpRequestError('storage_error', `the receiver cannot land requests: ${lander.failed.message}`, 5);
    const max = this.o.maxSpoolBytes;
    const spoolFull = () => signal === 'metrics' && max > 0 && lander.spoolBytes + this.metricsPendingBytes + bytes.length > max;
    // Exporters remove sent files from the spool: at the limit, count it again before refusing.
    if (spoolFull()) await lander.rescanSpool();
    if (spoolFull()) {
      throw new OtlpRequestError(
        'spool_full',
        `the metrics spool ${join(this.o.storageRoot, METRICS_DIR)} holds ${lander.spoolBytes + this.metricsPendingBytes} bytes, at its limit of ${max} (max_spool_bytes); try again later`,
        30,
      );
    }
    const pending = this.journal.pendingBytes(lander.landedThrough);
    if (pending > 0 && pending + bytes.length > this.o.maxJournalBytes) {
      const why = lander.waitingSessions > 0 ? ` (${lander.waitingSessions} sessions wait for a lock another collector holds)` : '';
      throw new OtlpRequestError(
        'backlog_full',
        `the receiver holds ${pending} bytes accepted but not yet landed, at its limit of ${this.o.maxJournalBytes} (max_journal_bytes)${why}; try again shortly`,
        1,
      );
    }
    lander.arrived();
    if (signal === 'metrics') {
      this.metricsPendingBytes += bytes.length;
      // Its end is not known until it is written; the last position is an upper bound that only delays the release.
      const entry = { end: Number.MAX_SAFE_INTEGER, bytes: bytes.length };
      this.metricsPending.push(entry);
      try {
        entry.end = await this.journal.append(signal, bytes, nowNs());
      } catch (err) {
        const at = this.metricsPending.indexOf(entry, this.metricsPendingHead);
        if (at >= 0) this.metricsPending.splice(at, 1);
        this.metricsPendingBytes -= bytes.length;
        throw new OtlpRequestError('storage_error', (err as Error).message, 5);
      }
      return;
    }
    try {
      await this.journal.append(signal, bytes, nowNs());
    } catch (err) {
      throw new OtlpRequestError('storage_error', (err as Error).message, 5);
    }
  }

  /** Which items of a logs or traces request have a session to land in; the rest are refused singly. */
  private plan(signal: 'logs' | 'traces', bytes: Buffer): ItemPlan {
    const refusedItems = new Map<ItemRefusalReason, number>();
    /** Each refused session id with the rule's reason (a request names a few sessions at most). */
    const bad = new Map<string, string>();
    let landable = 0;
    for (const session of itemStringAttribute(signal, bytes, SESSION_ATTRIBUTE)) {
      const problem = session ? (bad.get(session) ?? badSessionId(session)) : undefined;
      const why: ItemRefusalReason | undefined = !session ? 'no_session_id' : problem ? 'bad_session_id' : undefined;
      if (!why) {
        landable++;
        continue;
      }
      refusedItems.set(why, (refusedItems.get(why) ?? 0) + 1);
      if (session && problem) bad.set(session, problem);
    }
    const what = signal === 'logs' ? 'log records' : 'spans';
    const msgs: string[] = [];
    const none = refusedItems.get('no_session_id');
    if (none) msgs.push(`${none} ${what} carry no session.id attribute (on the item or its resource) and were not landed`);
    const badN = refusedItems.get('bad_session_id');
    if (badN)
      msgs.push(
        `${badN} ${what} carry a session.id that cannot name a directory and were not landed: ${[...bad]
          .slice(0, 3)
          .map(([id, problem]) => `${JSON.stringify(id.length > 60 ? id.slice(0, 60) + '…' : id)} (${problem})`)
          .join(', ')}${bad.size > 3 ? ` and ${bad.size - 3} more` : ''}`,
      );
    return { landable, refusedItems, rejected: (none ?? 0) + (badN ?? 0), message: msgs.join('; ') };
  }
}
