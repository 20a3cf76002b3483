/**
 * Reading the receiver's journal back: entries in order up to the synced end; a damaged entry is
 * kept aside (quarantined), counted and skipped, and reading resumes at the next good one; reads
 * stop at their byte budget between entries; a checkpoint records the landed position and removes
 * the segments wholly before it.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { DAMAGED_DIR, LANDED_STATE, entryFrame, segmentName, type JournalEntry } from '../../src/receivers/claude-code-otlp/journal-format.js';
import { JournalReader, type EntrySink } from '../../src/receivers/claude-code-otlp/landing/journal-reader.js';
import { parseKv } from '../../src/storage/kv-text.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const entry = (body: string) => Buffer.concat([entryFrame('logs', 1n, Buffer.from(body)), Buffer.from(body)]);

class ListSink implements EntrySink {
  readonly bodies: string[] = [];
  readonly at: number[] = [];
  constructor(private readonly refuse?: string) {}
  add(e: JournalEntry): void {
    const body = Buffer.from(e.body).toString();
    if (body === this.refuse) throw new Error('cannot convert');
    this.bodies.push(body);
    this.at.push(e.at);
  }
  full(): boolean {
    return false;
  }
}

function recorder() {
  const lines: string[] = [];
  return {
    lines,
    log: (level: string, msg: string) => {
      lines.push(`${level}: ${msg}`);
    },
  };
}

describe('the landing journal reader', () => {
  test("reads every entry to the synced end, with each entry's position", () => {
    const dir = tempDir();
    const a = entry('first'),
      b = entry('second');
    writeFileSync(join(dir, segmentName(0)), Buffer.concat([a, b]));
    const r = new JournalReader(dir, 0, a.length + b.length, recorder().log);
    const sink = new ListSink();
    expect(r.read(sink)).toBe(false);
    expect(sink.bodies).toEqual(['first', 'second']);
    expect(sink.at).toEqual([0, a.length]);
    expect(r.hasMore()).toBe(false);
  });

  test('stops at a damaged entry, keeps it aside and resumes at the next good one', () => {
    const dir = tempDir();
    const a = entry('good one'),
      bad = entry('damaged in the middle'),
      c = entry('good again');
    bad[bad.length - 3] ^= 0xff;
    writeFileSync(join(dir, segmentName(0)), Buffer.concat([a, bad, c]));
    const { log, lines } = recorder();
    const r = new JournalReader(dir, 0, a.length + bad.length + c.length, log);
    const sink = new ListSink();
    r.read(sink);
    expect(sink.bodies).toEqual(['good one', 'good again']);
    expect(sink.at).toEqual([0, a.length + bad.length]);
    expect(r.takeDamaged()).toBe(1);
    expect(r.takeDamaged()).toBe(0);
    const kept = readdirSync(join(dir, DAMAGED_DIR));
    expect(kept).toEqual([`${segmentName(0)}-${a.length.toString(16)}.bin`]);
    expect(readFileSync(join(dir, DAMAGED_DIR, kept[0]!))).toEqual(bad);
    expect(lines).toEqual([expect.stringMatching(new RegExp(`^error: .*${bad.length} bytes at position ${a.length} that cannot be landed`))]);
  });

  test('an entry the sink cannot take is quarantined too, and reading goes on', () => {
    const dir = tempDir();
    const a = entry('a'),
      b = entry('refused'),
      c = entry('c');
    writeFileSync(join(dir, segmentName(0)), Buffer.concat([a, b, c]));
    const r = new JournalReader(dir, 0, a.length + b.length + c.length, recorder().log);
    const sink = new ListSink('refused');
    r.read(sink);
    expect(sink.bodies).toEqual(['a', 'c']);
    expect(r.takeDamaged()).toBe(1);
    expect(readdirSync(join(dir, DAMAGED_DIR))).toHaveLength(1);
  });

  test('a read stops between entries at its byte budget and the next goes on from there; a larger entry is read whole', () => {
    const dir = tempDir();
    const small = [entry('one'), entry('two'), entry('three')];
    const big = entry('x'.repeat(500));
    const all = Buffer.concat([...small, big]);
    writeFileSync(join(dir, segmentName(0)), all);
    const r = new JournalReader(dir, 0, all.length, recorder().log, small[0]!.length);
    const sink = new ListSink();
    expect(r.read(sink)).toBe(true);
    expect(sink.bodies).toEqual(['one']);
    expect(r.read(sink)).toBe(true);
    expect(sink.bodies).toEqual(['one', 'two']);
    expect(r.read(sink)).toBe(true); // 'three' is past the budget: read whole, alone
    expect(sink.bodies).toEqual(['one', 'two', 'three']);
    expect(r.read(sink)).toBe(false);
    expect(sink.bodies[3]).toHaveLength(500);
    expect(r.readPos).toBe(all.length);
  });

  test('reads only to the synced end it knows, and on once told of a later one', () => {
    const dir = tempDir();
    const a = entry('a'),
      b = entry('b');
    writeFileSync(join(dir, segmentName(0)), Buffer.concat([a, b]));
    const r = new JournalReader(dir, 0, a.length, recorder().log);
    const sink = new ListSink();
    r.read(sink);
    expect(sink.bodies).toEqual(['a']);
    r.durableTo(a.length - 1); // never lowers it
    expect(r.hasMore()).toBe(false);
    r.durableTo(a.length + b.length);
    r.read(sink);
    expect(sink.bodies).toEqual(['a', 'b']);
  });

  test('positions no segment holds are reported lost, and reading goes on at the next segment', () => {
    const dir = tempDir();
    const a = entry('after the gap');
    writeFileSync(join(dir, segmentName(1000)), a);
    const { log, lines } = recorder();
    const r = new JournalReader(dir, 0, 1000 + a.length, log);
    const sink = new ListSink();
    r.read(sink);
    expect(sink.at).toEqual([1000]);
    expect(r.takeDamaged()).toBe(1);
    expect(lines[0]).toMatch(/no segment for positions 0 to 1000/);
  });

  test('a checkpoint writes landed.state and removes the segments wholly before it, never the last', () => {
    const dir = tempDir();
    const a = entry('a'),
      b = entry('b');
    writeFileSync(join(dir, segmentName(0)), a);
    writeFileSync(join(dir, segmentName(a.length)), b);
    const r = new JournalReader(dir, 0, a.length + b.length, recorder().log);
    r.read(new ListSink());
    r.checkpoint(a.length - 1);
    expect(existsSync(join(dir, segmentName(0)))).toBe(true);
    expect(parseKv(readFileSync(join(dir, LANDED_STATE), 'utf8')).get('landed_through')).toBe(String(a.length - 1));
    r.checkpoint(a.length + b.length);
    expect(r.landedThrough).toBe(a.length + b.length);
    expect(existsSync(join(dir, segmentName(0)))).toBe(false);
    expect(existsSync(join(dir, segmentName(a.length)))).toBe(true);
  });
});
