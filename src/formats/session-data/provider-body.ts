import { createHash } from 'node:crypto';
import type { Part, SdRecord } from './types.js';

/**
 * `provider_body/1`: one request or response body a runtime exchanged with its model provider, as
 * the last part of a record of a `provider_body` file (asz 0.6's Session Data page). The manifest
 * names the body (role, digest, size) and lists the segments that, joined in order, are its bytes:
 * `lit` (literal text), `part` (a part of this record), `piece` and `copy` (bytes an earlier record
 * holds). `bodyParts` writes a body whole, as one `lit`, or one `unknown` part with `why` when it is
 * not a JSON object (provider-body-cut.ts writes the cut form); `rebuildBody` reads `lit` and an
 * unknown `part` from one record, and any other body is read with its session's files
 * (provider-body-store.ts).
 */
export const PROVIDER_BODY_SCHEMA = 'provider_body/1' as const;
export type BodyRole = 'request' | 'response';

export interface Segment {
  lit?: string;
  part?: number;
  piece?: string;
  copy?: { from?: string; sha256?: string; len?: number };
}

export interface ProviderBodyManifest {
  schema: typeof PROVIDER_BODY_SCHEMA;
  role: BodyRole;
  /** The source file's name, relative to the directory the adapter reads. */
  src?: string;
  sha256: string;
  bytes: number;
  depth: number;
  /** A request's chain: it picks the body a later copy comes from (provider-body-chain.ts), and joins nothing. */
  chain?: string;
  /** Set when the body was kept whole in an unknown part: why it could not be read as JSON. */
  why?: string;
  model?: string;
  session?: string;
  /** The provider call's message id (the transcript's `call`). */
  call?: string;
  /** The provider's request id. */
  request?: string;
  segments: Segment[];
}

/** The facts a landed body is filed under, besides its bytes. */
export interface BodyFacts {
  role: BodyRole;
  src: string;
  model?: string;
  session?: string;
  call?: string;
  request?: string;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** Why these bytes are not one JSON object in valid UTF-8 (asz's test for a body it can cut), or undefined. */
export function bodyProblem(bytes: Buffer): string | undefined {
  const text = bytes.toString('utf8');
  if (!Buffer.from(text, 'utf8').equals(bytes)) return 'the body is not valid UTF-8';
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch (err) {
    return `the body is not one JSON value (${(err as Error).message}); the file may have been cut short`;
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) return 'the body is JSON but not an object';
  return undefined;
}

/** The parts of one body's record: the manifest last, and before it the whole body in an unknown part when it is not readable JSON. */
export function bodyParts(bytes: Buffer, facts: BodyFacts): Part[] {
  const why = bodyProblem(bytes);
  const base = {
    schema: PROVIDER_BODY_SCHEMA,
    role: facts.role,
    src: facts.src,
    sha256: sha256(bytes),
    bytes: bytes.length,
    depth: 0,
    ...(why ? { why } : {}),
    ...(facts.model ? { model: facts.model } : {}),
    ...(facts.session ? { session: facts.session } : {}),
    ...(facts.call ? { call: facts.call } : {}),
    ...(facts.request ? { request: facts.request } : {}),
  };
  if (why) {
    // Invalid UTF-8 cannot be a literal: the unknown part keeps it as base64 and the rebuild refuses it with the reason.
    const unknown: Part = { k: 'unknown', state: 'available', bytes: bytes.length, text: why, data: bytes.toString('utf8') };
    if (why.includes('UTF-8')) Object.assign(unknown, { media: 'application/octet-stream;base64', data: bytes.toString('base64') });
    const manifest: ProviderBodyManifest = { ...base, segments: [{ part: 0 }] };
    return [unknown, { k: 'data', state: 'available', bytes: bytes.length, data: manifest }];
  }
  const manifest: ProviderBodyManifest = { ...base, segments: [{ lit: bytes.toString('utf8') }] };
  return [{ k: 'data', state: 'available', bytes: bytes.length, data: manifest }];
}

/** The record's manifest: its last part when that is a `provider_body/1` data part. */
export function manifestOf(r: Pick<SdRecord, 'parts'>): ProviderBodyManifest | undefined {
  const last = r.parts[r.parts.length - 1];
  const d = last?.k === 'data' ? (last.data as Partial<ProviderBodyManifest> | undefined) : undefined;
  if (!d || typeof d !== 'object' || d.schema !== PROVIDER_BODY_SCHEMA) return undefined;
  if (d.role !== 'request' && d.role !== 'response') return undefined;
  return d as ProviderBodyManifest;
}

/**
 * Whether the body is rebuilt with its session's files (provider-body-store.ts): its segments name
 * bytes of earlier records (`piece`, `copy`), or a piece of its own, whose bytes are the record
 * line's text as written, which a decoded record no longer has.
 */
export function rebuiltWithSessionFiles(r: Pick<SdRecord, 'parts'>): boolean {
  return (manifestOf(r)?.segments ?? []).some(
    (s) =>
      (s.piece !== undefined && s.piece !== null) || (s.copy !== undefined && s.copy !== null) || (typeof s.part === 'number' && r.parts[s.part]?.k === 'data'),
  );
}

export type Rebuilt = { body: string } | { problem: string };

/** The body's text, from this record alone; a `piece` or `copy` (bytes of earlier records) is not read here, and says so. */
export function rebuildBody(r: Pick<SdRecord, 'parts'>): Rebuilt {
  const m = manifestOf(r);
  if (!m) return { problem: 'the record carries no provider_body/1 manifest' };
  if (m.why) return { problem: m.why };
  const out: string[] = [];
  for (const s of m.segments ?? []) {
    if (typeof s.lit === 'string') out.push(s.lit);
    else if (typeof s.part === 'number') {
      const p = r.parts[s.part];
      if (!p || p === r.parts[r.parts.length - 1]) return { problem: `segment part ${s.part} names no part of the record` };
      if (p.k === 'data') return { problem: 'the body holds pieces whose bytes are its line as written, which this reader does not rebuild' };
      out.push(typeof p.data === 'string' ? p.data : JSON.stringify(p.data));
    } else return { problem: 'the body refers to pieces of earlier records, which this reader does not rebuild' };
  }
  const body = out.join('');
  if (sha256(Buffer.from(body, 'utf8')) !== m.sha256) return { problem: 'the rebuilt body does not match its digest' };
  return { body };
}
