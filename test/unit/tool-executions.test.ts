/**
 * Joining the plugin's observations to tool steps: by tool-use id only; the runtime's duration
 * and the hooks' own span on the step; what names no step, what is ambiguous, what is not an
 * observation at all, each kept as unresolved evidence with its reason.
 */
import { describe, expect, test } from '@jest/globals';
import { joinExecutions, type ObservationLine } from '../../src/assemble/tool-executions.js';
import { observeHookInput, type DirScan } from '../../src/adapters/claude-code/hook-event.js';
import { scanDifference } from '../../src/adapters/claude-code/dir-scan.js';

const S = 'sess-1';
let n = 0;
function obs(native: string, fields: object, time: string): ObservationLine {
  const o = observeHookInput(Buffer.from(JSON.stringify({ session_id: S, hook_event_name: native, ...fields })), time);
  return { line: ++n, value: o };
}
const pre = (tool: string, time: string, extra: object = {}) =>
  obs('PreToolUse', { tool_name: 'mcp__lab__slow', tool_use_id: tool, tool_input: {}, ...extra }, time);
const post = (tool: string, time: string, extra: object = {}) =>
  obs('PostToolUse', { tool_name: 'mcp__lab__slow', tool_use_id: tool, tool_input: {}, tool_response: 'ok', duration_ms: 416, ...extra }, time);

describe('a call observed before and after', () => {
  test("the step gets the runtime's duration with its source, the span between the hooks, the outcome, the server and tool", () => {
    const j = joinExecutions(new Set(['t1']), [pre('t1', '2026-12-01T10:00:00.000Z'), post('t1', '2026-12-01T10:00:01.250Z')]);
    expect(j.unresolved).toEqual([]);
    expect(j.executions.get('t1')).toEqual({
      tool_use_id: 't1',
      observed_by: 'aszcol-plugin',
      join: 'exact_unique',
      duration_ms: 416,
      duration_from: 'hook_duration_ms',
      hook_span_ms: 1250,
      outcome: 'returned',
      mcp_server: 'lab',
      mcp_tool: 'slow',
      observations: 2,
    });
  });

  test('a failure hook makes a failed call with its error', () => {
    const failed = obs('PostToolUseFailure', { tool_name: 'mcp__lab__fail', tool_use_id: 't2', error: 'no', duration_ms: 32 }, '2026-12-01T10:00:01.000Z');
    expect(joinExecutions(new Set(['t2']), [failed]).executions.get('t2')).toMatchObject({ outcome: 'failed', error: 'no', duration_ms: 32, mcp_tool: 'fail' });
  });

  test('the same observation twice (posted, then spooled again after a timeout) counts once', () => {
    const p = post('t1', '2026-12-01T10:00:01.000Z');
    const j = joinExecutions(new Set(['t1']), [p, { ...p, line: 99 }]);
    expect(j.observations).toBe(1);
    expect(j.executions.get('t1')?.join).toBe('exact_unique');
  });
});

describe('what cannot be placed is carried with its reason', () => {
  test("an observation whose tool use is no step of the conversation (an unknown session's, or not assembled yet)", () => {
    const j = joinExecutions(new Set(['t1']), [post('t9', '2026-12-01T10:00:01.000Z')]);
    expect(j.executions.size).toBe(0);
    expect(j.unresolved).toEqual([{ kind: 'execution', ref: expect.any(String), reason: expect.stringContaining('tool use id t9'), state: 'open' }]);
  });

  test('two different answers for one call: exact_ambiguous, no figure chosen, and an unresolved entry says so', () => {
    const j = joinExecutions(new Set(['t1']), [post('t1', '2026-12-01T10:00:01.000Z'), post('t1', '2026-12-01T10:00:02.000Z', { duration_ms: 9 })]);
    const x = j.executions.get('t1')!;
    expect(x.join).toBe('exact_ambiguous');
    expect(x.duration_ms).toBeUndefined();
    expect(j.unresolved[0]!.reason).toMatch(/none is chosen/);
  });

  test('lines that are not observations, and events that are neither calls nor boundaries', () => {
    const j = joinExecutions(new Set(), [
      { line: 1, problem: 'not JSON: Unexpected end' },
      { line: 2, value: { schema: 'other' } },
      obs('Stop', {}, '2026-12-01T10:00:00.000Z'),
    ]);
    expect(j.unresolved.map((u) => u.reason)).toEqual([
      'not JSON: Unexpected end',
      'not an aszcol-hook/1 observation',
      'a hook event this plugin does not hook: Stop',
    ]);
  });

  test('a call whose hook after ran once the session had ended is placed and marked', () => {
    const j = joinExecutions(new Set(['t1']), [
      obs('SessionEnd', { reason: 'other' }, '2026-12-01T10:00:00.500Z'),
      pre('t1', '2026-12-01T10:00:00.000Z'),
      post('t1', '2026-12-01T10:00:01.000Z'),
    ]);
    expect(j.session_ended).toBe('2026-12-01T10:00:00.500Z');
    expect(j.executions.get('t1')).toMatchObject({ after_session_end: true, duration_ms: 416 });
  });
});

describe('a shell command, best effort', () => {
  const scan = (entries: Record<string, string>, complete = true): DirScan => ({ dir: '/w', entries, complete });

  test('entries created, removed or rewritten between the two scans; a directory is never "changed" by its own mtime', () => {
    expect(scanDifference(scan({ a: '1:10', b: '2:10', d: 'dir', gone: '1:1' }), scan({ a: '1:10', b: '3:20', d: 'dir', c: '5:30' }))).toEqual([
      'b',
      'c',
      'gone',
    ]);
  });

  test('the join puts them on the step and says whether the scans were complete', () => {
    const before = pre('t3', '2026-12-01T10:00:00.000Z', { tool_name: 'Bash' });
    const after = post('t3', '2026-12-01T10:00:00.600Z', { tool_name: 'Bash' });
    (before.value as { shell?: object }).shell = { scan: scan({ a: '1:1' }) };
    (after.value as { shell?: object }).shell = { scan: scan({ a: '1:1', out: '4:2' }, false) };
    expect(joinExecutions(new Set(['t3']), [before, after]).executions.get('t3')).toMatchObject({ shell_changed: ['out'], shell_scan_complete: false });
  });
});
