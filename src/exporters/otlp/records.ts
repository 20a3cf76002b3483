/**
 * One log record per file: what a landed file (`sd`) or a round (`sf`) says about itself, in the
 * contract's attributes, and the record time the contract chooses. The body is the file's bytes
 * unchanged; a file whose bytes do not hold together (not UTF-8, a closing digest that does not
 * match) is refused here, so a receiver is never sent something `verify` would reject.
 */
import { createHash } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import { AszError } from '../../util/errors.js';
import { i, s, type Attr } from '../../otlp/identity.js';
import { roundListAttributes, type WorkspaceTotals } from './round-attributes.js';
import { headerWorkspaceTotals } from '../../assemble/workspace-changes.js';

export type FileFormat = 'sd' | 'sf';

/** A file ready to travel. */
export interface OutFile {
  rel: string;
  format: FileFormat;
  bytes: Buffer;
  /** SHA-256 of the bytes, hex. */
  digest: string;
  /** When the bytes are a landed file less what is withheld (withhold-file.ts): the landed file's SHA-256. */
  landedDigest?: string;
  session: string;
  /** The adapter that produced the session (from a landed header), for the service name. */
  adapter: string | undefined;
  attributes: Attr[];
  /** The record time; undefined until resolved (a landed file with no record time takes the session's latest). */
  timeNs: bigint | undefined;
  /** For `sd`: the latest record time in the file, if any. */
  throughNs?: bigint;
}

/** A file the exporter refuses to send, and why. */
export class UnsendableFileError extends AszError {
  constructor(
    readonly rel: string,
    readonly reason: string,
  ) {
    super(reason, rel);
  }
}

const RFC3339 = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/i;

/** An RFC 3339 time as nanoseconds since the epoch (sub-millisecond digits kept), or undefined. */
export function timeNs(text: unknown): bigint | undefined {
  if (typeof text !== 'string') return undefined;
  const m = RFC3339.exec(text);
  if (!m) return undefined;
  const ms = Date.parse(`${m[1]}${m[3]!.toUpperCase()}`);
  if (!Number.isFinite(ms)) return undefined;
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'));
}

/** The text as written when it is already UTC, else the same instant in UTC with its fraction kept. */
export function utcText(text: string, ns: bigint): string {
  if (/Z$/i.test(text)) return text.replace(/z$/, 'Z');
  const frac = RFC3339.exec(text)?.[2];
  const base = new Date(Number(ns / 1_000_000n)).toISOString().slice(0, 19);
  return `${base}${frac ? '.' + frac : ''}Z`;
}

interface Checked {
  digest: string;
  lines: number;
  first: Record<string, unknown>;
  last: Record<string, unknown>;
  /** Where the last line starts. */
  lastStart: number;
  /** Where the first line ends (its newline). */
  firstEnd: number;
}

/**
 * Both formats end in a line whose `digest` covers every line before it. One pass over the bytes
 * gives that digest (a copy of the running hash) and the whole file's.
 */
