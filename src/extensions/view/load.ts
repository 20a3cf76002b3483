/**
 * Reads what a view document is built from: the round chain, folded as far as it verifies, and
 * every landed file of the session, each checked against its digest. What does not verify is
 * written into the problems, never thrown: a viewer shows the problem beside what could be read.
 * Only a conversation with no rounds, or none that folds, has nothing to show.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { checkHeader } from '../../formats/session-data/encode.js';
import type { Closing, Header, SdRecord } from '../../formats/session-data/types.js';
import { SessionDataError } from '../../util/errors.js';
import { decodeRoundBytes } from '../../formats/session-flow/decode.js';
import { applyRound, emptyFold } from '../../formats/session-flow/fold.js';
import { frameRefs, roundLosses } from '../../formats/session-flow/round-losses.js';
import type { Round } from '../../formats/session-flow/types.js';
import { listRounds } from '../../storage/chain.js';
import { listLanded } from '../../storage/landed-files.js';
import { AszError } from '../../util/errors.js';
import type { RecordReader, ViewInput } from '../../formats/view/build.js';
import type { ViewFile, ViewRound, ViewState } from '../../formats/view/types.js';
import { SessionProviderBodies } from '../../storage/provider-body-files.js';

/** No such conversation, or nothing in it can be shown. `status` is the HTTP answer. */
export class ViewUnavailable extends AszError {
  constructor(
    readonly conversation: string,
    reason: string,
    readonly status: 404 | 422,
    readonly problems: string[] = [],
  ) {
    super(reason, conversation);
  }
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const rel = (root: string, p: string) => relative(root, p).split('\\').join('/');

/**
 * A landed file read from bytes already in memory, by the same rules as `readSessionData`: a
 * header that checks, every line terminated, a closing line last whose count and digest match
 * what precedes it. The view reads every file whole anyway (its digest is listed), so reading it
 * a second time from disk would only double the cost. The digest covers every line before the
 * closing one, which is one contiguous prefix of the file.
 */
export function readLandedBytes(path: string, b: Buffer): { header: Header; records: SdRecord[] } {
  if (!b.length) throw new SessionDataError(path, undefined, 'empty file: no header');
  if (b[b.length - 1] !== 10) throw new SessionDataError(path, undefined, 'the last line has no newline: the file was cut short');
  const closingStart = b.lastIndexOf(10, b.length - 2) + 1;
  const text = b.toString('utf8', 0, closingStart);
  const lines = text.split('\n');
  lines.pop();
  const parse = (line: string, n: number): unknown => {
    try {
      return JSON.parse(line);
    } catch {
      throw new SessionDataError(path, n, 'line is not valid JSON');
    }
  };
  let closing: Closing | undefined;
  if (closingStart > 0) {
    const c = parse(b.toString('utf8', closingStart, b.length - 1), lines.length + 1) as Closing | null;
    if (c && typeof c === 'object' && c.t === 'end') closing = c;
  }
  if (!closing) throw new SessionDataError(path, undefined, 'no closing line: the file was cut short');
  if (!lines.length) throw new SessionDataError(path, undefined, 'empty file: no header');
  const header = parse(lines[0]!, 1) as Header;
  const problem = typeof header === 'object' && header !== null ? checkHeader(header) : 'the header is not a JSON object';
  if (problem) throw new SessionDataError(path, 1, problem);
  const records: SdRecord[] = new Array(lines.length - 1);
  for (let i = 1; i < lines.length; i++) {
    const r = parse(lines[i]!, i + 1) as SdRecord | null;
    if (typeof r !== 'object' || r === null || typeof r.ord !== 'number') {
      if (r && (r as unknown as Closing).t === 'end') throw new SessionDataError(path, i + 1, 'content after the closing line');
      throw new SessionDataError(path, i + 1, 'a record line must be an object with "ord"');
    }
    records[i - 1] = r;
  }
  if (closing.records !== records.length)
    throw new SessionDataError(path, undefined, `closing line says ${closing.records} records, the file holds ${records.length}`);
  const digest = sha256(b.subarray(0, closingStart));
  if (closing.digest !== digest)
    throw new SessionDataError(path, undefined, `digest mismatch: closing line says ${closing.digest}, content digests to ${digest}`);
  return { header, records };
}

function countLines(b: Buffer): number {
  let n = 0;
  for (let i = b.indexOf(10); i !== -1; i = b.indexOf(10, i + 1)) n++;
  return n;
}

function ms(iso: string | undefined): number | undefined {
  if (!iso) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : Math.floor(t);
}

/** Where a landed file was filed: `<session>/streams/<s>/…` or `<session>/runs/<r>/…`. */
function filedUnder(relPath: string): { stream?: string; run?: string } {
  const parts = relPath.split('/');
  if (parts[1] === 'streams' && parts[2]) return { stream: parts[2] };
  if (parts[1] === 'runs' && parts[2]) return { run: parts[2] };
  return {};
}

class Problems {
  readonly lines: string[] = [];
  private worst: ViewState = 'verified';
  /** A digest or a reading rule failed. */
  mismatch(line: string): void {
    this.lines.push(line);
    this.worst = 'mismatch';
  }
  /** A round or a file is missing. */
  incomplete(line: string): void {
    this.lines.push(line);
    if (this.worst === 'verified') this.worst = 'incomplete';
  }
  get state(): ViewState {
    return this.worst;
  }
}

class Landed implements RecordReader {
  readonly bySeq = new Map<number, { records: SdRecord[]; lane: string; digest: string }>();
  /** The session's provider_body files, read again only when a body names earlier records. */
  readonly bodyFiles: { seq: number; path: string }[] = [];
  private bodies: SessionProviderBodies | undefined;
  providerBody(seq: number, row: number): Buffer {
    this.bodies ??= new SessionProviderBodies(this.bodyFiles);
    return this.bodies.bodyAt(seq, row);
  }
  record(seq: number, row: number): SdRecord | undefined {
    return this.bySeq.get(seq)?.records[row - 1];
  }
  lane(seq: number): string {
    return this.bySeq.get(seq)?.lane ?? '';
  }
}

const FILE_KEYS: readonly (keyof ViewFile)[] = [
  'file',
  'format',
  'kind',
  'seq',
  'round',
  'stream',
  'run',
  'lines',
  'bytes',
  'digest',
  'from_time',
  'through_time',
  'verified',
];

/** The published key order, whatever order the values were found in. */
function inOrder(f: ViewFile): ViewFile {
  const out: Record<string, unknown> = {};
  for (const k of FILE_KEYS) if (f[k] !== undefined) out[k] = f[k];
  return out as unknown as ViewFile;
}

export function loadViewInput(root: string, conversation: string): ViewInput {
  const listed = listRounds(root, conversation);
  if (!listed.length) throw new ViewUnavailable(conversation, 'no such conversation: it has no rounds', 404);
  const problems = new Problems();
  const fold = emptyFold();
  const roundFiles: ViewFile[] = [];
  const rounds: ViewRound[] = [];
  const folded: Round[] = [];
  let expected = 1;
  let folding = true;
  for (const f of listed) {
    const where = rel(root, f.path);
    let bytes: Buffer;
    try {
      bytes = readFileSync(f.path);
    } catch (err) {
      problems.incomplete(`${where}: cannot be read: ${(err as Error).message}`);
      folding = false;
      continue;
    }
    const file: ViewFile = {
      file: where,
      format: 'sf',
      kind: 'round',
      round: f.round,
      lines: countLines(bytes),
      bytes: bytes.length,
      digest: sha256(bytes),
      verified: false,
    };
    roundFiles.push(file);
    if (f.round < expected) {
      problems.mismatch(`${where}: round ${f.round} appears twice`);
      rounds.push({ round: f.round, verified: false });
      continue;
    }
    if (f.round > expected) {
      problems.incomplete(`${where}: round ${expected} is missing before round ${f.round}`);
      folding = false;
    }
    expected = f.round + 1;
    let round: Round | undefined;
    if (bytes.length === 0) {
      problems.mismatch(`${where}: round ${f.round} is empty: it is still being written`);
    } else {
      try {
        round = decodeRoundBytes(bytes, where);
      } catch (err) {
        problems.mismatch((err as Error).message);
      }
    }
    if (!round) {
      folding = false;
      rounds.push({ round: f.round, verified: false });
      continue;
    }
    const h = round.header;
    const from = ms(h.from_time),
      through = ms(h.through_time);
    if (from !== undefined) file.from_time = from;
    if (through !== undefined) file.through_time = through;
    const vr: ViewRound = {
      round: h.round,
      digest: round.commit.digest,
      ...(h.previous ? { previous: h.previous } : {}),
      from_seq: h.from_seq,
      through_seq: h.through_seq,
      input_digest: h.input_digest,
      ...(from !== undefined ? { from_time: from } : {}),
      ...(through !== undefined ? { through_time: through } : {}),
      verified: false,
    };
    rounds.push(vr);
    if (!f.name.includes(round.commit.digest.slice(0, 12)))
      problems.mismatch(`${where}: the file name does not carry the round's digest ${round.commit.digest.slice(0, 12)}`);
    if (!folding) continue;
    try {
      applyRound(fold, round, where);
      folded.push(round);
    } catch (err) {
      problems.mismatch((err as Error).message);
      folding = false;
    }
  }
  if (!fold.head) throw new ViewUnavailable(conversation, 'no round of this conversation can be folded', 422, problems.lines);

  // The landed files, each read whole and checked against its closing digest.
  const session = fold.session!;
  const landed = new Landed();
  const files: ViewFile[] = [];
  const recordsByStream = new Map<string, number>();
  for (const l of listLanded(root, session)) {
    let bytes: Buffer;
    try {
      bytes = readFileSync(l.path);
    } catch (err) {
      problems.incomplete(`${l.rel}: cannot be read: ${(err as Error).message}`);
      continue;
    }
    const under = filedUnder(l.rel);
    const digest = sha256(bytes);
    const file: ViewFile = {
      file: l.rel,
      format: 'sd',
      kind: l.prefix,
      seq: l.seq,
      ...under,
      lines: countLines(bytes),
      bytes: bytes.length,
      digest,
      verified: false,
    };
    files.push(file);
    if (landed.bySeq.has(l.seq)) {
      problems.mismatch(`${l.rel}: sequence ${l.seq} was issued twice`);
      continue;
    }
    let records: SdRecord[] = [];
    try {
      const r = readLandedBytes(l.path, bytes);
      file.kind = r.header.kind;
      if (r.header.kind === 'provider_body') landed.bodyFiles.push({ seq: l.seq, path: l.path });
      if (r.header.seq !== l.seq) problems.mismatch(`${l.rel}: header seq ${r.header.seq} differs from the name's ${l.seq}`);
      else file.verified = true;
      records = r.records;
    } catch (err) {
      problems.mismatch((err as Error).message);
    }
    let lo: number | undefined, hi: number | undefined;
    for (const rec of records) {
      const t = ms(rec.time);
      if (t === undefined) continue;
      if (lo === undefined || t < lo) lo = t;
      if (hi === undefined || t > hi) hi = t;
    }
    if (lo !== undefined) file.from_time = lo;
    if (hi !== undefined) file.through_time = hi;
    landed.bySeq.set(l.seq, { records, lane: under.stream ?? (under.run ? `run:${under.run}` : ''), digest });
    if (under.stream) recordsByStream.set(under.stream, (recordsByStream.get(under.stream) ?? 0) + records.length);
  }

  // Each folded round against the landed files: continuity, the records it names, its input digest.
  let prevThrough = 0;
  let prevInput = '';
  for (const round of folded) {
    const h = round.header;
    const rf = roundFiles.find((f) => f.round === h.round)!;
    const where = rf.file;
    let ok = rf.file.includes(round.commit.digest.slice(0, 12));
    if (h.from_seq !== prevThrough + 1) {
      problems.incomplete(`${where}: from_seq ${h.from_seq} does not follow the previous through_seq ${prevThrough}: landed evidence was skipped`);
      ok = false;
    }
    const badRows: string[] = [];
    for (const fr of round.frames) {
      for (const r of frameRefs(fr)) {
        const l = landed.bySeq.get(r.seq);
        if (l && l.records.length && !l.records[r.row - 1]) badRows.push(`${r.seq}/${r.row}`);
      }
    }
    // A lost file is the problem of the round that consumed it, once (round-losses.ts).
    const losses = roundLosses(round, prevThrough, prevInput, (s) => landed.bySeq.get(s)?.digest);
    for (const line of losses.incomplete) problems.incomplete(`${where}: ${line}`);
    if (badRows.length) problems.mismatch(`${where}: names ${badRows.length} record(s) its landed files do not hold, first ${badRows[0]}`);
    for (const line of losses.mismatch) problems.mismatch(`${where}: ${line}`);
    const verified = ok && !losses.incomplete.length && !losses.mismatch.length && !badRows.length;
    const vr = rounds.find((r) => r.round === h.round && r.digest === round.commit.digest);
    if (vr) vr.verified = verified;
    rf.verified = verified;
    prevThrough = h.through_seq;
    prevInput = h.input_digest;
  }

  return {
    conversation,
    fold,
    rounds,
    files: [...files.sort((a, b) => a.seq! - b.seq!), ...roundFiles].map(inOrder),
    problems: problems.lines,
    state: problems.state,
    records: landed,
    recordsByStream,
  };
}
