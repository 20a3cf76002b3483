/**
 * What every fuzz test shares: the seed (fixed by default, `FUZZ_SEED` to replay or explore), a
 * budget that stops a loop on time *or* on a count (whichever comes first, so a slow machine
 * runs fewer inputs instead of running longer), byte and text mutators, hostile values, and a
 * snapshot of the sandbox around the storage root (nothing may appear or change outside it).
 */
import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { REPO } from '../helpers/cli.js';
import { rng } from '../helpers/rng.js';

/** The seed of every fuzz loop: the same seed sends the same inputs. */
export const DEFAULT_FUZZ_SEED = 20261213;
export const fuzzSeed = (): number => (process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) >>> 0 : DEFAULT_FUZZ_SEED);

/** The seeds (and the inputs shaped like them) are held to what the fixed code must do; `FUZZ_STRICT=0` relaxes that to staying up and answering, for bisecting an old build. */
export const STRICT = process.env.FUZZ_STRICT !== '0';
export const SEEDS_DIR = join(REPO, 'test', 'fuzz', 'seeds');

export class Budget {
  private readonly deadline: number;
  count = 0;

  constructor(
    ms: number,
    readonly maxIterations: number,
    /** Run at least this many whatever the clock says: a loaded machine slows the loop, never shrinks what a run covers. */
    readonly minIterations = 0,
  ) {
    this.deadline = Date.now() + ms;
  }

  /** True while iterations remain and either the minimum is not reached or time remains; counts the iteration it allows. */
  more(): boolean {
    if (this.count >= this.maxIterations) return false;
    if (this.count >= this.minIterations && Date.now() >= this.deadline) return false;
    this.count++;
    return true;
  }
}

/** Runs a fuzz loop body; a failure names the seed and the input, so it can be replayed and kept as a seed. */
export async function withSeed<T>(seed: number, what: () => string, body: () => Promise<T> | T): Promise<T> {
  try {
    return await body();
  } catch (err) {
    const e = err as Error;
    e.message = `fuzz failure (replay with FUZZ_SEED=${seed}) on ${what()}:\n${e.message}`;
    throw e;
  }
}

export interface Rand {
  next: () => number;
  int: (n: number) => number;
  pick: <T>(xs: readonly T[]) => T;
  bytes: (n: number) => Buffer;
  chance: (p: number) => boolean;
}

export function rand(seed: number): Rand {
  const next = rng(seed);
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    pick: (xs) => xs[int(xs.length)]!,
    bytes: (n) => Buffer.from(Array.from({ length: n }, () => int(256))),
    chance: (p) => next() < p,
  };
}

/** A varint that never ends within ten bytes (the most a 64-bit value takes) and one claiming 2⁶³ bytes. */
export const HUGE_VARINTS = [Buffer.alloc(12, 0xff), Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f])];

/** Protobuf nesting: field 1, length-delimited, `depth` times around an empty message, lengths told truthfully. */
export function nestedProtobuf(depth: number): Buffer {
  return nestPrefixes(Buffer.alloc(0), Array<number>(depth).fill(0x0a));
}

/**
 * `core` wrapped in length-delimited fields, innermost tag first: nesting is all prefixes, so
 * the lengths are counted inside out and the bytes joined once (linear, even a million deep).
 */
export function nestPrefixes(core: Buffer, tagsInsideOut: readonly number[]): Buffer {
  const prefixes: Buffer[] = [];
  let size = core.length;
  for (const tag of tagsInsideOut) {
    const p = Buffer.concat([Buffer.from([tag]), varint(size)]);
    prefixes.push(p);
    size += p.length;
  }
  return Buffer.concat([...prefixes.reverse(), core]);
}

export function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Buffer.from(out);
}

/** One random mutation of a byte string: flips, cuts, splices, lying lengths, huge varints, garbage. */
export function mutateBytes(r: Rand, input: Buffer): { name: string; body: Buffer } {
  const b = Buffer.from(input);
  const at = () => r.int(Math.max(1, b.length));
  switch (r.int(9)) {
    case 0: {
      for (let i = 0, n = 1 + r.int(8); i < n; i++) b[at()] ^= 1 << r.int(8);
      return { name: 'bit flips', body: b };
    }
    case 1:
      return { name: 'truncated', body: b.subarray(0, at()) };
    case 2: {
      // A length byte that lies: a byte followed by a plausible length, raised or lowered.
      const i = at();
      b[i] = r.chance(0.5) ? 0x7f : r.int(256);
      return { name: 'length lie', body: b };
    }
    case 3: {
      const i = at();
      return { name: 'huge varint', body: Buffer.concat([b.subarray(0, i), r.pick(HUGE_VARINTS), b.subarray(i)]) };
    }
    case 4: {
      const i = at();
      return { name: 'random bytes spliced', body: Buffer.concat([b.subarray(0, i), r.bytes(1 + r.int(64)), b.subarray(i)]) };
    }
    case 5: {
      const i = at();
      const j = Math.min(b.length, i + 1 + r.int(200));
      return { name: 'range duplicated', body: Buffer.concat([b.subarray(0, j), b.subarray(i, j), b.subarray(j)]) };
    }
    case 6: {
      const i = at();
      return { name: 'range deleted', body: Buffer.concat([b.subarray(0, i), b.subarray(Math.min(b.length, i + 1 + r.int(100)))]) };
    }
    case 7:
      return { name: 'random bytes', body: r.bytes(r.int(2048)) };
    default:
      return { name: 'deep nesting', body: Buffer.concat([nestedProtobuf(50 + r.int(3000)), b]) };
  }
}

