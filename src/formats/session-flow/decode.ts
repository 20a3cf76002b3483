import { isAscii, isUtf8 } from 'node:buffer';
import { createHash, type Hash } from 'node:crypto';
import { AszError } from '../../util/errors.js';
import type { Commit, EntityFrame, Ref, Round, RoundHeader } from './types.js';
import { SF_SCHEMA } from './types.js';

/** A round a reader refuses; `where` names the file and line. */
export class RoundError extends AszError {
  constructor(
    readonly file: string,
    readonly line: number | undefined,
    reason: string,
  ) {
    super(reason, line === undefined ? file : `${file}:${line}`);
  }
}

function checkRef(r: unknown, throughSeq: number): string | undefined {
  if (typeof r !== 'object' || r === null) return 'a reference is not an object';
  const { seq, row } = r as Ref;
  if (!Number.isInteger(seq) || !Number.isInteger(row)) return 'a reference lacks an integer seq and row';
  if (seq === 0 && row === 0) return 'a reference is sequence 0 row 0';
  if (seq > throughSeq) return `a reference names sequence ${seq}, past through_seq ${throughSeq}`;
  return undefined;
}

/**
 * The strict reader: every rule of session-flow "Reading it". Nothing looks at a round again
 * once it is folded, so anything a correct producer never writes is refused here.
 */
export function decodeRound(text: string, file = '(round)'): Round {
  const hash = createHash('sha256');
  return readRound(text, file, hash, () => hash.digest('hex'));
}

/**
 * The strict reader over a round file's bytes, as read from disk: the same rules and errors as
 * `decodeRound` on their UTF-8 text, with the commit's digest taken over the bytes before the commit
 * line in one pass instead of re-encoding every line. Bytes that are not UTF-8 go through
 * `decodeRound` unchanged, so the replacement characters their text gets decide as before.
 */
export function decodeRoundBytes(bytes: Buffer, file = '(round)'): Round {
  if (!isUtf8(bytes)) return decodeRound(bytes.toString('utf8'), file);
  // ASCII read as latin1 is the same text, without a UTF-8 decoder's pass (rounds are nearly always ASCII).
  const text = isAscii(bytes) ? bytes.toString('latin1') : bytes.toString('utf8');
  // Reached only once the commit is the last line: every byte before that line is what it covers.
  const contentDigest = () =>
    createHash('sha256')
      .update(bytes.subarray(0, bytes.lastIndexOf(0x0a, bytes.length - 2) + 1))
      .digest('hex');
  return readRound(text, file, undefined, contentDigest);
}

/**
 * The rules, line by line. `lineHash`, when given, takes every line the commit covers as it is read;
 * `contentDigest` is asked for the digest of those lines once the commit has been found.
 */
function readRound(text: string, file: string, lineHash: Hash | undefined, contentDigest: () => string): Round {
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  else throw new RoundError(file, lines.length, 'the last line has no newline: the round is truncated');
  let header: RoundHeader | undefined;
  let commit: Commit | undefined;
  const frames: EntityFrame[] = [];
  const ids = new Set<string>();
  for (let i = 0; i < lines.length; i++) {
    const n = i + 1;
    const line = lines[i]!;
    if (commit) throw new RoundError(file, n, 'a line follows the commit');
    let f: Record<string, unknown>;
    try {
      f = JSON.parse(line) as Record<string, unknown>;
    } catch {
      throw new RoundError(file, n, 'the line does not decode');
    }
    if (typeof f !== 'object' || f === null) throw new RoundError(file, n, 'the line is not an object');
    if (i === 0 && f.t !== 'header') throw new RoundError(file, n, 'the first line is not a header');
    switch (f.t) {
      case 'header': {
        if (i !== 0) throw new RoundError(file, n, 'a second header');
        header = checkHeader(f as unknown as RoundHeader, file, n);
        lineHash?.update(line + '\n', 'utf8');
        continue;
      }
      case 'node':
      case 'relation':
      case 'unresolved': {
        const e = f as unknown as EntityFrame;
        if (typeof e.id !== 'string' || !e.id) throw new RoundError(file, n, 'an entity has no id');
        if (ids.has(e.id)) throw new RoundError(file, n, `id ${e.id} appears twice`);
        ids.add(e.id);
        checkEntity(e, header!, file, n);
        frames.push(e);
        lineHash?.update(line + '\n', 'utf8');
        continue;
      }
      case 'commit': {
        commit = f as unknown as Commit;
        continue;
      }
      default:
        throw new RoundError(file, n, `unknown frame type ${JSON.stringify(f.t)}`);
    }
  }
  if (!header) throw new RoundError(file, undefined, 'empty round');
  if (!commit) throw new RoundError(file, undefined, 'no commit: the round is truncated');
  const digest = contentDigest();
  if (commit.digest !== digest) throw new RoundError(file, undefined, `commit digest ${commit.digest} does not match the content's ${digest}`);
  const counts = { nodes: 0, relations: 0, unresolved: 0 };
  for (const f of frames) counts[f.t === 'node' ? 'nodes' : f.t === 'relation' ? 'relations' : 'unresolved']++;
  const c = commit.counts ?? ({} as Commit['counts']);
  if (c.nodes !== counts.nodes || c.relations !== counts.relations || c.unresolved !== counts.unresolved) {
    throw new RoundError(file, undefined, `commit counts ${JSON.stringify(c)} do not match ${JSON.stringify(counts)}`);
  }
  return { header, frames, commit };
}

