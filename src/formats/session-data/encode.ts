import { createHash } from 'node:crypto';
import { HEADER_KEY_ORDER, RECORD_KEY_ORDER, SD_ENVELOPE, SD_SCHEMA, type Closing, type Header, type SdRecord } from './types.js';
import { AszError } from '../../util/errors.js';

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
  return JSON.stringify(ordered(r, RECORD_KEY_ORDER));
}

/**
 * Builds one landed file's bytes: header, records, closing line. The digest is computed
 * as lines are added, over every byte before the closing line.
 */
export class SessionDataBuilder {
  private readonly chunks: Buffer[] = [];
  private readonly hash = createHash('sha256');
  private count = 0;
  private size = 0;

  constructor(header: Omit<Header, 'h' | 'schema'>) {
    this.push(encodeHeader(header));
  }

  private push(line: string): void {
    const buf = Buffer.from(line + '\n', 'utf8');
    this.hash.update(buf);
    this.chunks.push(buf);
    this.size += buf.length;
  }

  add(record: SdRecord): void {
    this.push(encodeRecord(record));
    this.count++;
  }

  get records(): number {
    return this.count;
  }

  get byteLength(): number {
    return this.size;
  }

  /** The complete file, closing line included. The builder is spent afterwards. */
  finish(): { bytes: Buffer; digest: string; records: number } {
    const digest = this.hash.digest('hex');
    const closing: Closing = { t: 'end', records: this.count, digest };
    this.chunks.push(Buffer.from(JSON.stringify(closing) + '\n', 'utf8'));
    return { bytes: Buffer.concat(this.chunks), digest, records: this.count };
  }
}

/** 12 hex characters of the SHA-256 of a source record's bytes. */
export function shortSha(bytes: Buffer): string {
  return createHash('sha256').update(bytes).digest('hex').slice(0, 12);
}
