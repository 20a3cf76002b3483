/**
 * The cut provider-body writer (asz 0.6's `copy` and `piece`), on randomized sessions: conversations
 * that grow, move their cache marker, respell their first message, add, drop and change tools,
 * change the system prompt, compact, run several chains at once, and write a body cut short now and
 * then. Whatever the edits, a reader that knows nothing of the writer — a fresh store fed the landed
 * files in order — rebuilds every body to its exact bytes, refuses nothing and waits for nothing,
 * and the repeats are gone from what landed.
 */
import { describe, expect, test } from '@jest/globals';
import { cutBodyRecord } from '../../src/formats/session-data/provider-body-cut.js';
import { chainOf } from '../../src/formats/session-data/provider-body-chain.js';
import { ProviderBodyStore } from '../../src/formats/session-data/provider-body-store.js';
import { manifestOf, type BodyFacts, type ProviderBodyManifest } from '../../src/formats/session-data/provider-body.js';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { rng } from '../helpers/rng.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { afterAll } from '@jest/globals';

afterAll(cleanupTemp);

const HEADER = (seq: number) =>
  `{"h":1,"schema":"sd/1","seq":${seq},"at":"2026-06-01T09:00:00Z","kind":"provider_body","adapter":"claude-code-provider/0.1.0","dialect":"claude-code/1","src":".","session":"s"}`;
/** A landed file's text: header, record lines, and the closing line with its true digest. */
function fileText(seq: number, lines: string[]): string {
  const head = [HEADER(seq), ...lines].map((l) => `${l}\n`).join('');
  return `${head}{"t":"end","records":${lines.length},"digest":"${createHash('sha256').update(head, 'utf8').digest('hex')}"}\n`;
}

type Block = { type: string; text: string; cache_control?: { type: string } };
type Message = { role: string; content: string | Block[] };
interface Chain {
  system: string;
  tools: { name: string; description: string; input_schema: object }[];
  messages: Message[];
}

const WORDS = ['build', 'fix', 'é', '中文', '😀', 'quote "x"', 'back\\slash', 'new\nline', 'tab\t', '<tag> & amp', '\u2028'];

function text(r: () => number, long: boolean): string {
  const n = long ? 200 + Math.floor(r() * 400) : 1 + Math.floor(r() * 12);
  return Array.from({ length: n }, () => WORDS[Math.floor(r() * WORDS.length)]).join(' ');
}

function tool(r: () => number, i: number) {
  return { name: `Tool${i}`, description: text(r, r() < 0.5), input_schema: { type: 'object', properties: { [`arg${i}`]: { type: 'string' } } } };
}

/** The cache marker on the newest message only, and a one-text-block message spelled as a string once the marker left it (as the runtime does). */
function markNewest(messages: Message[]): Message[] {
  return messages.map((m, i) => {
    const blocks = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content.map(({ cache_control: _c, ...b }) => b);
    if (i === messages.length - 1)
      return { ...m, content: blocks.map((b, j) => (j === blocks.length - 1 ? { ...b, cache_control: { type: 'ephemeral' } } : b)) };
    return { ...m, content: blocks.length === 1 ? blocks[0]!.text : blocks };
  });
}

function requestBody(c: Chain, spaced: boolean): Buffer {
  const body = {
    model: 'claude-x',
    max_tokens: 1024,
    system: [{ type: 'text', text: c.system }],
    tools: c.tools,
    messages: markNewest(c.messages),
    stream: true,
  };
  return Buffer.from(spaced ? JSON.stringify(body, null, 1) : JSON.stringify(body), 'utf8');
}

/** One edit to a chain, as a conversation makes them. */
function edit(r: () => number, c: Chain, toolNo: () => number): void {
  const x = r();
  if (x < 0.45) c.messages.push({ role: c.messages.length % 2 ? 'user' : 'assistant', content: text(r, r() < 0.2) });
  else if (x < 0.6)
    c.messages.push({
      role: 'user',
      content: [
        { type: 'text', text: text(r, false) },
        { type: 'text', text: text(r, r() < 0.3) },
      ],
    });
  else if (x < 0.68) c.tools.push(tool(r, toolNo()));
  else if (x < 0.74 && c.tools.length > 1) c.tools.splice(Math.floor(r() * c.tools.length), 1);
  else if (x < 0.8 && c.tools.length) c.tools[0] = { ...c.tools[0]!, description: text(r, false) };
  else if (x < 0.85) c.system = text(r, r() < 0.5);
  else if (x < 0.9)
    c.messages = [{ role: 'user', content: `summary: ${text(r, true)}` }]; // a compaction starts the list again
  else c.messages.push({ role: 'assistant', content: text(r, true) });
}

