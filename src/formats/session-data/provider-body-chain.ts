/**
 * The chain a provider request belongs to, named as asz 0.6 names it: the first sixteen hex
 * characters of the SHA-256 of its first message, with the moving cache marker taken out and a
 * one-text-block list read as the plain string it becomes once the marker leaves it, printed the
 * way Go's encoding/json prints a decoded value (keys sorted, `<`, `>`, `&`, U+2028 and U+2029
 * escaped). Equal names let asz and aszcol pick the same earlier body to copy from; the name joins
 * nothing, so a value printed differently costs only a copy.
 */
import { createHash } from 'node:crypto';

const GO_ESCAPES: Record<string, string> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

// Control characters, the HTML-sensitive three, the two line separators, the quote and the backslash.
// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /[\u0000-\u001f"\\<>&\u2028\u2029]/g;

function goString(s: string): string {
  return `"${s.replace(NEEDS_ESCAPE, (c) => GO_ESCAPES[c] ?? `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)}"`;
}

/** Go sorts map keys by their UTF-8 bytes, which differs from UTF-16 order for characters past U+FFFF. */
const byUtf8 = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** A decoded JSON value printed as Go's json.Marshal prints the same value held as `any`. */
export function goJson(v: unknown): string {
  if (v === null) return 'null';
  if (typeof v === 'string') return goString(v);
  if (typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(goJson).join(',')}]`;
  const o = v as Record<string, unknown>;
  return `{${Object.keys(o)
    .sort(byUtf8)
    .map((k) => `${goString(k)}:${goJson(o[k])}`)
    .join(',')}}`;
}

const sha256 = (text: string) => createHash('sha256').update(text, 'utf8').digest('hex');

/** The chain name of a request whose first message is these bytes (its JSON text as the body spells it). */
export function chainOf(firstMessage: Buffer): string {
  let msg: unknown;
  try {
    msg = JSON.parse(firstMessage.toString('utf8'));
  } catch {
    return createHash('sha256').update(firstMessage).digest('hex').slice(0, 16);
  }
  if (msg && typeof msg === 'object' && !Array.isArray(msg)) {
    const m = msg as Record<string, unknown>;
    const blocks = m.content;
    if (Array.isArray(blocks)) {
      for (const b of blocks) if (b && typeof b === 'object' && !Array.isArray(b)) delete (b as Record<string, unknown>).cache_control;
      const only = blocks.length === 1 ? (blocks[0] as Record<string, unknown> | null) : undefined;
      if (only && typeof only === 'object' && only.type === 'text' && Object.keys(only).length === 2) m.content = only.text ?? null;
    }
  }
  return sha256(goJson(msg)).slice(0, 16);
}