function checkHeader(h: RoundHeader, file: string, n: number): RoundHeader {
  if (h.schema !== SF_SCHEMA) throw new RoundError(file, n, `schema is ${JSON.stringify(h.schema)}, not ${SF_SCHEMA}`);
  for (const k of ['conversation', 'session', 'parser', 'policy', 'input_digest'] as const) {
    if (typeof h[k] !== 'string' || h[k] === '') throw new RoundError(file, n, `the header lacks ${k}`);
  }
  if (!Number.isInteger(h.round) || h.round < 1) throw new RoundError(file, n, 'round must be 1 or more');
  if (h.round === 1 && h.previous !== undefined) throw new RoundError(file, n, 'round 1 carries previous');
  if (h.round > 1 && (typeof h.previous !== 'string' || !h.previous)) throw new RoundError(file, n, `round ${h.round} lacks previous`);
  if (!Number.isInteger(h.from_seq) || h.from_seq < 1) throw new RoundError(file, n, 'from_seq must be 1 or more');
  if (!Number.isInteger(h.through_seq) || h.through_seq < h.from_seq - 1) throw new RoundError(file, n, 'through_seq is below from_seq minus one');
  return h;
}

function checkEntity(e: EntityFrame, header: RoundHeader, file: string, n: number): void {
  if (e.revision !== header.round) throw new RoundError(file, n, `revision ${e.revision} differs from round ${header.round}`);
  if (e.tombstone) return;
  if (e.t === 'node') {
    if (typeof e.kind !== 'string') throw new RoundError(file, n, `node ${e.id} lacks kind`);
    if (e.ref) checkRefOf(e.id, e.ref, header, file, n);
    for (const r of listOf(e.refs, `${e.id}: refs`, file, n)) checkRefOf(e.id, r, header, file, n);
  } else if (e.t === 'relation') {
    if (!e.type || !e.from || !e.to) throw new RoundError(file, n, `relation ${e.id} lacks type, from or to`);
    for (const r of listOf(e.evidence, `${e.id}: evidence`, file, n)) checkRefOf(e.id, r, header, file, n);
  } else if (e.state !== 'open' && e.state !== 'resolved' && e.state !== 'terminal') {
    throw new RoundError(file, n, `unresolved ${e.id} has state ${JSON.stringify(e.state)}`);
  }
}

function checkRefOf(id: string, r: unknown, header: RoundHeader, file: string, n: number): void {
  const p = checkRef(r, header.through_seq);
  if (p) throw new RoundError(file, n, `${id}: ${p}`);
}

/** A frame's list of references; absent (or null) is none, anything but a list is refused by name. */
function listOf(v: unknown, what: string, file: string, n: number): readonly unknown[] {
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new RoundError(file, n, `${what} is not a list`);
  return v;
}
