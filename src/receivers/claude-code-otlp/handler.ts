/**
 * What the receiver does with one export request, whatever carried it (gRPC or HTTP): drop an
 * exact retry, check the bytes, then land — metrics requests in the spool as received, log
 * records and spans in their sessions — and answer only once everything is durable.
 */
import { OtlpRequestError, checkedRequest, type BodyFormat, type PartialSuccess, type RefusalReason } from '../../otlp/codec.js';
import type { Signal } from '../../otlp/proto.js';
import { logsRequestGroups, tracesRequestGroups, type ResourceGroup } from '../../otlp/requests.js';
import { resourceHeader, scopeHeader, type PlainObject } from '../../otlp/plain.js';
import {
  OTLP_LOGS_SRC, OTLP_TRACES_SRC, badSessionId, otlpLogRecordToSd, otlpSessionOf, otlpSpanToSd, type OtlpConverted,
} from '../../adapters/claude-code/otlp-dialect.js';
import { LandPool } from './land-pool.js';
import { MetricsSpool } from './metrics-spool.js';
import { RetryWindow } from './retry-window.js';
import { SessionLanding, type LandItem, type OtlpKind } from './session-landing.js';
import { ITEM_OF, cloneStats, emptyStats, type ItemRefusalReason, type OtlpReceiverStats, type Transport } from './stats.js';

export type ExportResult = { ok: true; partial?: PartialSuccess } | { ok: false; error: OtlpRequestError };

export type LogLevel = 'debug' | 'info' | 'warn' | 'error';
export type ReceiverLog = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;

export interface HandlerOptions {
  storageRoot: string;
  maxRequestBytes: number;
  maxSpoolBytes: number;
  lockWaitMs: number;
  log: ReceiverLog;
}

export class ExportHandler {
  readonly stats: OtlpReceiverStats = emptyStats();
  private readonly window = new RetryWindow();
  private readonly pool: LandPool;
  private readonly spool: MetricsSpool;
  private readonly landing: SessionLanding;
  private active = 0;
  private inflightBytes = 0;
  private readonly maxInflightBytes: number;
  private idleWaiters: (() => void)[] = [];
  private closing = false;
  private readonly lastWarn = new Map<string, { at: number; suppressed: number }>();

  constructor(private readonly o: HandlerOptions) {
    this.pool = new LandPool(o.storageRoot);
    this.spool = new MetricsSpool(o.storageRoot, this.pool, { maxSpoolBytes: o.maxSpoolBytes, lockWaitMs: o.lockWaitMs });
    this.landing = new SessionLanding(this.pool, { lockWaitMs: o.lockWaitMs });
    // Bodies held at once: enough for several large requests, bounded so memory stays flat under load.
    this.maxInflightBytes = Math.max(4 * o.maxRequestBytes, 64 * 1024 * 1024);
  }

  /** Current counters, with the landing's own file count. */
  snapshot(): OtlpReceiverStats {
    const s = cloneStats(this.stats);
    s.landed.files = this.landing.files;
    return s;
  }

  async open(): Promise<void> {
    this.pool.start();
    try {
      await this.spool.open();
    } catch (err) {
      await this.pool.close().catch(() => {});
      throw err;
    }
    this.stats.spool_bytes = this.spool.bytes;
  }

  /** After `idle`: writes the pending state files and stops the landing threads. */
  async release(): Promise<void> {
    await this.pool.close();
  }

  /** From now on every request is refused as retryable (503 / UNAVAILABLE). */
  close(): void {
    this.closing = true;
  }