interface Landed {
  files: { seq: number; lines: string[] }[];
  bodies: { seq: number; row: number; bytes: Buffer; role: string }[];
  whole: string[];
}

/** A randomized session's bodies, cut as they come and landed in files of random size. */
function landSession(seed: number, count: number): Landed {
  const r = rng(seed);
  let tools = 0;
  const toolNo = () => ++tools;
  const chains: Chain[] = Array.from({ length: 1 + Math.floor(r() * 3) }, () => ({
    system: text(r, true),
    tools: [tool(r, toolNo()), tool(r, toolNo())],
    messages: [{ role: 'user', content: text(r, false) }],
  }));
  const store = new ProviderBodyStore();
  const out: Landed = { files: [{ seq: 1, lines: [] }], bodies: [], whole: [] };
  for (let n = 0; n < count; n++) {
    if (out.files.at(-1)!.lines.length && r() < 0.3) out.files.push({ seq: out.files.at(-1)!.seq + 1 + Math.floor(r() * 2), lines: [] });
    const file = out.files.at(-1)!;
    const c = chains[Math.floor(r() * chains.length)]!;
    edit(r, c, toolNo);
    let bytes: Buffer;
    let role: 'request' | 'response' = 'request';
    const kind = r();
    if (kind < 0.2) {
      role = 'response';
      bytes = Buffer.from(JSON.stringify({ id: `msg_${n}`, type: 'message', content: [{ type: 'text', text: text(r, r() < 0.3) }], stop_reason: 'end_turn' }));
    } else if (kind < 0.23)
      bytes = requestBody(c, false).subarray(0, 300); // cut short by a crash while written
    else bytes = requestBody(c, r() < 0.1);
    const facts: BodyFacts = { role, src: `b${n}.${role}.json`, session: 's' };
    const row = file.lines.length + 1;
    const cut = cutBodyRecord(store, { ord: row, off: 0, sha: '000000000000', bytes: bytes.length, id: `b${n}`, from: 'runtime' }, bytes, facts, {
      seq: file.seq,
      row,
      cut: true,
    });
    if (cut.whole) out.whole.push(cut.whole);
    file.lines.push(cut.line);
    out.bodies.push({ seq: file.seq, row, bytes, role });
  }
  return out;
}

describe('the cut writer on randomized edit sequences', () => {
  test('a fresh reader rebuilds every body to its exact bytes from the landed files, in order; nothing refused, nothing waiting', () => {
    let cutBytes = 0;
    let sourceBytes = 0;
    let copies = 0;
    for (let seed = 1; seed <= 25; seed++) {
      const landed = landSession(seed, 60);
      expect({ seed, whole: landed.whole }).toEqual({ seed, whole: [] });
      const reader = new ProviderBodyStore();
      for (const f of landed.files)
        expect({ seed, seq: f.seq, problems: reader.addFile(f.seq, fileText(f.seq, f.lines)) }).toEqual({ seed, seq: f.seq, problems: [] });
      for (const b of landed.bodies) {
        expect(reader.bodyAt(b.seq, b.row).equals(b.bytes)).toBe(true);
        sourceBytes += b.bytes.length;
      }
      for (const f of landed.files)
        for (const line of f.lines) {
          cutBytes += Buffer.byteLength(line) + 1;
          const m = manifestOf(JSON.parse(line) as { parts: [] }) as ProviderBodyManifest;
          expect(m.depth).toBeLessThanOrEqual(32);
          if (m.segments.some((s) => s.copy)) copies++;
        }
    }
    // The repeats are gone: conversations that resend their history land a fraction of it.
    expect(copies).toBeGreaterThan(150);
    expect(cutBytes).toBeLessThan(sourceBytes * 0.5);
  });

  test('a reader loading only the files up to one rebuilds every body in them: a body never refers to a later file', () => {
    const landed = landSession(7, 80);
    const dir = tempDir('aszcol-cut-');
    for (const f of landed.files) writeFileSync(join(dir, `${f.seq}.sd`), fileText(f.seq, f.lines));
    for (const upTo of landed.files) {
      const reader = new ProviderBodyStore();
      for (const f of landed.files.filter((x) => x.seq <= upTo.seq)) expect(reader.addFile(f.seq, fileText(f.seq, f.lines))).toEqual([]);
      for (const b of landed.bodies.filter((x) => x.seq === upTo.seq)) expect(reader.bodyAt(b.seq, b.row).equals(b.bytes)).toBe(true);
    }
    // The files read back through the Session Data decoder too: the raw pieces are valid JSON where they sit.
    for (const f of landed.files) expect(readSessionData(join(dir, `${f.seq}.sd`)).records).toHaveLength(f.lines.length);
  });
});