function check(rel: string, bytes: Buffer, closingType: 'end' | 'commit'): Checked {
  if (bytes.length === 0) throw new UnsendableFileError(rel, 'the file is empty');
  if (bytes[bytes.length - 1] !== 10) throw new UnsendableFileError(rel, 'the last line has no newline: the file was cut short');
  if (!isUtf8(bytes)) throw new UnsendableFileError(rel, 'the file is not UTF-8; a log record body is a string, so it cannot travel unchanged');
  const lastStart = bytes.lastIndexOf(10, bytes.length - 2) + 1;
  const firstEnd = bytes.indexOf(10);
  if (lastStart === 0) throw new UnsendableFileError(rel, 'the file has one line: no closing line');
  const h = createHash('sha256').update(bytes.subarray(0, lastStart));
  const inner = h.copy().digest('hex');
  const digest = h.update(bytes.subarray(lastStart)).digest('hex');
  let first: Record<string, unknown>, last: Record<string, unknown>;
  try {
    first = JSON.parse(bytes.toString('utf8', 0, firstEnd)) as Record<string, unknown>;
    last = JSON.parse(bytes.toString('utf8', lastStart, bytes.length - 1)) as Record<string, unknown>;
  } catch {
    throw new UnsendableFileError(rel, 'the first or the last line is not JSON');
  }
  if (typeof first !== 'object' || first === null || typeof last !== 'object' || last === null)
    throw new UnsendableFileError(rel, 'the first or the last line is not a JSON object');
  if (last.t !== closingType) throw new UnsendableFileError(rel, `the last line is not the ${closingType} line: the file was cut short`);
  if (last.digest !== inner)
    throw new UnsendableFileError(rel, `the ${closingType} line's digest ${String(last.digest)} does not match the content's ${inner}`);
  let lines = 0;
  for (let p = bytes.indexOf(10); p >= 0; p = bytes.indexOf(10, p + 1)) lines++;
  return { digest, lines, first, last, lastStart, firstEnd };
}

const TIME_KEY = Buffer.from('"time":"');
const PARTS_KEY = Buffer.from('"parts":');
/** A UTC time the way runtimes write it; two of the same length compare as text. */
const PLAIN_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

interface Stamp {
  ns: bigint;
  text: string;
}

/**
 * The earliest and the latest record time of a landed file. A record's own `time` is a top-level
 * key written before `parts`; a quote inside a JSON string is escaped, so the first `"time":"`
 * before the first `"parts":` is that key, and nothing in the record's content can be taken
 * for it. Lines are not parsed (this runs over every byte a push sends), and times written alike
 * are compared as text, parsed only when they are not.
 */
function recordTimes(bytes: Buffer, from: number, to: number): { from?: Stamp; through?: Stamp } {
  let loText: string | undefined, hiText: string | undefined;
  let lo: Stamp | undefined, hi: Stamp | undefined;
  const consider = (text: string) => {
    if (loText !== undefined && hiText !== undefined && text.length === loText.length && text.length === hiText.length && PLAIN_UTC.test(text)) {
      if (text < loText) {
        loText = text;
        lo = undefined;
      }
      if (text > hiText) {
        hiText = text;
        hi = undefined;
      }
      return;
    }
    const ns = timeNs(text);
    if (ns === undefined) return;
    lo ??= loText === undefined ? undefined : { ns: timeNs(loText)!, text: loText };
    hi ??= hiText === undefined ? undefined : { ns: timeNs(hiText)!, text: hiText };
    if (!lo || ns < lo.ns) lo = { ns, text };
    if (!hi || ns > hi.ns) hi = { ns, text };
    // Text comparison stays valid only while both ends are plain UTC of one length.
    const plain = PLAIN_UTC.test(lo.text) && PLAIN_UTC.test(hi.text) && lo.text.length === hi.text.length;
    loText = plain ? lo.text : undefined;
    hiText = plain ? hi.text : undefined;
  };
  for (let start = from; start < to;) {
    let end = bytes.indexOf(10, start);
    if (end < 0 || end > to) end = to;
    const line = bytes.subarray(start, end);
    const parts = line.indexOf(PARTS_KEY);
    const head = parts < 0 ? line : line.subarray(0, parts);
    const k = head.indexOf(TIME_KEY);
    if (k >= 0) {
      const q = head.indexOf(34, k + TIME_KEY.length);
      if (q > 0) consider(head.toString('latin1', k + TIME_KEY.length, q));
    }
    start = end + 1;
  }
  if (!lo && loText !== undefined) lo = { ns: timeNs(loText)!, text: loText };
  if (!hi && hiText !== undefined) hi = { ns: timeNs(hiText)!, text: hiText };
  return { from: lo, through: hi };
}

