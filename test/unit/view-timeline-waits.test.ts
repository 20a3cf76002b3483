/**
 * The timeline's three kinds of wait, from what assembly's telemetry join wrote: a call's API wait
 * from its span (else its event's duration ending at its record), a tool's execution from its start
 * and execution time, and the permission wait ending where the tool starts. A step without figures
 * draws nothing rather than a guess.
 */
import { describe, expect, test } from '@jest/globals';
import type { ViewNode } from '../../src/formats/view/types.js';
import { waitsOf } from '../../src/extensions/view/page/timeline-waits.js';

const T = Date.parse('2026-12-01T10:00:00.000Z');
const iso = (ms: number) => new Date(ms).toISOString();

describe('the timeline marks where the time went', () => {
  test('API waits, tool execution and waits for the user are three kinds, each at its own time', () => {
    const nodes: ViewNode[] = [
      { id: 'call/a', kind: 'llm.call', stream: 'main', at: T + 1000, attrs: { started_at: iso(T), ended_at: iso(T + 950) } },
      { id: 'call/b', kind: 'llm.call', stream: 'agent-1', at: T + 5000, attrs: { duration_ms: 900 } },
      { id: 'tool/t', kind: 'tool', stream: 'main', at: T + 1000, attrs: { started_at: iso(T + 2000), execution_ms: 500, blocked_on_user_ms: 1200 } },
      { id: 'tool/none', kind: 'tool', stream: 'main', at: T + 3000, attrs: { timing: 'unavailable' } },
      { id: 'call/none', kind: 'llm.call', stream: 'main', at: T + 4000, attrs: {} },
    ];
    expect(waitsOf(nodes)).toEqual([
      { kind: 'api', id: 'call/a', stream: 'main', from: T, to: T + 950 },
      { kind: 'api', id: 'call/b', stream: 'agent-1', from: T + 4100, to: T + 5000 },
      { kind: 'tool', id: 'tool/t', stream: 'main', from: T + 2000, to: T + 2500 },
      { kind: 'user', id: 'tool/t', stream: 'main', from: T + 800, to: T + 2000 },
    ]);
  });
});
