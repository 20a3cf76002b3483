/**
 * One push pass to one receiver: plan what is not yet sent, cut it into requests of at most
 * `batch_bytes` of file bytes, wait for the rate budget, send, and record a request's files in
 * push.state only once the receiver took the request.
 *
 * What an answer does to the pass:
 * - taken: its files are recorded; the next request goes.
 * - a partial success: taken too, as OTLP and asz 0.6 define it (the receiver kept what it could
 *   and asks not to be sent it again); its files are recorded, each with a `rejected` line and
 *   the receiver's reason, counted and reported. Never sent again.
 * - throttled (429, RESOURCE_EXHAUSTED): the pass stops, the rate budget is emptied, and the
 *   next pass waits at least what the receiver said (Retry-After, RetryInfo).
 * - unavailable, timeout, a dropped connection: the pass stops; the next passes back off.
 * - too large (413, gRPC's size limit): a request of several files is cut in two and each half
 *   sent at once; a single file over the limit is refused like below.
 * - refused: this request's files stay unsent and the pass goes on with the next request; the
 *   next watching pass backs off, so a receiver that keeps refusing is not sent the same bytes in
 *   a loop.
 * The next request is read and encoded while the current one is on the wire.
 */
import { readFileSync, statSync } from 'node:fs';
import { FileLock } from '../../storage/lock.js';
import { endpointLockPath, PushState, type PushedFile, type Rejection } from '../../storage/push-state.js';
import { nowNs } from '../../util/time.js';
import { endpointKey, type OtlpExporterConfig } from './config.js';
import { withIdentity } from './encode.js';
import { GrpcTransport } from './grpc-transport.js';
import { HttpTransport } from './http-transport.js';
import { resourceAttributes, type Identity } from '../../otlp/identity.js';
import { ConversationSessions, planLogs, planMetrics, type PlannedFile } from './plan.js';
import type { MetricsSource } from '../../storage/metrics-spool.js';
import { realClock, TokenBucket, type Clock } from './rate.js';
import { BatchBuilder } from './reader.js';
import { sha256 } from './records.js';
import type { SpoolSweepReport } from './spool-retention.js';
import { stopsPass, type ExportSignal, type Outcome, type Transport } from './transport.js';

export type LogFn = (level: 'debug' | 'info' | 'warn' | 'error', msg: string, fields?: Record<string, unknown>) => void;

export interface PusherOptions {
  root: string;
  cfg: OtlpExporterConfig;
  /** Send landed files and rounds (a sessions pipeline with `logs: true`). */
  logs: boolean;
  /** Which spooled metrics to send, if any (a metrics pipeline with `metrics: true`). */
  metrics: MetricsSource | undefined;
  transport?: Transport;
  clock?: Clock;
  log?: LogFn;
  /** Where push.state is kept; the storage root by default (a check that must not touch a root keeps it elsewhere). */
  stateDir?: string;
  /** Counters for the service's own metrics. */
  onSent?: (signal: ExportSignal, items: number) => void;
  onFailed?: (signal: ExportSignal, items: number, reason: string) => void;
  /** Items a receiver rejected in requests it took (partial success), and the files they were in. */
  onRejected?: (signal: ExportSignal, items: number, files: number) => void;
}

/** What receivers rejected in requests they took, this pass. */
export interface RejectedCounts {
  /** Files recorded with a `rejected` line. */
  files: number;
  /** Log records and data points the receiver counted as rejected. */
  items: number;
  /** The receiver's words, one per request. */
  reasons: string[];
}

export interface SignalCounts {
  files: number;
  bytes: number;
  requests: number;
}

export interface PushReport {
  endpoint: string;
  logs: SignalCounts;
  metrics: SignalCounts;
  /** Encoded bytes put on the wire in requests that were taken. */
  wireBytes: number;
  /** Partial successes: taken, recorded, never sent again; listed by `aszcol verify`. */
  rejected: RejectedCounts;
  /** Requests cut in two after a receiver said they were too large. */
  splits: number;
  /** Landed files taken by the receiver less what `hide` withholds, and the records altered in them. */
  withheld: { files: number; records: number };
  /** Files still unsent after this pass (as planned at its start). */
  pending: number;
  /** How long the pass waited for the rate budget (ms). */
  pausedMs: number;
  /** Why nothing was attempted, when nothing was. */
  skipped?: 'backoff' | 'busy' | 'aborted';
  /** The outcome that stopped the pass early, if one did. */
  stoppedBy?: 'throttled' | 'unavailable' | 'timeout';
  /** When the next attempt may start (epoch ms), after a failing pass. */
  retryAt?: number;
  problems: string[];
  durationMs: number;
  /** What the spool retention did after the pass (spool-retention.ts), when it ran. */
  spool?: SpoolSweepReport;
}