  /** Resolves when no request is being handled and nothing is being landed. */
  async idle(): Promise<void> {
    if (this.active > 0) await new Promise<void>((r) => this.idleWaiters.push(r));
    await Promise.all([this.spool.idle(), this.landing.idle()]);
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
      const landedSessions: string[] = [];
      try {
        const result = await this.process(signal, body, format, this.window.landedSessions(key), landedSessions);
        finish(result.ok ? { rejected: result.partial?.rejected ?? 0, message: result.partial?.message ?? '' } : undefined, landedSessions);
        return result;
      } catch (err) {
        finish(undefined, landedSessions);
        throw err;
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

  private async process(signal: Signal, body: Buffer, format: BodyFormat, skip: ReadonlySet<string>, landedSessions: string[]): Promise<ExportResult> {
    let checked;
    try {
      checked = checkedRequest(signal, body, format);
    } catch (err) {
      if (err instanceof OtlpRequestError) this.countRefusal(signal, err);
      throw err;
    }
    const item = ITEM_OF[signal];
    if (signal === 'metrics') {
      if (checked.bytes.length > 0) {
        try {
          await this.spool.land(checked.bytes);
        } catch (err) {
          if (err instanceof OtlpRequestError) this.countRefusal(signal, err, checked.items);
          throw err;
        } finally {
          this.stats.spool_bytes = this.spool.bytes;
        }
        this.stats.landed.spool_files++;
      }
      this.stats.accepted[item] += checked.items;
      return { ok: true };
    }

    const plan = signal === 'logs'
      ? this.plan(logsRequestGroups(checked.bytes), 'otlp_log', OTLP_LOGS_SRC, otlpLogRecordToSd, skip)
      : this.plan(tracesRequestGroups(checked.bytes), 'otlp_span', OTLP_TRACES_SRC, otlpSpanToSd, skip);
    const sessions = [...plan.bySession.keys()];
    const results = await Promise.allSettled(sessions.map((s) => this.landing.land(s, plan.bySession.get(s)!)));
    let failure: OtlpRequestError | undefined;
    let failedItems = 0;
    for (const [i, r] of results.entries()) {
      const n = plan.bySession.get(sessions[i]!)!.length;
      if (r.status === 'fulfilled') {
        landedSessions.push(sessions[i]!);
        this.stats.accepted[item] += n;
        this.stats.landed.records += n;
      } else {
        failure ??= r.reason instanceof OtlpRequestError ? r.reason : new OtlpRequestError('storage_error', String(r.reason), 5);
        failedItems += n;
      }
    }
    // Items skipped as landed by an earlier attempt were counted then.
    for (const [reason, n] of plan.refusedItems) {
      this.stats.refused_items[reason] = (this.stats.refused_items[reason] ?? 0) + n;
      this.stats.refused[item] += n;
    }
    if (failure) {
      this.countRefusal(signal, failure, failedItems);
      return { ok: false, error: failure };
    }
    if (plan.rejected > 0) {
      this.warn(plan.reasons[0] ?? 'no_session_id', `OTLP ${signal}: ${plan.message}`, { signal, rejected: plan.rejected });
      return { ok: true, partial: { rejected: plan.rejected, message: plan.message } };
    }
    return { ok: true };
  }

  /** Groups a request's items by session, converting each; items with no usable session are refused singly. */
  private plan<T extends { attributes: PlainObject }>(
    groups: ResourceGroup<T>[], kind: OtlpKind, src: string, convert: (m: T) => OtlpConverted, skip: ReadonlySet<string>,
  ) {
    const bySession = new Map<string, LandItem[]>();
    const refusedItems = new Map<ItemRefusalReason, number>();
    const bad = new Set<string>();
    let skipped = 0;
    for (const g of groups) {
      const resource = resourceHeader(g.resource);
      for (const sg of g.scopes) {
        const scope = scopeHeader(sg.scope);
        const groupKey = JSON.stringify([resource, scope]);
        for (const it of sg.items) {
          const session = otlpSessionOf(it.message.attributes, g.resource?.attributes);
          const why: ItemRefusalReason | undefined = !session ? 'no_session_id' : badSessionId(session) ? 'bad_session_id' : undefined;
          if (why) {
            refusedItems.set(why, (refusedItems.get(why) ?? 0) + 1);
            if (session) bad.add(session);
            continue;
          }
          if (skip.has(session!)) {
            skipped++;
            continue;
          }
          const list = bySession.get(session!) ?? bySession.set(session!, []).get(session!)!;
          list.push({ kind, src, groupKey, resource, scope, bytes: it.bytes, converted: convert(it.message) });
        }
      }
    }
    const what = kind === 'otlp_log' ? 'log records' : 'spans';
    const msgs: string[] = [];
    const none = refusedItems.get('no_session_id');
    if (none) msgs.push(`${none} ${what} carry no session.id attribute (on the item or its resource) and were not landed`);
    const badN = refusedItems.get('bad_session_id');
    if (badN) msgs.push(`${badN} ${what} carry a session.id that cannot name a directory (${[...bad].slice(0, 3).map((s) => JSON.stringify(s.slice(0, 60))).join(', ')}) and were not landed`);
    const rejected = (none ?? 0) + (badN ?? 0);
    return { bySession, refusedItems, skipped, rejected, message: msgs.join('; '), reasons: [...refusedItems.keys()] };
  }
}
