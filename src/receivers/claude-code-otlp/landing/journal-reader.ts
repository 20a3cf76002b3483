/**
 * Reading the receiver's journal back, from where landing stands to the synced end: entries are
 * handed to a sink, damaged stretches are kept aside for a person (quarantined) and skipped, and
 * once what was read has landed `landed.state` moves past it and the segments wholly before it go.
 */
import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { formatKv } from '../../../storage/kv-text.js';
import { listDir } from '../../../storage/layout.js';
import { replaceAtomically } from '../../../storage/write-once.js';
import {
  FRAME_BYTES,
  LANDED_STATE,
  keepAside,
  nextGoodEntry,
  readEntry,
  readFileRange,
  segmentBase,
  segmentName,
  type JournalEntry,
} from '../journal-format.js';
import type { LandLog } from './messages.js';

/**
 * Bytes read from the journal at most per round (a larger entry is read alone). What a round holds
 * in memory is a few times this (the bytes, their records as text, the files' bytes): at 32 MiB
 * the receiver's RSS doubled once pacing made rounds full. A round that stops at this bound is
 * followed by the next without the MIN_ROUND_MS spacing, so it does not cap the landing rate.
 */
export const READ_BYTES = 8 * 1024 * 1024;

/** Where read entries go. */
export interface EntrySink {
  /** Takes an entry; throws when its checked bytes cannot be landed (a bug: the entry is quarantined). */
  add(entry: JournalEntry): void;
  /** Whether as much waits in memory as may: reading stops. */
  full(): boolean;
}

export class JournalReader {
  /** The journal is read from here; everything before it is landed or waiting in memory. */
  readPos: number;
  /** The synced end as far as this thread knows. */
  durableEnd: number;
  /** Every entry before this position is landed durably (`landed.state`). */
  landedThrough: number;
  /** Damaged stretches and lost positions met since the last take. */
  private damaged = 0;
  private bases: number[] = [];

  constructor(
    private readonly journalDir: string,
    from: number,
    to: number,
    private readonly log: LandLog,
    private readonly readBytes = READ_BYTES,
  ) {
    this.readPos = from;
    this.durableEnd = to;
    this.landedThrough = from;
  }

  /** Whether entries past what was read are known to be synced. */
  hasMore(): boolean {
    return this.readPos < this.durableEnd;
  }

  /** Raises the synced end (never lowers it). */
  durableTo(end: number): void {
    this.durableEnd = Math.max(this.durableEnd, end);
  }

  /** How many damaged stretches were met since the last call. */
  takeDamaged(): number {
    const n = this.damaged;
    this.damaged = 0;
    return n;
  }

  listSegments(): void {
    this.bases = listDir(this.journalDir)
      .map(segmentBase)
      .filter((b): b is number => b !== undefined)
      .sort((a, b) => a - b);
  }

  /**
   * Reads the next entries (up to readBytes, at least one) into `sink`. Returns whether it
   * stopped at readBytes with more to read (not because the sink is full, not at the end).
   */
  read(sink: EntrySink): boolean {
    let budget = this.readBytes;
    while (this.readPos < this.durableEnd && budget > 0 && !sink.full()) {
      const bases = this.bases;
      const readPos = this.readPos;
      if (!bases.length || readPos >= bases[bases.length - 1]! || !bases.some((b) => b <= readPos)) this.listSegments();
      budget -= this.readSegment(sink, budget);
    }
    return budget <= 0 && this.readPos < this.durableEnd && !sink.full();
  }

