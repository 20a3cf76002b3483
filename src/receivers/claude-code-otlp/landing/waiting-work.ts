/**
 * What has been read from the journal and waits to land: each session's records grouped into
 * drafts (one file per session, kind and header), and the metrics requests for the spool.
 */
import { logsRequestGroups, tracesRequestGroups, type ResourceGroup } from '../../../otlp/requests.js';
import { resourceHeader, scopeHeader, type PlainObject } from '../../../otlp/plain.js';
import {
  OTLP_LOGS_SRC,
  OTLP_TRACES_SRC,
  badSessionId,
  otlpLogRecordToSd,
  otlpSessionOf,
  otlpSpanToSd,
  type OtlpConverted,
} from '../../../adapters/claude-code/otlp-dialect.js';
import { NAMES_RULE_VERSION } from '../../../storage/entry-names.js';
import type { JournalEntry } from '../journal-format.js';
import { recordTail } from '../record-line.js';
import type { OtlpKind } from '../stream-end.js';

/** A file being put together: one per session, kind and header; its lines are joined when it is written. */
export interface Draft {
  kind: OtlpKind;
  src: string;
  resourceJson: string;
  scopeJson: string;
  /** Each record's line after `{"ord":…,"off":…,`. */
  tails: string[];
  /** Each record's source byte count (its `bytes`), for the next offset. */
  sizes: number[];
}

export interface SessionWork {
  drafts: Map<string, Draft>;
  /** The journal position of the first entry with records here: the journal is kept from it. */
  firstAt: number;
  records: number;
  /** Since when its lock has been found held by another collector (0: not waiting). */
  waitingSince: number;
  warned: boolean;
  /**
   * Why the names rule refuses this session's id, for records journaled before the rule refused it
   * (an older version answered them as accepted): they are quarantined under this reason, never landed.
   */
  refusedName?: string;
}

export interface SpoolWork {
  at: number;
  receivedAtNs: bigint;
  body: Buffer;
}

/** Bytes of converted records and spool bodies waiting, at most; past it, no more entries are read. */
export const MAX_WAITING_BYTES = 256 * 1024 * 1024;

export class WaitingWork {
  readonly sessions = new Map<string, SessionWork>();
  spool: SpoolWork[] = [];
  /** Bytes of converted records and spool bodies waiting. */
  bytes = 0;

  constructor(private readonly maxBytes = MAX_WAITING_BYTES) {}

  /** Whether as much waits in memory as may: the reader stops. */
  full(): boolean {
    return this.bytes >= this.maxBytes;
  }

  isEmpty(): boolean {
    return this.sessions.size === 0 && this.spool.length === 0;
  }

  /** The journal position of the first entry something waits for (`upTo` when nothing does). */
  firstWaitingAt(upTo: number): number {
    let through = upTo;
    for (const w of this.sessions.values()) through = Math.min(through, w.firstAt);
    if (this.spool.length) through = Math.min(through, this.spool[0]!.at);
    return through;
  }

  /** Adds a journal entry's records or metrics request; throws when its checked bytes cannot be converted. */
  add(e: JournalEntry): void {
    if (e.signal === 'metrics') {
      // A copy: the read buffer it is a slice of should not live as long as a request waiting for the spool lock.
      this.spool.push({ at: e.at, receivedAtNs: e.receivedAtNs, body: Buffer.from(e.body) });
      this.bytes += e.body.length;
    } else if (e.signal === 'logs') {
      this.addGroups(e, logsRequestGroups(e.body), 'otlp_log', OTLP_LOGS_SRC, otlpLogRecordToSd);
    } else {
      this.addGroups(e, tracesRequestGroups(e.body), 'otlp_span', OTLP_TRACES_SRC, otlpSpanToSd);
    }
  }

  /** Forgets a session's work once it has landed. */
  sessionLanded(session: string, work: SessionWork): void {
    this.forget(session, work);
  }

  /** Forgets a session's work once it is parked in the quarantine. */
  sessionParked(session: string, work: SessionWork): void {
    this.forget(session, work);
  }

  private forget(session: string, work: SessionWork): void {
    this.sessions.delete(session);
    for (const d of work.drafts.values()) for (const t of d.tails) this.bytes -= t.length;
  }

  private addGroups<T extends { attributes: PlainObject }>(
    entry: JournalEntry,
    groups: ResourceGroup<T>[],
    kind: OtlpKind,
    src: string,
    convert: (m: T) => OtlpConverted,
  ): void {
    for (const g of groups) {
      const resourceJson = JSON.stringify(resourceHeader(g.resource));
      for (const sg of g.scopes) {
        const scopeJson = JSON.stringify(scopeHeader(sg.scope));
        const key = `${kind}\u0000${resourceJson}\u0000${scopeJson}`;
        for (const it of sg.items) {
          const session = otlpSessionOf(it.message.attributes, g.resource?.attributes);
          // Items with no session were refused to the client (partial success) and land nowhere.
          if (!session) continue;
          const refusedName = badSessionId(session);
          // Refused to the client when it was sent, by the rule in force now: nothing was promised.
          if (refusedName && entry.namesRule >= NAMES_RULE_VERSION) continue;
          let w = this.sessions.get(session);
          if (!w) {
            w = { drafts: new Map(), firstAt: entry.at, records: 0, waitingSince: 0, warned: false, ...(refusedName ? { refusedName } : {}) };
            this.sessions.set(session, w);
          }
          let d = w.drafts.get(key);
          if (!d) {
            d = { kind, src, resourceJson, scopeJson, tails: [], sizes: [] };
            w.drafts.set(key, d);
          }
          const tail = recordTail(it.bytes, convert(it.message));
          d.tails.push(tail);
          d.sizes.push(it.bytes.length);
          w.records++;
          this.bytes += tail.length;
        }
      }
    }
  }
}
