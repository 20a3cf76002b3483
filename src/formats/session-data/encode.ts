import { createHash, hash, type Hash } from 'node:crypto';
import { HEADER_KEY_ORDER, RECORD_KEY_ORDER, SD_ENVELOPE, SD_SCHEMA, type Closing, type Header, type SdRecord } from './types.js';
import { AszError } from '../../util/errors.js';
import { encodeWithMeasured } from './measured-data.js';

function ordered<T extends object>(value: T, order: readonly (keyof T)[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const key of order) {
    const v = value[key];
    if (v === undefined || v === '' || (Array.isArray(v) && v.length === 0 && key !== 'parts')) continue;
    out[key as string] = v;
  }
  return out;
}

/** The header checks a reader applies are applied by the writer too, so no unreadable file is ever started. */
export function checkHeader(h: Partial<Header>): string | undefined {
  if (h.h !== SD_ENVELOPE) return `header "h" must be 1, got ${JSON.stringify(h.h)}`;
  if (h.schema !== SD_SCHEMA) return `header "schema" must be "${SD_SCHEMA}", got ${JSON.stringify(h.schema)}`;
  for (const key of ['kind', 'session', 'src', 'dialect'] as const) {
    if (typeof h[key] !== 'string' || h[key] === '') return `header "${key}" is required`;
  }
  if (!Number.isInteger(h.seq) || (h.seq as number) < 1) return `header "seq" must be a positive integer, got ${JSON.stringify(h.seq)}`;
  return undefined;
}

export function encodeHeader(h: Omit<Header, 'h' | 'schema'>): string {
  const full = { h: SD_ENVELOPE, schema: SD_SCHEMA, ...h } as Header;
  const problem = checkHeader(full);
  if (problem) throw new AszError(problem, 'session data writer');
  return JSON.stringify(ordered(full, HEADER_KEY_ORDER));
}

export function encodeRecord(r: SdRecord): string {
  return encodeWithMeasured(r) ?? JSON.stringify(ordered(r, RECORD_KEY_ORDER));
}

/** Where a Session Data writer's bytes go: memory, or a write-once file on disk. */
export interface ByteSink {
  write(text: string): void;
  /**
   * Writes `text` and a newline, feeding `digest` the UTF-8 bytes as written: a sink that encodes
   * into its own buffer spares the writer a second encoding of every line just to hash it.
   */
  writeLine?(text: string, digest: Hash): void;
}

/**
 * Writes one landed file's lines: header, records, closing line, computing the digest over
 * every byte before the closing line as it goes, so nothing is read back and nothing held whole.
 */
export class SessionDataWriter {
  private readonly hash = createHash('sha256');
  private count = 0;

  constructor(
    private readonly sink: ByteSink,
    header: Omit<Header, 'h' | 'schema'>,
  ) {
    this.line(encodeHeader(header));
  }

  private line(text: string): void {
    if (this.sink.writeLine) return this.sink.writeLine(text, this.hash);
    // Strings go straight to the hash and the sink: no per-line buffer to allocate and collect.
    const withNewline = text + '\n';
    this.hash.update(withNewline, 'utf8');
    this.sink.write(withNewline);
  }

  add(record: SdRecord): void {
    this.line(encodeRecord(record));
    this.count++;
  }

  get records(): number {
    return this.count;
  }

  /** Writes the closing line. The writer is spent afterwards. */
  close(): { digest: string; records: number; fileDigest: string } {
    // The whole file's digest (closing line included) is the index's, computed here so nothing is read back.
    const whole = this.hash.copy();
    const digest = this.hash.digest('hex');
    const closing: Closing = { t: 'end', records: this.count, digest };
    const closingLine = JSON.stringify(closing) + '\n';
    this.sink.write(closingLine);
    return { digest, records: this.count, fileDigest: whole.update(closingLine, 'utf8').digest('hex') };
  }
}

/** A whole Session Data file in memory (tests, small files). */
export class SessionDataBuilder {
  private readonly chunks: string[] = [];
  private readonly writer: SessionDataWriter;

  constructor(header: Omit<Header, 'h' | 'schema'>) {
    this.writer = new SessionDataWriter({ write: (b) => this.chunks.push(b) }, header);
  }

  add(record: SdRecord): void {
    this.writer.add(record);
  }

  finish(): { bytes: Buffer; digest: string; records: number } {
    const { digest, records } = this.writer.close();
    return { bytes: Buffer.from(this.chunks.join(''), 'utf8'), digest, records };
  }
}

/** 12 hex characters of the SHA-256 of a source record's bytes. */
export function shortSha(bytes: Buffer): string {
  // One-shot: half the cost of a Hash object for the short inputs this sees once per record.
  return hash('sha256', bytes, 'hex').slice(0, 12);
}
