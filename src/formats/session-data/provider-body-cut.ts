/**
 * The `provider_body/1` writer that takes repeats out, as asz 0.6 lands bodies: a request's front
 * that an earlier request (its chain's latest) already holds becomes one `copy`; each tool
 * definition and every string of 1 KiB or more is a piece, stored once in a session as a `data`
 * part and named by its digest (`piece`) afterwards; the rest is `lit`. Every record is encoded,
 * read back and rebuilt against what the session holds before it is handed out; one that does not
 * come back whole is written whole instead (`lit`), with the reason kept for the caller to count.
 * Pure: the session's landed records come in through the store, record lines go out.
 */
import { createHash } from 'node:crypto';
import { encodeRecord } from './encode.js';
import { keepDataJson } from './measured-data.js';
import { bodyParts, bodyProblem, PROVIDER_BODY_SCHEMA, type BodyFacts, type ProviderBodyManifest, type Segment } from './provider-body.js';
import { chainOf } from './provider-body-chain.js';
import { bodyLayout, type ByteSpan } from './provider-body-scan.js';
import { MAX_COPY_DEPTH, type ProviderBodyStore } from './provider-body-store.js';
import type { Part, SdRecord } from './types.js';

/** The shortest front worth a copy (asz 0.6's 4 KiB): a new chain shares only a few hundred bytes with anything before it. */
export const MIN_COPY_BYTES = 4096;
/** How many other chains' latest requests a body is also compared with (asz 0.6's), for a first message that changed shape. */
const OTHER_TIPS = 8;

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A record's place-independent fields; `parts` is what this module adds. */
export type BodyRecordBase = Omit<SdRecord, 'parts'>;

export interface CutRecord {
  record: SdRecord;
  /** The record as its file's line (the writer's exact bytes). */
  line: string;
  /** Set when the body was written whole though it could be cut: why the cut was not taken. */
  whole?: string;
}

function commonPrefix(a: Buffer, b: Buffer): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}

function spansLines(body: Buffer, span: ByteSpan): boolean {
  for (let i = span.from; i < span.to; i++) if (body[i] === 0x0a || body[i] === 0x0d) return true;
  return false;
}

const continuationByte = (c: number | undefined) => c !== undefined && (c & 0xc0) === 0x80;

/** The copy a request's front can be: the candidate sharing the longest front, ended before any piece it would cut in two and on a character boundary. */
function bestCopy(
  store: ProviderBodyStore,
  body: Buffer,
  pieces: ByteSpan[],
  chain: string,
): { from: string; sha256: string; len: number; depth: number } | undefined {
  let best: { from: string; sha256: string; len: number; depth: number } | undefined;
  for (const id of store.baseCandidates(chain, OTHER_TIPS)) {
    const m = store.manifestOf(id);
    if (!m || m.depth + 1 > MAX_COPY_DEPTH) continue;
    let base: Buffer;
    try {
      base = store.body(id);
    } catch {
      continue; // a base that does not rebuild is no base: the body stores its front itself
    }
    const len = commonPrefix(base, body);
    if (!best || len > best.len) best = { from: id, sha256: m.sha256, len, depth: m.depth + 1 };
  }
  if (!best) return undefined;
  const cut = pieces.find((p) => p.to > best.len);
  if (cut && cut.from < best.len) best.len = cut.from;
  while (best.len > 0 && best.len < body.length && continuationByte(body[best.len])) best.len--;
  return best.len >= MIN_COPY_BYTES ? best : undefined;
}

/** The parts (pieces new to the session, then the manifest) of a body cut against `store`. */
function cutParts(store: ProviderBodyStore, body: Buffer, facts: BodyFacts): Part[] {
  const layout = bodyLayout(body);
  const segments: Segment[] = [];
  let depth = 0;
  let pos = 0;
  let chain: string | undefined;
  if (facts.role === 'request' && layout.firstMessage) {
    chain = chainOf(body.subarray(layout.firstMessage.from, layout.firstMessage.to));
    const copy = bestCopy(store, body, layout.pieces, chain);
    if (copy) {
      segments.push({ copy: { from: copy.from, sha256: copy.sha256, len: copy.len } });
      depth = copy.depth;
      pos = copy.len;
    }
  }
  const parts: Part[] = [];
  const local = new Map<string, number>();
  for (const span of layout.pieces) {
    // A piece is spliced into its record's line as written, and a line cannot hold a line break: a value spelled across lines stays literal.
    if (span.from < pos || spansLines(body, span)) continue;
    if (span.from > pos) segments.push({ lit: body.toString('utf8', pos, span.from) });
    const text = body.toString('utf8', span.from, span.to);
    const digest = sha256(body.subarray(span.from, span.to));
    const mine = local.get(digest);
    if (mine !== undefined) segments.push({ part: mine });
    else if (store.holdsPiece(digest)) segments.push({ piece: digest });
    else {
      local.set(digest, parts.length);
      segments.push({ part: parts.length });
      // The piece's text as the runtime spelled it: its digest names it, so it is written, never printed again.
      parts.push(keepDataJson({ k: 'data', state: 'available', bytes: span.to - span.from, data: JSON.parse(text) as unknown }, text));
    }
    pos = span.to;
  }
  if (pos < body.length) segments.push({ lit: body.toString('utf8', pos) });
  const manifest: ProviderBodyManifest = {
    schema: PROVIDER_BODY_SCHEMA,
    role: facts.role,
    src: facts.src,
    sha256: sha256(body),
    bytes: body.length,
    depth,
    ...(chain ? { chain } : {}),
    ...(facts.model ? { model: facts.model } : {}),
    ...(facts.session ? { session: facts.session } : {}),
    ...(facts.call ? { call: facts.call } : {}),
    ...(facts.request ? { request: facts.request } : {}),
    segments,
  };
  parts.push({ k: 'data', state: 'available', bytes: body.length, data: manifest });
  return parts;
}

/**
 * One body's record, cut against what `store` holds when `cut` is on, then added to the store
 * (`seq`/`row`: where it will land) so the bodies after it may refer to it. A body that is not one
 * JSON object in valid UTF-8 is written as bodyParts writes it (an unknown part with `why`).
 */
export function cutBodyRecord(
  store: ProviderBodyStore,
  base: BodyRecordBase,
  body: Buffer,
  facts: BodyFacts,
  at: { seq: number; row: number; cut: boolean },
): CutRecord {
  let whole: string | undefined;
  if (at.cut && !bodyProblem(body)) {
    try {
      const record: SdRecord = { ...base, parts: cutParts(store, body, facts) };
      const line = encodeRecord(record);
      if (line.includes('\n')) throw new Error('the cut record is not one line');
      // Read back as a reader will read it, against what the session holds: only that proves the bytes.
      if (!store.rebuildLine(line).equals(body)) throw new Error('the cut record rebuilds to other bytes');
      const added = store.add(at.seq, at.row, line);
      if (added !== 'added') throw new Error('refused' in added ? added.refused : added.unresolved);
      return { record, line };
    } catch (err) {
      whole = `the body was written whole: ${(err as Error).message}`;
    }
  }
  const record: SdRecord = { ...base, parts: bodyParts(body, facts) };
  const line = encodeRecord(record);
  store.add(at.seq, at.row, line);
  return { record, line, ...(whole ? { whole } : {}) };
}
