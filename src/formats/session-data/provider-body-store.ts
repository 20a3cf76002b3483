/**
 * The provider bodies of one session, rebuilt from `provider_body/1` records that refer to one
 * another (asz 0.6's repeat removal). A record keeps what its session did not hold yet; its
 * manifest's segments, joined in order, are the body: `lit` (text), `part` (a part of the record),
 * `piece` (a `data` part an earlier record holds, named by the SHA-256 of its text as spelled) and
 * `copy` (the first `len` bytes of an earlier body). So records are added in landing order (seq,
 * then row), and a body either rebuilds to its digest or says why not. Pure: lines in, bytes out.
 */
import { createHash } from 'node:crypto';
import { PROVIDER_BODY_SCHEMA, type ProviderBodyManifest, type Segment } from './provider-body.js';
import { rawRecord, type RawPart } from './raw-parts.js';

/** The largest body rebuilt, and the longest chain of copies, as asz 0.6 bounds them. */
export const MAX_BODY_BYTES = 256 * 1024 * 1024;
export const MAX_COPY_DEPTH = 32;
/** Rebuilt bodies kept for the copies that follow, in bytes. */
const CACHE_BYTES = 32 * 1024 * 1024;
/** Chains whose latest request is kept as a base for the next copy (asz 0.6's: the main stream and each child running at once). */
const MAX_TIPS = 64;

export class ProviderBodyError extends Error {}

export type AddOutcome = 'added' | { refused: string } | { unresolved: string };

interface Held {
  id: string;
  parts: RawPart[];
  manifest: ProviderBodyManifest;
}

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const isInt = (v: unknown): v is number => Number.isSafeInteger(v);

/** The manifest when it has the shape `provider_body/1` gives it; a reason otherwise. */
function checkedManifest(raw: string | undefined): ProviderBodyManifest | string {
  let m: Partial<ProviderBodyManifest>;
  try {
    m = JSON.parse(raw ?? '') as Partial<ProviderBodyManifest>;
  } catch {
    return 'the last part is not a provider_body/1 manifest';
  }
  if (!m || typeof m !== 'object' || m.schema !== PROVIDER_BODY_SCHEMA) return 'the last part is not a provider_body/1 manifest';
  if (typeof m.sha256 !== 'string' || !isInt(m.bytes) || !isInt(m.depth) || !Array.isArray(m.segments))
    return 'the manifest lacks sha256, bytes, depth or segments';
  if (m.bytes < 0 || m.bytes > MAX_BODY_BYTES) return `the manifest claims ${m.bytes} bytes (at most ${MAX_BODY_BYTES})`;
  if (m.depth < 0 || m.depth > MAX_COPY_DEPTH) return `the manifest's copy depth ${m.depth} is outside 0..${MAX_COPY_DEPTH}`;
  for (const s of m.segments as unknown[]) {
    const seg = s as Segment | null;
    const kinds = seg && typeof seg === 'object' ? (['lit', 'part', 'piece', 'copy'] as const).filter((k) => seg[k] !== undefined && seg[k] !== null) : [];
    if (kinds.length !== 1) return 'a segment is not exactly one of lit, part, piece, copy';
    if (kinds[0] === 'lit' && typeof seg!.lit !== 'string') return 'a lit segment is not text';
    if (kinds[0] === 'part' && !isInt(seg!.part)) return 'a part segment is not an index';
    if (kinds[0] === 'piece' && typeof seg!.piece !== 'string') return 'a piece segment is not a digest';
    if (kinds[0] === 'copy') {
      const c = seg!.copy!;
      if (typeof c !== 'object' || typeof c.from !== 'string' || typeof c.sha256 !== 'string' || !isInt(c.len))
        return 'a copy segment lacks from, sha256 or len';
    }
  }
  return m as ProviderBodyManifest;
}