interface Batch {
  signal: ExportSignal;
  /** The planned files it was built from, to build smaller requests from when it is too large. */
  planned: PlannedFile[];
  files: PushedFile[];
  body: Buffer;
  /** File bytes (the budget that cut the batch). */
  fileBytes: number;
  items: number;
  withheld?: { files: number; records: number };
}

/** Every spooled metric is Claude Code's: received from its exporter, or derived from its transcripts. */
const RUNTIME_OF_METRICS = 'Claude Code';

const emptyCounts = (): SignalCounts => ({ files: 0, bytes: 0, requests: 0 });
/** Requests read and encoded ahead of the one on the wire: enough to keep the reader busy, few enough to keep memory flat. */
const PREPARE_AHEAD = 2;

export class Pusher {
  readonly endpoint: string;
  private readonly transport: Transport;
  private readonly state: PushState;
  private readonly bucket: TokenBucket;
  private readonly clock: Clock;
  private readonly conv = new ConversationSessions();
  private readonly builder = new BatchBuilder();
  private passNo = 0;
  private readonly identity: Identity;
  private failures = 0;
  private notBefore = 0;
  private metrics: MetricsSource | undefined;

  constructor(private readonly o: PusherOptions) {
    this.endpoint = endpointKey(o.cfg);
    this.transport = o.transport ?? (o.cfg.protocol === 'grpc' ? new GrpcTransport(o.cfg, this.endpoint) : new HttpTransport(o.cfg, this.endpoint));
    this.state = new PushState(o.stateDir ?? o.root);
    this.clock = o.clock ?? realClock;
    this.bucket = new TokenBucket(o.cfg.maxBytesPerMinute, this.clock);
    this.identity = { serviceName: o.cfg.serviceName, instanceId: o.cfg.instanceId, layer: o.cfg.layer };
    this.metrics = o.metrics;
  }

  /** Which spooled metrics later passes send (undefined: none). */
  setMetrics(source: MetricsSource | undefined): void {
    this.metrics = source;
  }

  /** Epoch ms before which a watching pass does not try again (after failures, or a Retry-After). */
  get retryAt(): number {
    return this.notBefore;
  }

  /**
   * One pass. `force` ignores the backoff of earlier failures (a one-shot push). Never throws for
   * a receiver's answer; storage errors (push.state) do throw.
   */
  async pass(opts: { signal?: AbortSignal; force?: boolean } = {}): Promise<PushReport> {
    const started = this.clock.now();
    const r: PushReport = {
      endpoint: this.endpoint,
      logs: emptyCounts(),
      metrics: emptyCounts(),
      wireBytes: 0,
      rejected: { files: 0, items: 0, reasons: [] },
      splits: 0,
      withheld: { files: 0, records: 0 },
      pending: 0,
      pausedMs: 0,
      problems: [],
      durationMs: 0,
    };
    const finish = () => ((r.durationMs = Math.round(this.clock.now() - started)), r);
    if (!opts.force && Date.now() < this.notBefore) {
      r.skipped = 'backoff';
      r.retryAt = this.notBefore;
      return finish();
    }
    const lock = new FileLock(endpointLockPath(this.o.stateDir ?? this.o.root, this.endpoint));
    if (!lock.tryAcquire()) {
      r.skipped = 'busy';
      r.problems.push(`another process is pushing this storage root to ${this.endpoint} (${lock.path}); this pass sends nothing`);
      return finish();
    }
    this.passNo++;
    try {
      const sent = this.state.sent(this.endpoint);
      const plans: { signal: ExportSignal; files: PlannedFile[] }[] = [];
      if (this.o.logs) {
        // A file that went under another hide goes again under this one (metrics are never withheld).
        const files = planLogs(this.o.root, this.state.sentUnder(this.endpoint, this.o.cfg.hide ?? []), this.conv);
        const again = files.filter((f) => sent.has(f.rel)).length;
        if (again > 0)
          this.o.log?.('info', 'files sent before under another hide go again under this one', {
            endpoint: this.endpoint,
            files: again,
            hide: this.o.cfg.hide ?? [],
          });
        plans.push({ signal: 'logs', files });
      }
      if (this.metrics) plans.push({ signal: 'metrics', files: planMetrics(this.o.root, sent, this.metrics) });
      r.pending = plans.reduce((n, p) => n + p.files.length, 0);
      let stopped: Outcome | undefined;
      const refused = { any: false };
      for (const plan of plans) {
        stopped = await this.sendAll(plan.signal, plan.files, r, refused, opts.signal);
        if (stopped || opts.signal?.aborted) break;
      }
      if (opts.signal?.aborted && !stopped) r.skipped = r.logs.requests + r.metrics.requests === 0 ? 'aborted' : undefined;
      this.settle(stopped, refused.any, r);
    } finally {
      lock.release();
    }
    return finish();
  }

