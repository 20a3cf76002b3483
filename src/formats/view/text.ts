import type { Part, SdRecord } from '../session-data/types.js';
import { TEXT_LIMIT_BYTES } from './types.js';

/**
 * The longest prefix of whole characters that fits in `limit` UTF-8 bytes. Strings short enough
 * to fit whatever their characters are skip the byte count: the common case costs nothing.
 */
export function clip(text: string, limit = TEXT_LIMIT_BYTES): string {
  if (text.length * 3 <= limit) return text;
  // Each UTF-16 unit is at least one byte: the first `limit` units hold every candidate prefix.
  const head = text.length > limit ? text.slice(0, limit) : text;
  const headBytes = Buffer.byteLength(head, 'utf8');
  if (headBytes <= limit && (head === text || !isLowSurrogate(text.charCodeAt(limit)))) return head;
  let bytes = 0;
  let i = 0;
  while (i < text.length) {
    const c = text.codePointAt(i)!;
    const w = c < 0x80 ? 1 : c < 0x800 ? 2 : c < 0x10000 ? 3 : 4;
    if (bytes + w > limit) break;
    bytes += w;
    i += c >= 0x10000 ? 2 : 1;
  }
  return i === text.length ? text : text.slice(0, i);
}

const isLowSurrogate = (c: number) => c >= 0xdc00 && c <= 0xdfff;

export interface PartText {
  text?: string;
  state?: string;
  bytes?: number;
  /** The text is a part's own words, not the compact JSON of its data. */
  readable: boolean;
}

const json = (v: unknown): string | undefined => (v === undefined ? undefined : JSON.stringify(v));

/** What one part shows: its text, or its data as compact JSON when it has no text. */
export function partText(p: Part | undefined): PartText {
  if (!p) return { readable: false };
  const out: PartText = { state: p.state, bytes: p.bytes, readable: false };
  let text: string | undefined;
  switch (p.k) {
    case 'text':
    case 'reasoning':
      text = p.text;
      out.readable = text !== undefined;
      break;
    case 'result':
      text = p.text ?? json(p.data);
      out.readable = p.text !== undefined;
      break;
    case 'call':
    case 'data':
      text = json(p.data);
      break;
    case 'unknown':
      // The bytes the dialect could not read are the data; the text is only why.
      text = typeof p.data === 'string' ? p.data : p.text;
      break;
    case 'media':
      break; // encoded bytes are not text
  }
  if (text !== undefined) out.text = clip(text);
  return out;
}

/**
 * What a node standing on a whole record shows: the record's text parts joined, else its first
 * result part, else its first part.
 */
export function recordText(r: SdRecord): PartText {
  let texts: Part[] | undefined;
  for (const p of r.parts) if (p.k === 'text') (texts ??= []).push(p);
  if (texts) {
    const joined = texts.length === 1 ? (texts[0]!.text ?? '') : texts.map((p) => p.text ?? '').join('\n');
    let bytes = 0;
    for (const p of texts) bytes += p.bytes;
    return { text: clip(joined), state: texts[0]!.state, bytes, readable: true };
  }
  return partText(r.parts.find((p) => p.k === 'result') ?? r.parts[0]);
}

/** The text a node shows: the part its `block` names, else the whole record's. */
export function nodeText(r: SdRecord, block: number | undefined): PartText {
  return block === undefined ? recordText(r) : partText(r.parts[block]);
}