/** A part's bytes: a data part's text as spelled; an unknown part's string, decoded from base64 when it says so. */
function partBytes(p: RawPart): Buffer {
  if (p.raw === undefined) throw new ProviderBodyError('a segment names a part without data');
  if (p.k !== 'unknown') return Buffer.from(p.raw, 'utf8');
  const text = JSON.parse(p.raw) as unknown;
  if (typeof text !== 'string') throw new ProviderBodyError("an unknown part's data is not one JSON string");
  if (p.encoding === undefined) return Buffer.from(text, 'utf8');
  if (p.encoding === 'base64') return Buffer.from(text, 'base64');
  throw new ProviderBodyError(`a part's encoding ${p.encoding} is not known`);
}

export class ProviderBodyStore {
  private readonly byId = new Map<string, Held>();
  private readonly byPosition = new Map<string, Held>();
  /** Where each piece is held: record and part, by the SHA-256 of the part's text. */
  private readonly pieces = new Map<string, { id: string; part: number }>();
  private readonly cache = new Map<string, Buffer>();
  private cached = 0;
  /** The latest request body of each chain, by chain; the map's order is the order they were last updated. */
  private readonly tips = new Map<string, string>();

  /** One record line of a `provider_body` file, in landing order. */
  add(seq: number, row: number, line: string): AddOutcome {
    const read = this.read(line);
    if ('refused' in read) return read;
    const { rec, m } = read;
    const own = rec.parts.length - 1;
    let copies = 0;
    for (const s of m.segments) {
      if (s.part !== undefined && s.part !== null) {
        if (s.part < 0 || s.part >= own) return { refused: `a segment names part ${s.part}; the record has ${own} before its manifest` };
      } else if (s.piece !== undefined && s.piece !== null) {
        if (!this.pieces.has(s.piece)) return { unresolved: `piece ${s.piece} is held by no earlier record` };
      } else if (s.copy) {
        copies++;
        const base = this.byId.get(s.copy.from!);
        if (!base) return { unresolved: `the copied body ${s.copy.from} has not landed before this one` };
        if (base.manifest.sha256 !== s.copy.sha256)
          return { refused: `the copy names digest ${s.copy.sha256}; body ${s.copy.from} has ${base.manifest.sha256}` };
        if (s.copy.len! < 0 || s.copy.len! > base.manifest.bytes)
          return { refused: `the copy takes ${s.copy.len} bytes of a ${base.manifest.bytes}-byte body` };
        if (m.depth !== base.manifest.depth + 1) return { refused: `depth ${m.depth} is not one more than the copied body's ${base.manifest.depth}` };
      }
    }
    if (copies === 0 && m.depth !== 0) return { refused: `depth ${m.depth} with no copy` };
    const held: Held = { id: rec.id!, parts: rec.parts, manifest: m };
    const already = this.byId.get(held.id);
    if (already) {
      // Landed twice by an interrupted pass: one body, if this copy says the same and rebuilds to it.
      if (already.manifest.sha256 !== m.sha256 || already.manifest.bytes !== m.bytes) return { refused: `record ${rec.id} landed before with another body` };
      try {
        this.rebuild(held);
      } catch (err) {
        return { refused: (err as Error).message };
      }
      this.byPosition.set(`${seq}/${row}`, already);
      return 'added';
    }
    this.byId.set(held.id, held);
    this.byPosition.set(`${seq}/${row}`, held);
    for (let i = 0; i < own; i++) {
      const p = rec.parts[i]!;
      if (p.k !== 'data' || p.raw === undefined) continue;
      const d = sha256(Buffer.from(p.raw, 'utf8'));
      if (!this.pieces.has(d)) this.pieces.set(d, { id: held.id, part: i });
    }
    if (m.role === 'request' && typeof m.chain === 'string' && m.chain) this.setTip(m.chain, held.id);
    return 'added';
  }

  private read(line: string): { rec: ReturnType<typeof rawRecord>; m: ProviderBodyManifest } | { refused: string } {
    let rec;
    try {
      rec = rawRecord(line);
    } catch (err) {
      return { refused: `the line is not a record: ${(err as Error).message}` };
    }
    if (!rec.id) return { refused: 'the record has no id, which a copy names' };
    const m = checkedManifest(rec.parts.at(-1)?.k === 'data' ? rec.parts.at(-1)!.raw : undefined);
    if (typeof m === 'string') return { refused: m };
    return { rec, m };
  }

