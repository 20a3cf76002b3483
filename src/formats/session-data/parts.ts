import type { Part } from './types.js';

/** Bytes that are not a record a dialect can read (or write) keep every byte, with the reason. */
export function unknownPart(raw: Buffer | string, reason: string): Part {
  const buf = typeof raw === 'string' ? Buffer.from(raw, 'utf8') : raw;
  const text = buf.toString('utf8');
  // Invalid UTF-8 cannot round-trip through a JSON string; carry it as base64 and say so.
  if (Buffer.byteLength(text, 'utf8') !== buf.length || (text.includes('\uFFFD') && !Buffer.from(text, 'utf8').equals(buf))) {
    return {
      k: 'unknown',
      state: 'available',
      bytes: buf.length,
      text: `${reason}; the bytes are not UTF-8 and are kept as base64`,
      media: 'application/octet-stream;base64',
      data: buf.toString('base64'),
    };
  }
  return { k: 'unknown', state: 'available', bytes: buf.length, text: reason, data: text };
}
