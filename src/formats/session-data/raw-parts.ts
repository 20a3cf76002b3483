/**
 * A record line's parts as the line spells them: for each element of the top-level `parts` array,
 * its kind and the exact text of its `data` value. A provider body's pieces are named by the
 * SHA-256 of that text (asz 0.6's `provider_body/1`), and decoding then printing it again would
 * change escapes, spacing and number spelling — so the line is walked, not parsed.
 */

export interface RawPart {
  k: string;
  /** The `data` value's text exactly as written, or undefined when the part has none. */
  raw?: string;
  /** `base64` when an unknown part's string holds base64 (asz's `encoding`, or aszcol's `media` suffix). */
  encoding?: string;
}

export interface RawRecord {
  id?: string;
  parts: RawPart[];
}

/** Thrown when the line is not the JSON object a record is. */
export class RawLineError extends Error {}

const WS = new Set([' ', '\t', '\r', '\n']);

class Walker {
  pos = 0;
  constructor(readonly text: string) {}

  space(): void {
    while (this.pos < this.text.length && WS.has(this.text[this.pos]!)) this.pos++;
  }

  expect(c: string): void {
    this.space();
    if (this.text[this.pos] !== c) throw new RawLineError(`expected ${c} at ${this.pos}`);
    this.pos++;
  }

  /** Steps over one value; returns where it started and ended. */
  value(): { from: number; to: number } {
    this.space();
    const from = this.pos;
    const c = this.text[this.pos];
    if (c === '"') this.string();
    else if (c === '{' || c === '[') this.nested();
    else {
      while (this.pos < this.text.length && !',}]'.includes(this.text[this.pos]!) && !WS.has(this.text[this.pos]!)) this.pos++;
      if (this.pos === from) throw new RawLineError(`a value is missing at ${from}`);
    }
    return { from, to: this.pos };
  }

  private string(): void {
    this.pos++; // the opening quote
    for (; this.pos < this.text.length; this.pos++) {
      const c = this.text[this.pos];
      if (c === '\\') this.pos++;
      else if (c === '"') {
        this.pos++;
        return;
      }
    }
    throw new RawLineError('a string does not end');
  }

  private nested(): void {
    let depth = 0;
    for (; this.pos < this.text.length;) {
      const c = this.text[this.pos];
      if (c === '"') {
        this.string();
        continue;
      }
      if (c === '{' || c === '[') depth++;
      else if (c === '}' || c === ']') depth--;
      this.pos++;
      if (depth === 0) return;
    }
    throw new RawLineError('an object or a list does not end');
  }

  /** The members of the object starting here, each key with its value's span. */
  *members(): Generator<{ key: string; from: number; to: number }> {
    this.expect('{');
    this.space();
    if (this.text[this.pos] === '}') {
      this.pos++;
      return;
    }
    for (;;) {
      const k = this.value();
      const key = JSON.parse(this.text.slice(k.from, k.to)) as unknown;
      if (typeof key !== 'string') throw new RawLineError(`a key is not a string at ${k.from}`);
      this.expect(':');
      const v = this.value();
      yield { key, ...v };
      this.space();
      const c = this.text[this.pos++];
      if (c === '}') return;
      if (c !== ',') throw new RawLineError(`expected , or } at ${this.pos - 1}`);
    }
  }
}

const BASE64_MEDIA = /;base64$/;

/** The record's id and its parts as spelled; throws RawLineError when the line is not a JSON object. */
export function rawRecord(line: string): RawRecord {
  const w = new Walker(line);
  const out: RawRecord = { parts: [] };
  for (const m of w.members()) {
    const text = line.slice(m.from, m.to);
    if (m.key === 'id') {
      const id = JSON.parse(text) as unknown;
      if (typeof id === 'string') out.id = id;
    } else if (m.key === 'parts') out.parts = partsOf(text);
  }
  return out;
}

function partsOf(list: string): RawPart[] {
  const w = new Walker(list);
  w.expect('[');
  w.space();
  const out: RawPart[] = [];
  if (list[w.pos] === ']') return out;
  for (;;) {
    const v = w.value();
    out.push(partOf(list.slice(v.from, v.to)));
    w.space();
    const c = list[w.pos++];
    if (c === ']') return out;
    if (c !== ',') throw new RawLineError(`expected , or ] in parts at ${w.pos - 1}`);
  }
}

function partOf(text: string): RawPart {
  const w = new Walker(text);
  const part: RawPart = { k: '' };
  for (const m of w.members()) {
    const v = text.slice(m.from, m.to);
    if (m.key === 'data') part.raw = v;
    else if (m.key === 'k') part.k = String(JSON.parse(v));
    else if (m.key === 'encoding') part.encoding = String(JSON.parse(v));
    else if (m.key === 'media' && BASE64_MEDIA.test(String(JSON.parse(v)))) part.encoding ??= 'base64';
  }
  return part;
}
