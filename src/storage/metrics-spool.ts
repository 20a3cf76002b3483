/**
 * The `_metrics/` spool: every name, path and rule of the directory in one type, used by the
 * OTLP receiver (which spools what it takes), `token_metrics` (which spools what it derives) and
 * the exporters (which send, read and remove what is there).
 *
 * - Received: one write-once file per metrics request the receiver accepted,
 *   `metrics-<received-at>-<seq>-otlp.pb`, holding the ExportMetricsServiceRequest's protobuf
 *   bytes (a JSON request is converted first, so the spool has one format). `spool.state` holds
 *   the next number (spool-state.ts); both are written under `_metrics/.lock`.
 * - Derived: one write-once request per landed transcript file with points,
 *   `metrics-<stamp>-<seq>-<session>-derived.pb`, named after that file so a derivation cut short
 *   and run again arrives at the same name; its receipt sits in the session's `metrics/`.
 *
 * An exporter sends one source, or `both` when the derived files hold no token usage (see MetricsSource).
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT_NAMES } from './entry-names.js';
import { removeSentSpoolFiles, type SpoolRemovalOptions, type SpoolRemovalReport } from './spool-removal.js';

/**
 * Which spool files a metrics pipeline carries: derived token usage (and MCP metrics), what the
 * receiver spooled, or `both` when one pipeline holds the receiver and `token_metrics`: then the
 * runtime's own token usage is received and only the MCP metrics, which it never sends, are derived.
 */
export type MetricsSource = 'derived' | 'received' | 'both';

export const METRICS_DIR = ROOT_NAMES.metrics;
/** `metrics-<received-at>-<seq>-otlp.pb`: what the OTLP receiver lands. */
export const RECEIVED_NAME = /^metrics-(\d{8}T\d{6}\.\d{9}Z)-(\d{6,})-otlp\.pb$/;
/** `metrics-<stamp>-<seq>-<session>-derived.pb`: what `token_metrics` derives. */
export const DERIVED_NAME = /^metrics-(\d{8}T\d{6}\.\d{9}Z)-(\d{6,})-(.+)-derived\.pb$/;
/** Any spool file, whatever wrote it (temporary files of a crashed writer included). */
export const ANY_SPOOL_FILE = /^metrics-.*\.pb$/;
export const SPOOL_STATE_NAME = 'spool.state';

const NAMES: Record<MetricsSource, RegExp> = {
  received: RECEIVED_NAME,
  derived: DERIVED_NAME,
  both: new RegExp(`${RECEIVED_NAME.source}|${DERIVED_NAME.source}`),
};
const pad = (seq: number) => String(seq).padStart(6, '0');

/** A session's derivation state directory (`<root>/<session>/metrics`), where receipts live. */
export const metricsStateDir = (root: string, session: string) => join(root, session, 'metrics');
/** The receipt `token_metrics` writes before a derived request enters the spool. */
export const receiptPath = (root: string, session: string, seq: number) => join(metricsStateDir(root, session), `receipt-${pad(seq)}.json`);

/**
 * A component that reads the spool for itself (the `prometheus` exporter adds each file's points
 * to its counters). It confirms a file by having read it; a spool file is removed only once every
 * running reader has.
 */
export interface SpoolReader {
  /** Which spool files it reads now (undefined: none). */
  spoolSource(): MetricsSource | undefined;
  /** Whether it has read (and counted) the spool file of this name. */
  hasRead(name: string): boolean;
}

export function asSpoolReader(c: unknown): SpoolReader | undefined {
  const x = c as Partial<SpoolReader> | undefined;
  return x && typeof x.spoolSource === 'function' && typeof x.hasRead === 'function' ? (x as SpoolReader) : undefined;
}

/** One spool file as listed: its name, its path relative to the root (as push.state keys it) and its path. */
export interface SpoolFile {
  name: string;
  rel: string;
  path: string;
}

export class MetricsSpool {
  readonly dir: string;
  readonly lockPath: string;
  readonly statePath: string;

  constructor(readonly root: string) {
    this.dir = join(root, METRICS_DIR);
    this.lockPath = join(this.dir, '.lock');
    this.statePath = join(this.dir, SPOOL_STATE_NAME);
  }

  static namePattern(source: MetricsSource): RegExp {
    return NAMES[source];
  }

  static receivedName(receivedAtStamp: string, seq: number): string {
    return `metrics-${receivedAtStamp}-${pad(seq)}-otlp.pb`;
  }

  static derivedName(stamp: string, seq: number, session: string): string {
    return `metrics-${stamp}-${pad(seq)}-${session}-derived.pb`;
  }

  /** The receiver's request number in a received file's name; undefined for any other name. */
  static receivedSeq(name: string): number | undefined {
    const m = RECEIVED_NAME.exec(name);
    return m ? Number(m[2]) : undefined;
  }

  /** The session and sequence a derived file's name carries. */
  static derivedOrigin(name: string): { session: string; seq: number } | undefined {
    const m = DERIVED_NAME.exec(name);
    return m ? { session: m[3]!, seq: Number(m[2]) } : undefined;
  }

  /** `_metrics/<name>`: the key push.state uses. */
  static rel(name: string): string {
    return `${METRICS_DIR}/${name}`;
  }

  path(name: string): string {
    return join(this.dir, name);
  }

  /** The files of one source, by name (which orders them in time); none when the spool does not exist yet. */
  list(source: MetricsSource): SpoolFile[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const re = NAMES[source];
    return names
      .filter((n) => re.test(n))
      .sort()
      .map((name) => ({ name, rel: MetricsSpool.rel(name), path: this.path(name) }));
  }

  /** Whether a derived file's receipt exists (its derivation finished saving what it counted). */
  hasReceipt(name: string): boolean {
    const o = MetricsSpool.derivedOrigin(name);
    return o ? existsSync(receiptPath(this.root, o.session, o.seq)) : false;
  }

  /** Removes the files of one source that every consumer has taken (spool-removal.ts has the rules). */
  removeSent(source: MetricsSource, opts: Omit<SpoolRemovalOptions, 'root' | 'dir' | 'names' | 'seqOf' | 'forgetSent'>): Promise<SpoolRemovalReport> {
    return removeSentSpoolFiles({
      ...opts,
      root: this.root,
      dir: METRICS_DIR,
      names: NAMES[source],
      seqOf: MetricsSpool.receivedSeq,
      // Received names are never issued again; a derived name comes back when its file is derived again.
      forgetSent: source === 'received',
    });
  }
}
