/**
 * Nudged passes: a component that saw something arrive asks for a pass confined to the sessions
 * it names; it runs at once (after the gap), whole passes keep their interval, and passes never
 * overlap. The interval here is a minute: every pass after the first is a nudged one.
 */
import { describe, expect, test } from '@jest/globals';
import { PassScheduler } from '../../src/service/scheduler.js';
import { silentLogger } from '../../src/component/log.js';
import type { Component, PassContext } from '../../src/component/component.js';

/** A receiver that records each land stage's sessions, and can be held inside one. */
function recorder() {
  const seen: { pass: number; sessions: string[] | 'whole' }[] = [];
  const waiters: { n: number; res: () => void }[] = [];
  let hold: Promise<void> | undefined;
  let inLand: (() => void) | undefined;
  const component: Component = {
    start: async () => {},
    shutdown: async () => {},
    land: async (ctx: PassContext) => {
      inLand?.();
      if (hold) await hold;
      seen.push({ pass: ctx.pass, sessions: ctx.sessions ? [...ctx.sessions].sort() : 'whole' });
      for (const w of [...waiters]) {
        if (seen.length < w.n) continue;
        waiters.splice(waiters.indexOf(w), 1);
        w.res();
      }
    },
  };
  return {
    component,
    seen,
    /** Resolves once `n` passes have landed. */
    passes: (n: number) => new Promise<void>((res) => (seen.length >= n ? res() : waiters.push({ n, res }))),
    /** The next land stage waits until `release` is called; resolves once it is inside. */
    holdNext: () => {
      let release!: () => void;
      hold = new Promise<void>((r) => (release = r));
      const inside = new Promise<void>((r) => (inLand = r));
      return { inside, release: () => ((hold = undefined), (inLand = undefined), release()) };
    },
  };
}

function scheduler(component: Component) {
  return new PassScheduler([{ id: 'r', kind: 'receiver', component, log: silentLogger }], {
    intervalMs: 60_000,
    nudgeGapMs: 0,
    log: silentLogger,
    onPass: () => {},
  });
}

describe('nudged passes', () => {
  test('the first pass is whole; a nudge runs a pass for its sessions alone; a nudge without sessions runs a whole one', async () => {
    const r = recorder();
    const s = scheduler(r.component);
    s.start();
    await r.passes(1);
    s.nudge(['b', 'a']);
    await r.passes(2);
    s.nudge();
    await r.passes(3);
    await s.stop();
    expect(r.seen).toEqual([
      { pass: 1, sessions: 'whole' },
      { pass: 2, sessions: ['a', 'b'] },
      { pass: 3, sessions: 'whole' },
    ]);
  });

  test('nudges while a pass runs wait for its end and are taken together in one pass', async () => {
    const r = recorder();
    const s = scheduler(r.component);
    s.start();
    await r.passes(1);
    const held = r.holdNext();
    s.nudge(['a']);
    await held.inside;
    s.nudge(['b']);
    s.nudge(['c', 'b']);
    held.release();
    await r.passes(3);
    await s.stop();
    expect(r.seen.map((p) => p.sessions)).toEqual(['whole', ['a'], ['b', 'c']]);
  });

  test('a nudge that also asks for a whole pass makes the next pass whole; once stopped, a nudge starts nothing', async () => {
    const r = recorder();
    const s = scheduler(r.component);
    s.start();
    await r.passes(1);
    const held = r.holdNext();
    s.nudge(['a']);
    await held.inside;
    s.nudge(['b']);
    s.nudge();
    held.release();
    await r.passes(3);
    await s.stop();
    s.nudge(['c']);
    expect(r.seen.map((p) => p.sessions)).toEqual(['whole', ['a'], 'whole']);
    expect(s.passes).toBe(3);
  });
});