  /** Reads from readPos within its segment, at most `budget` bytes (or one larger entry); returns the bytes taken. */
  private readSegment(sink: EntrySink, budget: number): number {
    const bases = this.bases;
    const readPos = this.readPos;
    const durableEnd = this.durableEnd;
    let i = bases.length - 1;
    while (i >= 0 && bases[i]! > readPos) i--;
    if (i < 0) {
      // No segment holds this position: the journal lost files. Nothing can be read up to the next one.
      const next = bases.find((b) => b > readPos) ?? durableEnd;
      this.log('error', `the receiver's journal has no segment for positions ${readPos} to ${next}; whatever was there is lost`, { from: readPos, to: next });
      this.damaged++;
      this.readPos = next;
      return 0;
    }
    const base = bases[i]!;
    const last = i === bases.length - 1;
    const segEnd = Math.min(bases[i + 1] ?? Infinity, durableEnd);
    if (readPos >= segEnd) {
      this.readPos = bases[i + 1] ?? durableEnd;
      return 0;
    }
    const want = Math.min(segEnd - readPos, budget);
    let buf = this.readRange(base, readPos, want);
    // Whether `buf` stops short of the segment's end only because of the budget.
    let cutByBudget = want < segEnd - readPos && buf.length === want;
    let off = 0;
    for (;;) {
      const r = readEntry(buf, off, readPos);
      if (r.ok) {
        try {
          sink.add(r.entry);
        } catch (err) {
          // Checked bytes the converter cannot take are a bug; the request is kept for a person, not dropped silently.
          this.quarantine(base, readPos, buf, off, r.entry.end - readPos, `the request cannot be landed: ${(err as Error).message}`);
        }
        off = r.entry.end - readPos;
        continue;
      }
      if (r.short && cutByBudget) {
        if (off > 0) break; // the rest next time
        // One entry larger than the budget: read it whole (its frame gives the length), then go on.
        const len = buf.length >= FRAME_BYTES ? FRAME_BYTES + buf.readUInt32LE(4) : segEnd - readPos;
        buf = this.readRange(base, readPos, Math.min(len, segEnd - readPos));
        cutByBudget = false;
        continue;
      }
      if (off >= buf.length) break;
      // Bytes that are not a good entry: damage if a good entry follows in this segment, else the segment's tail.
      const whole = cutByBudget ? this.readRange(base, readPos, segEnd - readPos) : buf;
      const next = nextGoodEntry(whole, off + 1, readPos);
      const to = next < 0 ? whole.length : next;
      if (next < 0 && !last) {
        // The end of a segment before the next began: a write cut short by a crash just after the
        // journal moved to a new segment, synced by nothing, so never answered.
        this.log('warn', `the receiver's journal segment ${segmentName(base)} ends in ${to - off} bytes of an incomplete write, never answered; skipped`, {
          segment: segmentName(base),
          position: readPos + off,
          bytes: to - off,
        });
        keepAside(this.journalDir, base, readPos + off, whole.subarray(off, to));
      } else {
        this.quarantine(base, readPos, whole, off, to, r.short ? 'an entry runs past the end of what was written' : r.reason);
      }
      buf = whole;
      cutByBudget = false;
      off = to;
      if (next < 0) break;
    }
    this.readPos += off;
    if (off === buf.length && buf.length < want && !cutByBudget) {
      // The file ends before the next segment begins (see above): nothing was ever written there.
      if (this.readPos < segEnd) {
        if (last) {
          this.log(
            'error',
            `the receiver's journal segment ${segmentName(base)} ends at ${this.readPos}, before the synced end ${segEnd}; whatever was there is lost`,
            { segment: segmentName(base) },
          );
          this.damaged++;
        }
        this.readPos = segEnd;
      }
    }
    return off;
  }

  /** Moves `landed.state` to `through` (the first entry not landed), and removes the segments wholly before it. */
  checkpoint(through: number): void {
    if (through === this.landedThrough) return;
    replaceAtomically(
      join(this.journalDir, LANDED_STATE),
      formatKv([
        ['schema', 1],
        ['landed_through', through],
      ]),
    );
    this.landedThrough = through;
    this.listSegments();
    // A segment goes once the next one starts at or before the landed position; the last one is the writer's.
    const bases = this.bases;
    for (let i = 0; i + 1 < bases.length && bases[i + 1]! <= through; i++) {
      try {
        unlinkSync(join(this.journalDir, segmentName(bases[i]!)));
      } catch {
        /* gone */
      }
    }
    this.listSegments();
  }

  private readRange(base: number, from: number, len: number): Buffer {
    return readFileRange(join(this.journalDir, segmentName(base)), from - base, len);
  }

  /** Keeps a damaged stretch of the journal for a person to look at, and says so. */
  private quarantine(base: number, bufAt: number, buf: Buffer, from: number, to: number, reason: string): void {
    const position = bufAt + from;
    const path = keepAside(this.journalDir, base, position, buf.subarray(from, to));
    this.damaged++;
    this.log(
      'error',
      `the receiver's journal holds ${to - from} bytes at position ${position} that cannot be landed (${reason}); they were skipped, and a copy is in ${path}`,
      {
        segment: segmentName(base),
        position,
        bytes: to - from,
        reason,
      },
    );
  }
}