  /**
   * Backoff bookkeeping after a pass: a stop, or a request the receiver refused, doubles the wait
   * of the next watching pass; a clean pass clears it.
   */
  private settle(stopped: Outcome | undefined, refused: boolean, r: PushReport): void {
    if ((!stopped || stopped.ok) && !refused) {
      if (r.problems.length === 0) this.failures = 0;
      this.notBefore = 0;
      return;
    }
    this.failures++;
    const backoff = Math.min(this.o.cfg.retryMaxMs, this.o.cfg.retryInitialMs * 2 ** Math.min(30, this.failures - 1));
    const wait = Math.max(backoff, stopped && !stopped.ok ? (stopped.retryAfterMs ?? 0) : 0);
    this.notBefore = Date.now() + wait;
    if (stopped && !stopped.ok) r.stoppedBy = stopped.kind as PushReport['stoppedBy'];
    r.retryAt = this.notBefore;
  }

  /** Sends one signal's files; returns the outcome that stopped the pass, if one did. */
  private async sendAll(
    signal: ExportSignal,
    files: PlannedFile[],
    r: PushReport,
    refused: { any: boolean },
    abort?: AbortSignal,
  ): Promise<Outcome | undefined> {
    const counts = signal === 'logs' ? r.logs : r.metrics;
    let next = 0;
    // Requests read and encoded ahead of the one on the wire, in order; and the push.state appends
    // of the requests taken, durable before the pass ends (the next request need not wait for the
    // disk). Each promise is awaited in turn; the no-op handlers keep an early stop from leaving
    // one rejected with nobody listening.
    const ahead: Promise<Batch | undefined>[] = [];
    const recorded: Promise<void>[] = [];
    let recordFailed = false;
    let settled = 0;
    const fill = () => {
      while (ahead.length < PREPARE_AHEAD && next < files.length) {
        const sel = this.select(files, next, r);
        next = sel.next;
        const prepared = this.prepare(signal, sel.chosen, r);
        prepared.catch(() => undefined);
        ahead.push(prepared);
      }
    };
    const end = async (outcome?: Outcome) => {
      await Promise.allSettled(ahead.splice(0));
      await Promise.all(recorded); // a failure to record is a storage error: it ends the pass
      return outcome;
    };
    try {
      for (;;) {
        fill();
        const p = ahead.shift();
        if (!p) return await end();
        const current = await p;
        if (!current) continue; // nothing in it could be sent; each file was reported
        // Every record but the newest is done before this request goes (the newest still overlaps
        // this send): so when push.state cannot take a record (a full or read-only disk) the pass
        // ends within one request, instead of sending files that only go again next time.
        for (; settled < recorded.length - 1; settled++) await recorded[settled]!.catch(() => undefined);
        if (abort?.aborted || recordFailed) return await end();
        const waited = await this.bucket.take(current.body.length, abort);
        if (waited === undefined) return await end();
        r.pausedMs += waited;
        const sending = this.transport.send(signal, current.body, abort);
        fill(); // keep reading ahead while this request is on the wire
        const outcome = await sending;
        if (outcome.ok) {
          const rejection: Rejection | undefined = outcome.rejected ? { reason: outcome.rejected.message, files: current.files.map((f) => f.rel) } : undefined;
          const rec = this.state.recordAsync(this.endpoint, current.files, rejection, signal === 'logs' ? (this.o.cfg.hide ?? []) : []);
          rec.catch(() => (recordFailed = true));
          recorded.push(rec);
          counts.files += current.files.length;
          counts.bytes += current.fileBytes;
          counts.requests++;
          r.pending -= current.files.length;
          r.wireBytes += current.body.length;
          if (current.withheld) {
            r.withheld.files += current.withheld.files;
            r.withheld.records += current.withheld.records;
          }
          this.o.onSent?.(signal, current.items);
          if (outcome.rejected) {
            r.rejected.files += current.files.length;
            r.rejected.items += outcome.rejected.items;
            r.rejected.reasons.push(outcome.rejected.message);
            this.o.onRejected?.(signal, outcome.rejected.items, current.files.length);
            this.o.log?.('warn', 'the receiver took the request and rejected part of it; its files are recorded as rejected and not sent again', {
              endpoint: this.endpoint,
              signal,
              files: current.files.length,
              rejected: outcome.rejected.items,
              reason: outcome.rejected.message,
            });
          }
          if (outcome.warning) this.o.log?.('warn', 'the receiver took the request with a warning', { endpoint: this.endpoint, warning: outcome.warning });
          continue;
        }
        if (outcome.kind === 'too_large' && current.planned.length > 1) {
          // Cut in two and sent at once, ahead of what was read ahead, keeping the files' order.
          const half = Math.ceil(current.planned.length / 2);
          const parts = [current.planned.slice(0, half), current.planned.slice(half)].map((chosen) => this.prepare(signal, chosen, r));
          for (const part of parts) part.catch(() => undefined);
          ahead.unshift(...parts);
          r.splits++;
          this.o.log?.('warn', 'the receiver said the request is too large; sending it in two', {
            endpoint: this.endpoint,
            signal,
            files: current.planned.length,
            bytes: current.body.length,
          });
          continue;
        }
        refused.any ||= !stopsPass(outcome);
        this.o.onFailed?.(signal, current.items, outcome.kind);
        r.problems.push(`${signal}: ${outcome.message} (${current.files.length} file(s) left for the next pass)`);
        this.o.log?.(stopsPass(outcome) ? 'warn' : 'error', 'export request not taken', {
          endpoint: this.endpoint,
          signal,
          outcome: outcome.kind,
          files: current.files.length,
          error: outcome.message,
        });
        if (outcome.kind === 'throttled') this.bucket.empty();
        if (stopsPass(outcome)) return await end(outcome);
      }
    } catch (err) {
      await Promise.allSettled([...ahead.splice(0), ...recorded]);
      throw err;
    }
  }

