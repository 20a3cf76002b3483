/**
 * The receiver's counters, in the words the OpenTelemetry Collector uses for its own receivers,
 * so the service can export them as `aszcol_receiver_accepted_log_records` and so on.
 */
import type { RefusalReason } from '../../otlp/codec.js';
import type { Signal } from '../../otlp/proto.js';

export type Transport = 'grpc' | 'http';
export type ItemName = 'log_records' | 'metric_points' | 'spans';

export const ITEM_OF: Record<Signal, ItemName> = { logs: 'log_records', metrics: 'metric_points', traces: 'spans' };

/** Why single items were refused inside a request that was otherwise accepted (OTLP partial success). */
export type ItemRefusalReason = 'no_session_id' | 'bad_session_id';

export interface OtlpReceiverStats {
  /** Items accepted (journaled, to be landed), by signal; an exact retry adds nothing. */
  accepted: Record<ItemName, number>;
  /** Items refused, by signal: in a refused request that could be read, or singly (partial success). */
  refused: Record<ItemName, number>;
  /** Whole requests refused, by reason; an unreadable request has no item count, so it counts here. */
  refused_requests: Partial<Record<RefusalReason, number>>;
  /** Items refused singly inside accepted requests, by reason. */
  refused_items: Partial<Record<ItemRefusalReason, number>>;
  /** Requests received, by transport; `duplicates` were exact retries answered without landing. */
  requests: Record<Transport, number> & { duplicates: number };
  landed: { files: number; records: number; spool_files: number };
  /** The `_metrics/` spool's size as last counted. */
  spool_bytes: number;
  /** Bytes accepted (in the journal) and not yet landed. */
  journal_bytes: number;
  /** Sessions whose records wait for a lock another collector holds. */
  waiting_sessions: number;
  /** Journal stretches that could not be landed (damage on disk, or a request the converter refused), kept aside. */
  damaged_entries: number;
  /** Records parked in the storage root's quarantine (they can never land where they belong), by reason. */
  quarantined_records: Record<string, number>;
  /** Metric points answered but not kept because no metrics pipeline includes the receiver (nothing would consume them). */
  unkept_metric_points: number;
}

export function emptyStats(): OtlpReceiverStats {
  return {
    accepted: { log_records: 0, metric_points: 0, spans: 0 },
    refused: { log_records: 0, metric_points: 0, spans: 0 },
    refused_requests: {},
    refused_items: {},
    unkept_metric_points: 0,
    requests: { grpc: 0, http: 0, duplicates: 0 },
    landed: { files: 0, records: 0, spool_files: 0 },
    spool_bytes: 0,
    journal_bytes: 0,
    waiting_sessions: 0,
    damaged_entries: 0,
    quarantined_records: {},
  };
}

export function cloneStats(s: OtlpReceiverStats): OtlpReceiverStats {
  return {
    accepted: { ...s.accepted },
    refused: { ...s.refused },
    refused_requests: { ...s.refused_requests },
    refused_items: { ...s.refused_items },
    requests: { ...s.requests },
    landed: { ...s.landed },
    spool_bytes: s.spool_bytes,
    journal_bytes: s.journal_bytes,
    waiting_sessions: s.waiting_sessions,
    damaged_entries: s.damaged_entries,
    quarantined_records: { ...s.quarantined_records },
    unkept_metric_points: s.unkept_metric_points,
  };
}
