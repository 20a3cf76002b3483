/**
 * Collecting Claude Code's raw API body dump (`OTEL_LOG_RAW_API_BODIES=file:DIR`): every request and
 * response file lands once, as a `provider_body/1` record in a `provider_body` Session Data file of
 * its session, under the session's lock and with the session's sequence, like every landed file. The
 * disk is the authority on what landed: each session's landed bodies are read back once per
 * collector (their manifests name their source files), so a crash never lands a body twice.
 */
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  ADAPTER,
  DIALECT,
  INDEX_FILE,
  factsOf,
  messageIdOfResponse,
  readIndexLine,
  roleOfName,
  sessionOfRequest,
  type IndexedCall,
} from '../../adapters/claude-code/provider-bodies.js';
import { encodeRecord, SessionDataWriter, shortSha } from '../../formats/session-data/encode.js';
import { readSessionData } from '../../formats/session-data/decode.js';
import { bodyParts, bodyProblem, manifestOf } from '../../formats/session-data/provider-body.js';
import { cutBodyRecord, type CutRecord } from '../../formats/session-data/provider-body-cut.js';
import type { ProviderBodyStore } from '../../formats/session-data/provider-body-store.js';
import { landedBodyStore } from '../../storage/provider-body-files.js';
import { entryNameProblem } from '../../storage/entry-names.js';
import { loadIndex, readIndexState, updateIndex } from '../../storage/index.js';
import { SessionLock } from '../../storage/session-lock.js';
import { landedName, listDir, parseLandedName, providerBodyDir } from '../../storage/layout.js';
import { SequenceCounter, loadSessionState, saveSessionState } from '../../storage/session-state.js';
import { ensureDirDurable, WriteOnceFile } from '../../storage/write-once.js';
import { compactStamp, nowNs, rfc3339 } from '../../util/time.js';

/** asz 0.6's wait: a body that is not one JSON value this long after its last write is landed as unreadable, with the reason. */
export const SETTLE_MS = 120_000;
const PREFIX = 'provider_body';

export interface BodyOptions {
  root: string;
  /** The directory Claude Code writes the bodies to. */
  dir: string;
  maxDeltaBytes: number;
  settleMs?: number;
  clock?: () => bigint;
  /** Take repeats out (asz 0.6's `copy` and `piece` segments); off writes each body whole, as aszcol did before. On unless told. */
  cut?: boolean;
  /** Test hook: called after each provider_body file is installed, with how many this pass installed (the crash test kills the process there). */
  afterFile?: (files: number) => void;
}

export interface BodyPassReport {
  /** Bodies landed this pass. */
  landed: number;
  landedFiles: number;
  landedBytes: number;
  /** Bodies whose session is not known yet, or still being written. */
  waiting: number;
  /** Bodies landed this pass whole in an unknown part, because they are not one JSON object. */
  unreadable: number;
  /** Bytes of the records the bodies landed as (their lines), against `landedBytes` of bodies read. */
  storedBytes: number;
  /** Bodies that could have been cut and were written whole instead, each with why (a cut that did not read back whole). */
  writtenWhole: { src: string; why: string }[];
  busy: number;
  errors: { where: string; message: string }[];
}

interface Pending {
  name: string;
  bytes: Buffer;
  line?: IndexedCall;
  role: 'request' | 'response';
}

export class ProviderBodyCollector {
  /** Per session, the source names whose bodies are landed, learnt from disk the first time the session is seen. */
  private readonly landed = new Map<string, Set<string>>();

  constructor(readonly opts: BodyOptions) {}

  pass(): BodyPassReport {
    const report: BodyPassReport = {
      landed: 0,
      landedFiles: 0,
      landedBytes: 0,
      waiting: 0,
      unreadable: 0,
      storedBytes: 0,
      writtenWhole: [],
      busy: 0,
      errors: [],
    };
    const names = listDir(this.opts.dir);
    if (names.length === 0) return report;
    const byFile = this.readIndex(report);
    const nowMs = Number((this.opts.clock ?? nowNs)() / 1_000_000n);
    const settle = this.opts.settleMs ?? SETTLE_MS;
    const bySession = new Map<string, Pending[]>();
    for (const name of names.sort()) {
      const role = roleOfName(name);
      if (!role) continue;
      const line = byFile.get(name);
      if (line && this.landed.get(line.session)?.has(name)) continue;
      const path = join(this.opts.dir, name);
      let bytes: Buffer, mtimeMs: number;
      try {
        bytes = readFileSync(path);
        mtimeMs = statSync(path).mtimeMs;
      } catch (err) {
        report.errors.push({ where: path, message: (err as Error).message });
        continue;
      }
      const session =
        line?.session ??
        (role === 'request'
          ? sessionOfRequest(bytes.toString('utf8'))
          : this.claimResponse(
              bytes,
              [...byFile.values()].map((l) => l.session),
            ));
      if (!session) {
        report.waiting++; // a response the index does not name yet, or a request still being written
        continue;
      }
      const bad = entryNameProblem(session);
      if (bad) {
        report.errors.push({ where: path, message: `names session ${JSON.stringify(session)}, which cannot name a directory: ${bad}` });
        continue;
      }
      if (this.landedOf(session).has(name)) continue;
      if (bodyProblem(bytes) && nowMs - mtimeMs < settle) {
        report.waiting++; // written with one asynchronous write: give it time to finish
        continue;
      }
      (bySession.get(session) ?? bySession.set(session, []).get(session)!).push({ name, bytes, line, role });
    }
    for (const [session, bodies] of bySession) this.landSession(session, bodies, report);
    return report;
  }