  /** The body a record line rebuilds to against what is held, without adding it: a writer's check before it lands the line. Throws ProviderBodyError saying why not. */
  rebuildLine(line: string): Buffer {
    const read = this.read(line);
    if ('refused' in read) throw new ProviderBodyError(read.refused);
    return this.rebuild({ id: read.rec.id!, parts: read.rec.parts, manifest: read.m });
  }

  private setTip(chain: string, id: string): void {
    this.tips.delete(chain);
    this.tips.set(chain, id);
    if (this.tips.size > MAX_TIPS) this.tips.delete(this.tips.keys().next().value!);
  }

  /** Whether an earlier record holds a piece with this digest. */
  holdsPiece(digest: string): boolean {
    return this.pieces.has(digest);
  }

  /** The bodies a new request of `chain` may copy its front from: that chain's latest, then up to `others` other chains' latest, newest first. */
  baseCandidates(chain: string, others: number): string[] {
    const own = this.tips.get(chain);
    const out = own ? [own] : [];
    const order = [...this.tips.keys()];
    for (let i = order.length - 1; i >= 0 && out.length < others + 1; i--) if (order[i] !== chain) out.push(this.tips.get(order[i]!)!);
    return out;
  }

  /** The manifest of the body held under `id`. */
  manifestOf(id: string): ProviderBodyManifest | undefined {
    return this.byId.get(id)?.manifest;
  }

  /** Every record of one file (its text whole), in line order; what was not added, by row. */
  addFile(seq: number, text: string): { row: number; outcome: Exclude<AddOutcome, 'added'> }[] {
    const lines = text.split('\n');
    const out: { row: number; outcome: Exclude<AddOutcome, 'added'> }[] = [];
    // Row 0 is the header; the closing line is no record.
    for (let row = 1; row < lines.length; row++) {
      const line = lines[row]!;
      if (!line || line.startsWith('{"t":"end"')) break;
      const r = this.add(seq, row, line);
      if (r !== 'added') out.push({ row, outcome: r });
    }
    return out;
  }

  has(seq: number, row: number): boolean {
    return this.byPosition.has(`${seq}/${row}`);
  }

  /** The body landed at (seq, row); throws ProviderBodyError when it is not held or does not rebuild. */
  bodyAt(seq: number, row: number): Buffer {
    const h = this.byPosition.get(`${seq}/${row}`);
    if (!h) throw new ProviderBodyError(`no body is held at ${seq}/${row}`);
    return this.body(h.id);
  }

  body(id: string): Buffer {
    const hit = this.cache.get(id);
    if (hit) return hit;
    const h = this.byId.get(id);
    if (!h) throw new ProviderBodyError(`no body ${id}`);
    const bytes = this.rebuild(h);
    this.cache.set(id, bytes);
    this.cached += bytes.length;
    for (const [k, v] of this.cache) {
      if (this.cached <= CACHE_BYTES || this.cache.size === 1) break;
      this.cache.delete(k);
      this.cached -= v.length;
    }
    return bytes;
  }

  private rebuild(h: Held): Buffer {
    const m = h.manifest;
    const chunks: Buffer[] = [];
    let size = 0;
    const take = (b: Buffer) => {
      size += b.length;
      if (size > m.bytes) throw new ProviderBodyError(`${h.id} rebuilds past the ${m.bytes} bytes it claims`);
      chunks.push(b);
    };
    for (const s of m.segments) {
      if (typeof s.lit === 'string') take(Buffer.from(s.lit, 'utf8'));
      else if (isInt(s.part)) take(partBytes(h.parts[s.part]!));
      else if (typeof s.piece === 'string') {
        const at = this.pieces.get(s.piece);
        if (!at) throw new ProviderBodyError(`${h.id} names piece ${s.piece}, which no earlier record holds`);
        take(partBytes(this.byId.get(at.id)!.parts[at.part]!));
      } else if (s.copy) take(this.body(s.copy.from!).subarray(0, s.copy.len));
    }
    const body = Buffer.concat(chunks, size);
    if (size !== m.bytes || sha256(body) !== m.sha256) throw new ProviderBodyError(`${h.id} rebuilds to ${size} bytes that do not match its digest`);
    return body;
  }
}
