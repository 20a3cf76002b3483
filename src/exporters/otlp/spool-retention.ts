/**
 * Spool retention: which `_metrics/` files may go once sent, decided from who consumes this
 * root's spool. The consumers of one kind of spool file (the receiver's `-otlp.pb` requests, or
 * the derived `-derived.pb` ones) are the `otlp` exporters that send that kind and the readers
 * that count it (a running `prometheus` exporter). A file goes once every one of them took it
 * (storage/spool-removal.ts does the removal), and not before its exporters' `spool_retention`
 * allows: any exporter with `enabled: false` keeps the kind, the longest `keep` applies.
 *
 * Nothing of a kind is removed when the decision cannot be made safely, and the report says why:
 * - no exporter sends that kind (then nothing ever took it);
 * - push.state records files of that kind sent to a receiver none of these exporters sends to
 *   (another process may still be sending from this root, as asz refuses to remove for a root
 *   whose push.state names another receiver), unless an exporter's `ignore_receivers` lists it;
 * - a reader is configured that this process cannot ask (`aszcol push` beside a service whose
 *   prometheus exporter reads the spool), or an exporter is configured but not running.
 */
import type { SpoolReaderCheck } from '../../storage/spool-removal.js';
import { PushState } from '../../storage/push-state.js';
import { METRICS_DIR, MetricsSpool, type MetricsSource, type SpoolReader } from '../../storage/metrics-spool.js';
import type { SpoolRetentionConfig } from './config.js';

/** An `otlp` exporter that sends spooled metrics of one kind from this root. */
export interface MetricsConsumer {
  /** `otlp/oap`. */
  id: string;
  /** As push.state names its receiver. */
  endpoint: string;
  source: MetricsSource;
  retention: SpoolRetentionConfig;
}

/** Another component that reads the spool; `reader` undefined when this process cannot ask it. */
export interface ReaderRef {
  /** `prometheus`. */
  id: string;
  source: MetricsSource | undefined;
  reader?: SpoolReader;
}

export interface RetentionScope {
  consumers: MetricsConsumer[];
  readers: ReaderRef[];
  /** Why nothing at all may be removed now (an exporter that is configured but not running). */
  blocked?: string;
}

export interface SpoolSweepReport {
  /** Spool files removed, and their bytes. */
  removed: number;
  removedBytes: number;
  /** Files not yet taken by every consumer; taken, but kept for `keep`; kept while their derivation finishes. */
  unsent: number;
  young: number;
  pendingReceipt: number;
  /** push.state lines forgotten with their files. */
  forgotten: number;
  /** Another process held the spool's lock: the rest goes on a later pass. */
  busy: boolean;
  /** Why a kind of spool file was kept whole (not problems: nothing is wrong, but a person may want to act). */
  held: string[];
  problems: string[];
}

const KIND_WORDS: Record<MetricsSource, string> = {
  received: "the receiver's metrics requests (-otlp.pb)",
  derived: 'the derived token usage requests (-derived.pb)',
  both: 'the received and the derived requests',
};

export function emptySweep(): SpoolSweepReport {
  return { removed: 0, removedBytes: 0, unsent: 0, young: 0, pendingReceipt: 0, forgotten: 0, busy: false, held: [], problems: [] };
}

/** Removes, under one root, what the scope's consumers have all taken; keeps push.state read between sweeps. */
export class SpoolRetention {
  private readonly state: PushState;
  private readonly spool: MetricsSpool;

  constructor(root: string) {
    this.state = new PushState(root);
    this.spool = new MetricsSpool(root);
  }

  async sweep(scope: RetentionScope, signal?: AbortSignal): Promise<SpoolSweepReport> {
    const out = emptySweep();
    for (const kind of ['received', 'derived'] as const) {
      // A consumer of `both` takes files of either kind, so it must have taken one before it goes.
      const takes = (source: MetricsSource | undefined) => source === kind || source === 'both';
      const cs = scope.consumers.filter((c) => takes(c.source));
      if (cs.length === 0 || cs.some((c) => !c.retention.enabled)) continue;
      const why = this.heldBecause(kind, cs, scope);
      if (why) {
        out.held.push(`${KIND_WORDS[kind]} are all kept: ${why}`);
        continue;
      }
      const readers: SpoolReaderCheck[] = scope.readers
        .filter((x) => takes(x.source))
        .map((x) => ({ name: `exporters/${x.id}`, hasRead: (n) => x.reader!.hasRead(n) }));
      let pendingReceipt = 0;
      const r = await this.spool.removeSent(kind, {
        state: this.state,
        signal,
        readers,
        endpoints: [...new Set(cs.map((c) => c.endpoint))],
        keepMs: Math.max(...cs.map((c) => c.retention.keepMs)),
        // A derived request whose receipt is still there belongs to a derivation that has not
        // saved its state: the next one writes the request again if it is missing.
        keepIf: kind === 'derived' ? (n) => (this.spool.hasReceipt(n) ? (pendingReceipt++, 'receipt') : undefined) : undefined,
      });
      out.removed += r.removed;
      out.removedBytes += r.removedBytes;
      out.unsent += r.unsent;
      out.young += r.young;
      out.pendingReceipt += pendingReceipt;
      out.forgotten += r.forgotten;
      out.busy ||= r.busy;
      out.problems.push(...r.problems);
    }
    return out;
  }

  private heldBecause(kind: MetricsSource, cs: MetricsConsumer[], scope: RetentionScope): string | undefined {
    if (scope.blocked) return scope.blocked;
    const blind = scope.readers.filter((x) => (x.source === kind || x.source === 'both') && !x.reader);
    if (blind.length) {
      return `${blind.map((x) => `exporters.${x.id}`).join(', ')} reads them inside the service, and this command cannot tell what it has read; the service removes them`;
    }
    const ours = new Set(cs.map((c) => c.endpoint));
    const ignored = new Set(cs.flatMap((c) => c.retention.ignoreReceivers));
    const re = MetricsSpool.namePattern(kind);
    const prefix = `${METRICS_DIR}/`;
    const foreign = this.state
      .endpoints()
      .filter(
        (e) => !ours.has(e) && !ignored.has(e) && [...this.state.sent(e).keys()].some((rel) => rel.startsWith(prefix) && re.test(rel.slice(prefix.length))),
      );
    if (foreign.length === 0) return undefined;
    const where = cs.map((c) => `exporters.${c.id}.spool_retention.ignore_receivers`).join(' or ');
    return (
      `push.state records them sent to ${foreign.join(', ')}, which no otlp exporter here sends metrics to, and another process may still be sending them there;` +
      ` if ${foreign.length > 1 ? 'those receivers no longer take' : 'that receiver no longer takes'} metrics from this root, list ${foreign.length > 1 ? 'them' : 'it'} in ${where}`
    );
  }
}

/** One line's worth for a pass line: what went, and why something was held. */
export function formatSweep(s: SpoolSweepReport): string {
  const parts: string[] = [];
  if (s.removed) parts.push(`spool removed ${s.removed} file(s) ${s.removedBytes} byte(s)`);
  if (s.busy) parts.push('spool busy');
  for (const h of s.held) parts.push(`spool kept: ${h}`);
  return parts.join(', ');
}