  /**
   * The session of a response the index does not name (its line not written yet, or lost when the
   * runtime exited): the one session, among those the index names, whose landed transcript holds the
   * response's message id (asz 0.6's claim). None or several: it waits.
   */
  private claimResponse(bytes: Buffer, sessions: string[]): string | undefined {
    const message = messageIdOfResponse(bytes.toString('utf8'));
    if (!message) return undefined;
    const holders = [...new Set(sessions)].filter(
      (s) => !entryNameProblem(s) && (loadIndex(this.opts.root, s)?.entries.some((e) => e.fileKind === 'transcript' && e.call === message) ?? false),
    );
    return holders.length === 1 ? holders[0] : undefined;
  }

  /** `index.jsonl` by the file names it mentions; a torn last line is skipped and read again next pass. */
  private readIndex(report: BodyPassReport): Map<string, IndexedCall> {
    const out = new Map<string, IndexedCall>();
    let text: string;
    try {
      text = readFileSync(join(this.opts.dir, INDEX_FILE), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') report.errors.push({ where: join(this.opts.dir, INDEX_FILE), message: (err as Error).message });
      return out;
    }
    for (const raw of text.split('\n')) {
      const line = raw.trim() ? readIndexLine(raw) : undefined;
      if (!line) continue;
      if (line.requestFile) out.set(line.requestFile, line);
      if (line.responseFile) out.set(line.responseFile, line);
    }
    return out;
  }

  private landedOf(session: string): Set<string> {
    let set = this.landed.get(session);
    if (set) return set;
    set = new Set();
    const dir = providerBodyDir(this.opts.root, session);
    for (const n of listDir(dir)) {
      if (!parseLandedName(n)) continue;
      for (const r of readSessionData(join(dir, n)).records) {
        const src = manifestOf(r)?.src;
        if (src) set.add(src);
      }
    }
    this.landed.set(session, set);
    return set;
  }

  private landSession(session: string, bodies: Pending[], report: BodyPassReport): void {
    const { root, maxDeltaBytes } = this.opts;
    const lock = new SessionLock(root, session);
    const dir = providerBodyDir(root, session);
    ensureDirDurable(dir);
    if (!lock.tryAcquire()) {
      report.busy++;
      return;
    }
    try {
      const passNs = (this.opts.clock ?? nowNs)();
      const stamp = compactStamp(passNs);
      const at = rfc3339(passNs);
      const counter = new SequenceCounter(root, session);
      const seen = this.landedOf(session);
      // What the session holds on disk, so a body refers only to records already landed (files land one after another, each synced).
      const store = this.opts.cut === false ? undefined : landedBodyStore(root, session);
      // One file per pass, ending before a record that would take it past max_delta_bytes; a larger record lands alone.
      let batch: { body: Pending; cut: CutRecord }[] = [];
      let size = 0;
      let files = 0;
      const flush = () => {
        if (batch.length === 0) return;
        this.writeFile(session, counter.take(), stamp, at, batch, report);
        for (const { body } of batch) seen.add(body.name);
        batch = [];
        size = 0;
        this.opts.afterFile?.(++files);
      };
      for (const [k, b] of bodies.entries()) {
        const cut = this.cutOf(store, b, session, k);
        const bytes = Buffer.byteLength(cut.line) + 1;
        if (batch.length > 0 && size + bytes > maxDeltaBytes) flush();
        batch.push({ body: b, cut });
        size += bytes;
        if (cut.whole) report.writtenWhole.push({ src: b.name, why: cut.whole });
      }
      flush();
      if ((readIndexState(root, session)?.indexedSeq ?? 0) < counter.peek() - 1) {
        for (const p of updateIndex(root, session).problems) report.errors.push({ where: join(root, session, 'index'), message: p });
      }
      saveSessionState(root, session, { ...(loadSessionState(root, session) ?? { liveness: 'unknown', last_scan: at }), next_seq: counter.peek() });
    } catch (err) {
      report.errors.push({ where: dir, message: (err as Error).message });
    } finally {
      lock.release();
    }
  }

  /** One body's record: cut against the session's landed records (`store`), or whole when cutting is off. */
  private cutOf(store: ProviderBodyStore | undefined, b: Pending, session: string, k: number): CutRecord {
    const base = { ord: 1, off: 0, sha: shortSha(b.bytes), bytes: b.bytes.length, id: b.name.slice(0, -'.json'.length), from: 'runtime' as const };
    const facts = factsOf(b.name, b.role, b.line, session, b.bytes.toString('utf8'));
    if (!store) {
      const record = { ...base, parts: bodyParts(b.bytes, facts) };
      return { record, line: encodeRecord(record) };
    }
    return cutBodyRecord(store, base, b.bytes, facts, { seq: -1, row: k, cut: true });
  }

  /** Lands one file of the pass: written under a temporary name, synced and installed before the next file is begun. */
  private writeFile(session: string, seq: number, stamp: string, at: string, batch: { body: Pending; cut: CutRecord }[], report: BodyPassReport): void {
    const file = new WriteOnceFile(join(providerBodyDir(this.opts.root, session), landedName(PREFIX, stamp, seq)));
    try {
      const w = new SessionDataWriter(file, { seq, at, kind: 'provider_body', adapter: ADAPTER, dialect: DIALECT, src: '.', session });
      batch.forEach(({ cut }, k) => w.add({ ...cut.record, ord: k + 1 }));
      w.close();
      file.commit();
    } catch (err) {
      file.abort();
      throw err;
    }
    for (const { body, cut } of batch) {
      if (bodyProblem(body.bytes)) report.unreadable++;
      report.landedBytes += body.bytes.length;
      report.storedBytes += Buffer.byteLength(cut.line) + 1;
    }
    report.landed += batch.length;
    report.landedFiles++;
  }
}