/** One random mutation of a text (JSON, YAML, a JSONL line): character edits, cuts, nesting, raw bad bytes. */
export function mutateText(r: Rand, text: string, specials: readonly string[]): { name: string; body: Buffer } {
  const at = () => r.int(Math.max(1, text.length));
  switch (r.int(8)) {
    case 0: {
      const chars = [...text];
      for (let i = 0, n = 1 + r.int(6); i < n; i++) chars[r.int(chars.length)] = r.pick(specials);
      return { name: 'characters replaced', body: Buffer.from(chars.join('')) };
    }
    case 1:
      return { name: 'truncated', body: Buffer.from(text.slice(0, at())) };
    case 2: {
      const i = at();
      return { name: 'special inserted', body: Buffer.from(text.slice(0, i) + r.pick(specials) + text.slice(i)) };
    }
    case 3: {
      const i = at();
      const j = Math.min(text.length, i + 1 + r.int(80));
      return { name: 'range deleted', body: Buffer.from(text.slice(0, i) + text.slice(j)) };
    }
    case 4: {
      const i = at();
      const d = 1 + r.int(20_000);
      return { name: 'deep nesting', body: Buffer.from(text.slice(0, i) + r.pick(['[', '{"a":', '- ', '[{']).repeat(d) + text.slice(i)) };
    }
    case 5: {
      const i = at();
      const raw = Buffer.from(text);
      return { name: 'raw invalid UTF-8', body: Buffer.concat([raw.subarray(0, i), r.pick(INVALID_UTF8), raw.subarray(i)]) };
    }
    case 6: {
      const b = Buffer.from(text);
      for (let i = 0, n = 1 + r.int(6); i < n; i++) b[r.int(b.length)] ^= 1 << r.int(8);
      return { name: 'bit flips', body: b };
    }
    default:
      return { name: 'random bytes', body: r.bytes(r.int(512)) };
  }
}

export const INVALID_UTF8 = [
  Buffer.from([0xff]),
  Buffer.from([0xc3]),
  Buffer.from([0xed, 0xa0, 0x80]),
  Buffer.from([0xc0, 0xaf]),
  Buffer.from([0xf8, 0x88, 0x80, 0x80]),
];

/**
 * Values an attacker or a careless client puts where a name is expected: separators, dot names,
 * names the storage root uses, control characters, over-long (in characters and in UTF-8 bytes),
 * the same name in NFC and NFD, bidirectional overrides, lone surrogates.
 */
export const HOSTILE_NAMES: readonly string[] = [
  '',
  '.',
  '..',
  '...',
  '../../escape',
  '..\\..\\escape',
  '/etc/passwd',
  'a/b',
  'a\\b',
  '_journal',
  '_metrics',
  'push.state',
  'session.state',
  'index',
  'rounds',
  'otlp',
  '.lock',
  'nul\u0000byte',
  'line\nfeed',
  'tab\tand\rreturn',
  '\u007f',
  'x'.repeat(200),
  'x'.repeat(201),
  'x'.repeat(70_000),
  'é'.repeat(128),
  '€'.repeat(86),
  'caf\u00e9',
  'cafe\u0301',
  '\u202eevil',
  '\ud800',
  'CON',
  ' ',
  '-rf',
  '%2e%2e',
  '*',
];

/** Characters a text mutation puts in: structure of JSON and YAML, escapes, multibyte and odd characters. */
export const TEXT_SPECIALS = [
  '{',
  '}',
  '[',
  ']',
  '"',
  ':',
  ',',
  '\\',
  '\\u0000',
  '\\ud800',
  '\n',
  ' ',
  '\t',
  '-',
  '#',
  '&a',
  '*a',
  '!!',
  '%',
  'é',
  '\u0301',
  '\u0000',
  '1e400',
  '-0',
  '9'.repeat(40),
];

export interface TreeEntry {
  path: string;
  kind: 'dir' | 'file' | 'link' | 'other';
  size: number;
  mtimeMs: number;
}

/** Every entry under `dir` except the subtrees named in `skip` (absolute paths), with sizes and times: what "nothing written" compares. */
export function snapshotTree(dir: string, skip: readonly string[] = []): TreeEntry[] {
  const out: TreeEntry[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (skip.includes(p)) continue;
      const st = lstatSync(p);
      const kind = st.isDirectory() ? 'dir' : st.isFile() ? 'file' : st.isSymbolicLink() ? 'link' : 'other';
      out.push({ path: relative(dir, p), kind, size: kind === 'file' ? st.size : 0, mtimeMs: kind === 'dir' ? 0 : st.mtimeMs });
      if (kind === 'dir') walk(p);
    }
  };
  walk(dir);
  return out;
}

/** Seed files of one kind (`otlp`, `transcript`, …), sorted by name, as parsed JSON. */
export function loadSeeds<T>(kind: string): { file: string; seed: T }[] {
  const dir = join(SEEDS_DIR, kind);
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => n.endsWith('.json'));
  } catch {
    return [];
  }
  return names.sort().map((file) => ({ file, seed: JSON.parse(readFileSync(join(dir, file), 'utf8')) as T }));
}
