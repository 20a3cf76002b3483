/**
 * Where a provider request body's repeatable values are, found by walking its bytes (asz 0.6's
 * `provider_body/1` cut): each element of the top-level `tools` list, and every string token of
 * `MIN_PIECE_BYTES` or more outside those elements, is a piece; the first element of the top-level
 * `messages` list names the body's chain. Byte offsets, since a copy takes a byte length, and no
 * value is decoded, so a piece is exactly the text the runtime wrote.
 */

/** The shortest string cut out as a piece (asz 0.6's 1 KiB). */
export const MIN_PIECE_BYTES = 1024;

/** A half-open run [from, to) of a body's bytes. */
export interface ByteSpan {
  from: number;
  to: number;
}

export interface BodyLayout {
  /** In order, never overlapping. */
  pieces: ByteSpan[];
  /** The first message's value, when the body has a non-empty top-level `messages` list. */
  firstMessage?: ByteSpan;
}

export class BodyShapeError extends Error {}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_LIST = 0x5b;
const CLOSE_LIST = 0x5d;
const isSpace = (c: number | undefined) => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const TOOLS_KEY = Buffer.from('"tools"');
const MESSAGES_KEY = Buffer.from('"messages"');

class Walk {
  readonly pieces: ByteSpan[] = [];
  firstMessage: ByteSpan | undefined;

  constructor(private readonly b: Buffer) {}

  skipSpace(i: number): number {
    while (i < this.b.length && isSpace(this.b[i])) i++;
    return i;
  }

  private at(i: number, what: string): number {
    if (i >= this.b.length) throw new BodyShapeError(`the body ends inside ${what}`);
    return this.b[i]!;
  }

  /** The value at `i`; returns where it ends. `whole`: the value is a piece itself, nothing inside it is cut. */
  value(i: number, top: boolean, whole: boolean): number {
    const c = this.at(i, 'a value');
    if (c === OPEN_OBJECT) return this.object(i, top, whole);
    if (c === OPEN_LIST) return this.list(i, false, whole);
    if (c === QUOTE) {
      const end = this.string(i);
      if (!whole && end - i >= MIN_PIECE_BYTES) this.pieces.push({ from: i, to: end });
      return end;
    }
    let end = i;
    while (end < this.b.length) {
      const d = this.b[end];
      if (d === COMMA || d === CLOSE_OBJECT || d === CLOSE_LIST || isSpace(d)) break;
      end++;
    }
    if (end === i) throw new BodyShapeError(`a value is missing at byte ${i}`);
    return end;
  }

  private keyIs(from: number, to: number, key: Buffer): boolean {
    return to - from === key.length && this.b.compare(key, 0, key.length, from, to) === 0;
  }

  private object(i: number, top: boolean, whole: boolean): number {
    i = this.skipSpace(i + 1);
    if (this.at(i, 'an object') === CLOSE_OBJECT) return i + 1;
    for (;;) {
      if (this.at(i, 'an object') !== QUOTE) throw new BodyShapeError(`a key is expected at byte ${i}`);
      const keyEnd = this.string(i);
      const tools = top && this.keyIs(i, keyEnd, TOOLS_KEY);
      const messages = top && this.keyIs(i, keyEnd, MESSAGES_KEY);
      i = this.skipSpace(keyEnd);
      if (this.at(i, 'an object') !== COLON) throw new BodyShapeError(`a colon is expected at byte ${i}`);
      i = this.skipSpace(i + 1);
      const c = this.at(i, 'an object');
      if (tools && c === OPEN_LIST) i = this.list(i, true, whole);
      else if (messages && c === OPEN_LIST) {
        const first = this.skipSpace(i + 1);
        if (this.at(first, 'a list') !== CLOSE_LIST) {
          // Measured, not cut: the list is walked again below with the usual rules.
          const sub = new Walk(this.b);
          this.firstMessage = { from: first, to: sub.value(first, false, true) };
        }
        i = this.list(i, false, whole);
      } else i = this.value(i, false, whole);
      i = this.skipSpace(i);
      const d = this.at(i, 'an object');
      if (d === CLOSE_OBJECT) return i + 1;
      if (d !== COMMA) throw new BodyShapeError(`a comma or } is expected at byte ${i}`);
      i = this.skipSpace(i + 1);
    }
  }

  /** `each`: every element is a piece whole (the tools list). */
  private list(i: number, each: boolean, whole: boolean): number {
    i = this.skipSpace(i + 1);
    if (this.at(i, 'a list') === CLOSE_LIST) return i + 1;
    for (;;) {
      const end = this.value(i, false, whole || each);
      if (each && !whole) this.pieces.push({ from: i, to: end });
      i = this.skipSpace(end);
      const d = this.at(i, 'a list');
      if (d === CLOSE_LIST) return i + 1;
      if (d !== COMMA) throw new BodyShapeError(`a comma or ] is expected at byte ${i}`);
      i = this.skipSpace(i + 1);
    }
  }

  private string(i: number): number {
    for (let j = i + 1; j < this.b.length; j++) {
      const c = this.b[j];
      if (c === BACKSLASH) j++;
      else if (c === QUOTE) return j + 1;
    }
    throw new BodyShapeError('the body ends inside a string');
  }
}

/** The pieces and first message of a body that is one JSON object (checked by the caller); throws BodyShapeError otherwise. */
export function bodyLayout(body: Buffer): BodyLayout {
  const w = new Walk(body);
  const start = w.skipSpace(0);
  if (body[start] !== OPEN_OBJECT) throw new BodyShapeError('the body is not a JSON object');
  w.value(start, true, false);
  return { pieces: w.pieces, ...(w.firstMessage ? { firstMessage: w.firstMessage } : {}) };
}