/** A landed Session Data file as a record: attributes in the order of the contract's table. */
export function describeLanded(rel: string, bytes: Buffer): OutFile {
  const c = check(rel, bytes, 'end');
  const h = c.first;
  if (h.h !== 1 || typeof h.schema !== 'string' || !h.schema.startsWith('sd/'))
    throw new UnsendableFileError(rel, 'the first line is not a Session Data header');
  if (typeof h.session !== 'string' || typeof h.kind !== 'string' || typeof h.seq !== 'number')
    throw new UnsendableFileError(rel, 'the header lacks session, kind or seq');
  if (c.last.records !== c.lines - 2)
    throw new UnsendableFileError(rel, `the closing line says ${String(c.last.records)} records, the file holds ${c.lines - 2}`);
  const t = recordTimes(bytes, c.firstEnd + 1, c.lastStart);
  const attributes: Attr[] = [
    s('asz.format', 'sd'),
    s('asz.format.version', h.schema),
    s('asz.file', rel),
    s('asz.file.kind', h.kind),
    s('asz.file.digest', c.digest),
    i('asz.lines', c.lines),
    s('asz.session', h.session),
  ];
  if (t.from && t.through) attributes.push(s('asz.from_time', utcText(t.from.text, t.from.ns)), s('asz.through_time', utcText(t.through.text, t.through.ns)));
  attributes.push(i('asz.seq', h.seq));
  if (typeof h.stream === 'string' && h.stream) attributes.push(s('asz.stream', h.stream));
  if (typeof h.batch === 'string' && h.batch) attributes.push(s('asz.run', h.batch));
  return {
    rel,
    format: 'sd',
    bytes,
    digest: c.digest,
    session: h.session,
    adapter: typeof h.adapter === 'string' ? h.adapter : undefined,
    attributes,
    timeNs: t.through?.ns,
    throughNs: t.through?.ns,
  };
}

/**
 * A round as a record; its time is the session's last activity as of that round. `workspace`: the
 * conversation's measured workspace changes, when known (round-attributes.ts).
 */
export function describeRound(rel: string, bytes: Buffer, workspace?: WorkspaceTotals): OutFile {
  const c = check(rel, bytes, 'commit');
  const h = c.first;
  if (h.t !== 'header' || typeof h.schema !== 'string' || !h.schema.startsWith('sf/'))
    throw new UnsendableFileError(rel, 'the first line is not a round header');
  if (typeof h.session !== 'string' || typeof h.conversation !== 'string' || typeof h.round !== 'number')
    throw new UnsendableFileError(rel, 'the header lacks session, conversation or round');
  const attributes: Attr[] = [
    s('asz.format', 'sf'),
    s('asz.format.version', h.schema),
    s('asz.file', rel),
    s('asz.file.kind', 'round'),
    s('asz.file.digest', c.digest),
    i('asz.lines', c.lines),
    s('asz.session', h.session),
  ];
  const time = (k: string) => {
    const ns = timeNs(h[k]);
    return ns === undefined ? undefined : { ns, text: utcText(h[k] as string, ns) };
  };
  const from = time('from_time'),
    through = time('through_time');
  if (from && through) attributes.push(s('asz.from_time', from.text), s('asz.through_time', through.text));
  const sFrom = time('session_from_time'),
    sThrough = time('session_through_time');
  if (sFrom) attributes.push(s('asz.session.from_time', sFrom.text));
  if (sThrough) attributes.push(s('asz.session.through_time', sThrough.text));
  // The header measures them since the transcript's own patches are read (assemble/workspace-changes.ts).
  attributes.push(...roundListAttributes(h, workspace ?? headerWorkspaceTotals(h)));
  attributes.push(s('asz.conversation', h.conversation), i('asz.round', h.round));
  return { rel, format: 'sf', bytes, digest: c.digest, session: h.session, adapter: undefined, attributes, timeNs: sThrough?.ns ?? through?.ns };
}

/** SHA-256 of bytes, hex: the digest push.state records for a spooled metrics request. */
export const sha256 = (b: Buffer): string => createHash('sha256').update(b).digest('hex');
