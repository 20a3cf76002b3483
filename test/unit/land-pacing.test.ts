/**
 * The landing thread's pacing, driven with explicit times: while requests keep arriving a round
 * is followed by a pause three times as long (at most a second); landing runs flat out once
 * requests stop for 100 ms, once the backlog reaches the bound, or once someone waits for a
 * position to land; rounds are spaced 200 ms unless the last one stopped at its read bound.
 */
import { describe, expect, test } from '@jest/globals';
import { PACE_DURABLE_END, PACE_LAST_ARRIVAL_MS, PACE_SLOTS, PACE_WANTED } from '../../src/receivers/claude-code-otlp/land-pace.js';
import { MAX_PAUSE_MS, MIN_ROUND_MS, Pacing, QUIET_PACE_MS } from '../../src/receivers/claude-code-otlp/landing/pacing.js';

const BOUND = 1_000_000;

function shared(): { buf: SharedArrayBuffer; slots: BigInt64Array } {
  const buf = new SharedArrayBuffer(PACE_SLOTS * 8);
  return { buf, slots: new BigInt64Array(buf) };
}

/** A pacing whose last round ran from 10_000 for `roundMs`, with a request arriving just now and a small backlog. */
function afterRound(roundMs: number) {
  const { buf, slots } = shared();
  const pacing = new Pacing(buf, BOUND);
  pacing.roundStarted(10_000);
  const end = 10_000 + roundMs;
  pacing.roundEnded(end);
  Atomics.store(slots, PACE_DURABLE_END, 5_000n);
  Atomics.store(slots, PACE_LAST_ARRIVAL_MS, BigInt(end - 1));
  return { pacing, slots, end };
}

describe('pacing of landing rounds', () => {
  test('while requests arrive, a round is followed by a pause three times as long', () => {
    const { pacing, slots, end } = afterRound(150);
    expect(pacing.pause(end, 1_000)).toBe(450);
    expect(pacing.waitBeforeRound(end, 1_000)).toBe(450);
    Atomics.store(slots, PACE_LAST_ARRIVAL_MS, BigInt(end + 399)); // still arriving
    expect(pacing.waitBeforeRound(end + 400, 1_000)).toBe(50);
    // Then none for 100 ms: the rest of the pause is dropped.
    expect(pacing.waitBeforeRound(end + 499, 1_000)).toBeLessThanOrEqual(0);
  });

  test('the pause is capped at a second however long the round took', () => {
    const { pacing, end } = afterRound(2_000);
    expect(MAX_PAUSE_MS).toBe(1000);
    expect(pacing.pause(end, 1_000)).toBe(1000);
  });

  test('quiet for 100 ms: no pause, only the spacing between round starts', () => {
    const { pacing, slots, end } = afterRound(50);
    Atomics.store(slots, PACE_LAST_ARRIVAL_MS, BigInt(end - QUIET_PACE_MS));
    expect(pacing.pause(end, 1_000)).toBe(0);
    // The last round started at 10_000: the next may start MIN_ROUND_MS after it.
    expect(pacing.waitBeforeRound(end, 1_000)).toBe(10_000 + MIN_ROUND_MS - end);
    Atomics.store(slots, PACE_LAST_ARRIVAL_MS, BigInt(end - QUIET_PACE_MS + 1));
    expect(pacing.pause(end, 1_000)).toBe(150);
  });

  test('a backlog at the bound, or someone waiting for a position not yet landed, runs landing flat out', () => {
    const { pacing, slots, end } = afterRound(100);
    Atomics.store(slots, PACE_DURABLE_END, BigInt(1_000 + BOUND - 1));
    expect(pacing.pause(end, 1_000)).toBe(300);
    Atomics.store(slots, PACE_DURABLE_END, BigInt(1_000 + BOUND));
    expect(pacing.pause(end, 1_000)).toBe(0);

    Atomics.store(slots, PACE_DURABLE_END, 5_000n);
    Atomics.store(slots, PACE_WANTED, 1_000n);
    expect(pacing.pause(end, 1_000)).toBe(300); // already landed: nobody is waiting
    Atomics.store(slots, PACE_WANTED, 1_001n);
    expect(pacing.pause(end, 1_000)).toBe(0);
  });

  test('rounds start at most every 200 ms, unless the last one stopped at its read bound', () => {
    const { buf, slots } = shared();
    const pacing = new Pacing(buf, BOUND);
    expect(pacing.waitBeforeRound(50_000, 0)).toBeLessThanOrEqual(0); // never ran: at once
    pacing.roundStarted(50_000);
    pacing.roundEnded(50_010);
    Atomics.store(slots, PACE_LAST_ARRIVAL_MS, 0n); // quiet
    expect(pacing.waitBeforeRound(50_010, 0)).toBe(190);
    pacing.lastRoundFull = true;
    expect(pacing.waitBeforeRound(50_010, 0)).toBeLessThanOrEqual(0);
  });

  test('the synced end is read from the shared slot', () => {
    const { pacing, slots } = afterRound(10);
    Atomics.store(slots, PACE_DURABLE_END, 123_456n);
    expect(pacing.sharedDurableEnd()).toBe(123_456);
  });
});
