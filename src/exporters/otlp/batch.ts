/**
 * One logs request from a list of files: read, checked, described and encoded, on the reader's
 * thread (read-worker.ts). The files of a request are read into one scratch buffer that is kept
 * from request to request, and copied once, into the request; the request's memory is handed to
 * the sending thread without a copy.
 */
import { closeSync, openSync, readSync, fstatSync, readFileSync } from 'node:fs';
import { listLanded } from '../../storage/landed-files.js';
import type { PushedFile } from '../../storage/push-state.js';
import { encodeLogsRequest, type ResourceGroup } from './encode.js';
import { resourceAttributes, runtimeOfAdapter, scope, type Identity } from '../../otlp/identity.js';
import { readFirstLine } from '../../storage/first-line.js';
import { describeLanded, describeRound, UnsendableFileError, type OutFile } from './records.js';
import { ScratchBuffer } from '../../util/scratch-buffer.js';
import { claudeCodeWithheldContent } from '../../adapters/claude-code/withheld-content.js';
import type { WithholdCategory } from '../../formats/view/withhold.js';
import { withheldFileAttributes, withholdingPolicyAttributes, withholdLandedFile } from './withhold-file.js';

export interface BatchFile {
  rel: string;
  path: string;
  format: 'sd' | 'sf';
}

export interface BuiltBatch {
  /** The ExportLogsServiceRequest; undefined when no file could be sent. */
  body?: Buffer;
  files: PushedFile[];
  fileBytes: number;
  /** Files gone since they were planned (not a problem: nothing to send). */
  gone: number;
  /** Files that cannot be sent, and why. */
  failures: { rel: string; error: string }[];
  /** Landed files sent less what `hide` withholds, and the records altered in them. */
  withheld: { files: number; records: number };
}

/** What a pass learns about sessions while it builds requests; new for each pass. */
export class SessionFacts {
  private readonly adapters = new Map<string, string | undefined>();
  private readonly latest = new Map<string, bigint | undefined>();

  constructor(readonly root: string) {}

  noteAdapter(session: string, adapter: string | undefined): void {
    if (!this.adapters.has(session) && adapter !== undefined) this.adapters.set(session, adapter);
  }

  /** The adapter named by a session's landed header (a round's service is its session's runtime). */
  adapterOf(session: string): string | undefined {
    if (this.adapters.has(session)) return this.adapters.get(session);
    let adapter: string | undefined;
    for (const f of listLanded(this.root, session)) {
      try {
        const h = JSON.parse(readFirstLine(f.path) ?? '') as { adapter?: unknown };
        if (typeof h.adapter === 'string') {
          adapter = h.adapter;
          break;
        }
      } catch {
        /* the next file */
      }
    }
    this.adapters.set(session, adapter);
    return adapter;
  }

  /** The latest record time of a session's landed files: the time of a file that has none of its own. */
  latestOf(session: string): bigint | undefined {
    if (this.latest.has(session)) return this.latest.get(session);
    let max: bigint | undefined;
    for (const f of listLanded(this.root, session)) {
      try {
        const t = describeLanded(f.rel, readFileSync(f.path)).throughNs;
        if (t !== undefined && (max === undefined || t > max)) max = t;
      } catch {
        /* a file that does not read has no time to offer */
      }
    }
    this.latest.set(session, max);
    return max;
  }
}

/** One per thread, reused by every batch: building one runs to its end before the next starts. */
const batchReadScratch = new ScratchBuffer(1 << 20);

/** Reads a file into the scratch buffer at `at`, growing it (and keeping what is there) when needed. */
function readInto(path: string, at: number): { start: number; end: number } {
  const fd = openSync(path, 'r');
  try {
    const size = fstatSync(fd).size;
    const scratch = batchReadScratch.take(at + size, at);
    let done = 0;
    while (done < size) {
      const n = readSync(fd, scratch, at + done, size - done, done);
      if (n === 0) break;
      done += n;
    }
    return { start: at, end: at + done };
  } finally {
    closeSync(fd);
  }
}

export function buildLogsBatch(
  files: BatchFile[],
  identity: Identity,
  facts: SessionFacts,
  observedNs: bigint,
  hide: readonly WithholdCategory[] = [],
): BuiltBatch {
  const out: BuiltBatch = { files: [], fileBytes: 0, gone: 0, failures: [], withheld: { files: 0, records: 0 } };
  const spans: { start: number; end: number }[] = [];
  let at = 0;
  for (const f of files) {
    try {
      const s = readInto(f.path, at);
      spans.push(s);
      at = s.end;
    } catch (err) {
      spans.push({ start: -1, end: -1 });
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') out.gone++;
      else out.failures.push({ rel: f.rel, error: `cannot be read: ${(err as Error).message}` });
    }
  }
  // Described only once every file is in place: growing the scratch buffer would move earlier ones.
  const described: OutFile[] = [];
  const hidden = new Set(hide);
  const policy = withholdingPolicyAttributes(hide);
  const scratch = batchReadScratch.take(at, at);
  files.forEach((f, i) => {
    const s = spans[i]!;
    if (s.start < 0) return;
    const bytes = scratch.subarray(s.start, s.end);
    try {
      described.push(f.format === 'sd' ? withheld(describeLanded(f.rel, bytes), hidden, out) : describeRound(f.rel, bytes));
    } catch (err) {
      if (!(err instanceof UnsendableFileError)) throw err;
      out.failures.push({ rel: f.rel, error: err.reason });
    }
  });
  if (!described.length) return out;
  for (const f of described) if (f.format === 'sd') facts.noteAdapter(f.session, f.adapter);
  const groups = new Map<string, ResourceGroup>();
  for (const f of described) {
    const service = runtimeOfAdapter(f.format === 'sd' ? f.adapter : facts.adapterOf(f.session));
    let g = groups.get(service);
    if (!g) groups.set(service, (g = { resource: resourceAttributes(identity, service), scope: scope(), items: [] }));
    const timeNs = f.timeNs ?? (f.format === 'sd' ? facts.latestOf(f.session) : undefined);
    g.items.push({ body: f.bytes, timeNs, observedNs, attributes: policy.length ? [...f.attributes, ...policy] : f.attributes });
    // push.state records the landed file's digest, withheld or not: what was sent is the file on disk, less the categories.
    out.files.push({ rel: f.rel, digest: f.landedDigest ?? f.digest });
    out.fileBytes += f.bytes.length;
  }
  out.body = encodeLogsRequest([...groups.values()]);
  return out;
}

/**
 * A landed file as it travels under `hide`: unchanged when nothing in it is withheld, else the
 * withheld body described anew (its digest is the body's) with what was taken out appended.
 */
function withheld(f: OutFile, hide: ReadonlySet<WithholdCategory>, out: BuiltBatch): OutFile {
  const w = withholdLandedFile(f.bytes, hide, claudeCodeWithheldContent);
  if (!w) return f;
  out.withheld.files++;
  out.withheld.records += w.records;
  const sent = describeLanded(f.rel, w.bytes);
  return { ...sent, landedDigest: f.digest, attributes: [...sent.attributes, ...withheldFileAttributes(w, { digest: f.digest, bytes: f.bytes.length })] };
}