describe('what a body copies from', () => {
  const chain = (messages: number): Chain => ({
    system: 'You fix builds. '.repeat(400),
    tools: [tool(rng(1), 1)],
    messages: Array.from({ length: messages }, (_, i) => ({ role: i % 2 ? 'assistant' : 'user', content: `message ${i} `.repeat(40) })),
  });
  const base = (id: string, bytes: Buffer) => ({ ord: 1, off: 0, sha: '000000000000', bytes: bytes.length, id, from: 'runtime' as const });
  const facts = (id: string): BodyFacts => ({ role: 'request', src: `${id}.request.json`, session: 's' });

  test("the next request of a chain copies its front from the one before, to a character boundary; the copy's digest and length are the base's", () => {
    const store = new ProviderBodyStore();
    const first = requestBody(chain(3), false);
    const second = requestBody(chain(5), false);
    cutBodyRecord(store, base('a', first), first, facts('a'), { seq: 1, row: 1, cut: true });
    const cut = cutBodyRecord(store, base('b', second), second, facts('b'), { seq: 1, row: 2, cut: true });
    const m = manifestOf(cut.record)!;
    const copy = m.segments[0]!.copy!;
    expect(copy.from).toBe('a');
    expect(m.depth).toBe(1);
    expect(first.subarray(0, copy.len).equals(second.subarray(0, copy.len))).toBe(true);
    expect(copy.len).toBeGreaterThan(4096);
    expect(Buffer.byteLength(cut.line)).toBeLessThan(second.length / 2);
  });

  test('a predecessor that does not rebuild is no base: the body stores its own front, and still rebuilds', () => {
    const first = requestBody(chain(3), false);
    const second = requestBody(chain(5), false);
    const writer = new ProviderBodyStore();
    const a = cutBodyRecord(writer, base('a', first), first, facts('a'), { seq: 1, row: 1, cut: true });
    // The landed predecessor damaged on disk: its literal text changed, so its digest no longer holds.
    const damaged = a.line.replace('You fix builds.', 'You fix boilds.');
    expect(damaged).not.toBe(a.line);
    const store = new ProviderBodyStore();
    expect(store.addFile(1, fileText(1, [damaged]))).toEqual([]);
    const cut = cutBodyRecord(store, base('b', second), second, facts('b'), { seq: 2, row: 1, cut: true });
    const m = manifestOf(cut.record)!;
    expect(m.segments.some((s) => s.copy)).toBe(false);
    expect(m.depth).toBe(0);
    expect(store.bodyAt(2, 1).equals(second)).toBe(true);
  });

  test('copies chain at most 32 deep: the request whose base is that deep starts again with none', () => {
    const store = new ProviderBodyStore();
    const depths: number[] = [];
    for (let i = 0; i < 40; i++) {
      const body = requestBody(chain(3 + i), false);
      depths.push(manifestOf(cutBodyRecord(store, base(`r${i}`, body), body, facts(`r${i}`), { seq: 1, row: i + 1, cut: true }).record)!.depth);
    }
    expect(depths.slice(0, 33)).toEqual(Array.from({ length: 33 }, (_, i) => i));
    expect(depths[33]).toBe(0);
    expect(depths[34]).toBe(1);
  });

  test("a chain is named by its first message as it means: the moving cache marker and the one-block list's two spellings are one chain", () => {
    const asList = Buffer.from(JSON.stringify({ role: 'user', content: [{ type: 'text', text: 'fix <it> & go', cache_control: { type: 'ephemeral' } }] }));
    const asString = Buffer.from(JSON.stringify({ role: 'user', content: 'fix <it> & go' }));
    expect(chainOf(asList)).toBe(chainOf(asString));
    expect(chainOf(asString)).not.toBe(chainOf(Buffer.from(JSON.stringify({ role: 'user', content: 'fix it' }))));
    expect(chainOf(asString)).toMatch(/^[0-9a-f]{16}$/);
  });
});