  /** Picks files from `start` for one request: at most batch_bytes of file bytes by size, a larger file alone. */
  private select(files: PlannedFile[], start: number, r: PushReport): { chosen: PlannedFile[]; next: number } {
    const max = this.o.cfg.batchBytes;
    const chosen: PlannedFile[] = [];
    let planned = 0;
    let i = start;
    for (; i < files.length; i++) {
      const f = files[i]!;
      let size: number;
      try {
        size = statSync(f.path).size;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
          r.pending--;
          continue;
        } // removed since planned
        r.problems.push(`${f.rel}: cannot be read: ${(err as Error).message}`);
        continue;
      }
      if (planned > 0 && planned + size > max) break;
      chosen.push(f);
      planned += size;
      if (planned >= max) {
        i++;
        break;
      }
    }
    return { chosen, next: i };
  }

  /**
   * Reads and describes the chosen files (logs on the reader's thread) and encodes the request.
   * A file that cannot be sent is reported and left out; it stays unsent.
   */
  private async prepare(signal: ExportSignal, chosen: PlannedFile[], r: PushReport): Promise<Batch | undefined> {
    const skip = (rel: string, error: string) => {
      r.problems.push(`${rel}: ${error}; not sent`);
      this.o.log?.('error', 'a file cannot be sent', { file: rel, error });
    };
    if (signal === 'logs') {
      const b = await this.builder.build({
        root: this.o.root,
        pass: this.passNo,
        identity: this.identity,
        observedNs: nowNs(),
        files: chosen.map((f) => ({ rel: f.rel, path: f.path, format: f.format as 'sd' | 'sf' })),
        hide: this.o.cfg.hide ?? [],
      });
      r.pending -= b.gone;
      for (const x of b.failures) skip(x.rel, x.error);
      if (!b.body) return undefined;
      return { signal, planned: chosen, files: b.files, body: b.body, fileBytes: b.fileBytes, items: b.files.length, withheld: b.withheld };
    }
    const raw: { rel: string; bytes: Buffer; digest: string }[] = [];
    for (const f of chosen) {
      try {
        const bytes = readFileSync(f.path);
        raw.push({ rel: f.rel, bytes, digest: sha256(bytes) });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') r.pending--;
        else skip(f.rel, `cannot be read: ${(err as Error).message}`);
      }
    }
    if (!raw.length) return undefined;
    return {
      signal,
      planned: chosen.filter((f) => raw.some((x) => x.rel === f.rel)),
      files: raw.map((x) => ({ rel: x.rel, digest: x.digest })),
      body: this.encodeMetrics(raw),
      fileBytes: raw.reduce((n, x) => n + x.bytes.length, 0),
      items: raw.length,
    };
  }

  /**
   * Spooled requests travel back to back: concatenated protobuf messages are one message whose
   * repeated `resource_metrics` hold them all. Every one, derived or received from Claude Code,
   * goes under the exporter's identity (withIdentity), its points as they were.
   */
  private encodeMetrics(files: { rel: string; bytes: Buffer }[]): Buffer {
    const resource = resourceAttributes(this.identity, RUNTIME_OF_METRICS);
    return Buffer.concat(files.map((f) => withIdentity(f.bytes, resource)));
  }

  close(): void {
    this.transport.close();
    this.builder.close();
  }
}
