/**
 * A Claude Code hook's input, as the lab's README records 2.1.328 sending it, becomes one
 * aszcol-hook/1 observation; input that is broken, cut short or too large still becomes one, with
 * what could be read from it and the reason it may not be placeable.
 */
import { describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { MAX_PARSED_INPUT, measure, mcpTarget, observeHookInput } from '../../src/adapters/claude-code/hook-event.js';

const AT = '2026-12-01T10:00:00.000Z';
const SESSION = 'a204328b-c251-4114-a897-ec12737a3484';
const raw = (v: unknown) => Buffer.from(JSON.stringify(v));

describe('a tool call seen by the hooks before and after it', () => {
  const pre = {
    session_id: SESSION,
    transcript_path: '/h/projects/-w/x.jsonl',
    cwd: '/w',
    permission_mode: 'default',
    hook_event_name: 'PreToolUse',
    tool_name: 'mcp__lab__slow',
    tool_input: { ms: 400, text: 'after a wait' },
    tool_use_id: 'toolu_1',
    // As 2.1.328 sends it for a server given with --mcp-config (measured with the lab).
    mcp_server: { name: 'lab', source: 'dynamic' },
  };

  test('the hook before names the call, its server and tool, and measures the input without keeping it', () => {
    const o = observeHookInput(raw(pre), AT);
    expect(o).toMatchObject({
      schema: 'aszcol-hook/1',
      event: 'tool_pre',
      session: SESSION,
      stream: 'main',
      tool: 'toolu_1',
      mcp: { server: 'lab', tool: 'slow', source: 'dynamic' },
      time: AT,
    });
    const text = JSON.stringify(pre.tool_input);
    expect(o.arguments).toEqual({ state: 'size_only', bytes: text.length, sha256: createHash('sha256').update(text).digest('hex') });
    expect(JSON.stringify(o)).not.toContain('after a wait');
    expect(o.problem).toBeUndefined();
  });

  test("the hook after carries the runtime's duration and the outcome; a failure hook is a failed call with its error", () => {
    const post = observeHookInput(raw({ ...pre, hook_event_name: 'PostToolUse', tool_response: [{ type: 'text', text: 'done' }], duration_ms: 416 }), AT);
    expect(post).toMatchObject({ event: 'tool_post', outcome: 'returned', duration_ms: 416 });
    expect(post.result?.bytes).toBeGreaterThan(0);
    const failed = observeHookInput(raw({ ...pre, hook_event_name: 'PostToolUseFailure', error: 'the server said no', duration_ms: 32 }), AT);
    expect(failed).toMatchObject({ event: 'tool_failed', outcome: 'failed', duration_ms: 32, error: 'the server said no' });
    const interrupted = observeHookInput(raw({ ...pre, hook_event_name: 'PostToolUseFailure', is_interrupt: true }), AT);
    expect(interrupted.outcome).toBe('interrupted');
  });

  test("an event from inside a subagent is on that agent's stream", () => {
    expect(observeHookInput(raw({ ...pre, agent_id: 'a1b2' }), AT).stream).toBe('a1b2');
  });

  test('the same input is the same observation, byte for byte (a posted event spooled again is one)', () => {
    expect(JSON.stringify(observeHookInput(raw(pre), AT))).toBe(JSON.stringify(observeHookInput(raw(pre), AT)));
    expect(observeHookInput(raw(pre), AT).id).not.toBe(observeHookInput(raw({ ...pre, tool_use_id: 'toolu_2' }), AT).id);
  });

  test('session start and end keep their source and reason', () => {
    expect(observeHookInput(raw({ session_id: SESSION, hook_event_name: 'SessionStart', source: 'startup', cwd: '/w' }), AT)).toMatchObject({
      event: 'session_start',
      reason: 'startup',
    });
    expect(observeHookInput(raw({ session_id: SESSION, hook_event_name: 'SessionEnd', reason: 'other' }), AT)).toMatchObject({
      event: 'session_end',
      reason: 'other',
    });
  });
});

describe('MCP names split as the OAP rule reads them', () => {
  test('one server and one tool', () => expect(mcpTarget('mcp__lab__echo')).toEqual({ server: 'lab', tool: 'echo' }));
  test('a name that does not split into exactly two keeps the whole name as the tool', () => {
    expect(mcpTarget('mcp__a__b__c')).toEqual({ tool: 'mcp__a__b__c' });
    expect(mcpTarget('mcp__only')).toEqual({ tool: 'mcp__only' });
  });
  test('not an MCP tool', () => expect(mcpTarget('Bash')).toBeUndefined());
});

describe('input the hook cannot simply read', () => {
  test('malformed JSON keeps its head and the identifiers found by text, with the reason', () => {
    const text = `{"session_id":"${SESSION}","hook_event_name":"PostToolUse","tool_use_id":"toolu_9","tool_response":{"x":`;
    const o = observeHookInput(Buffer.from(text), AT);
    expect(o).toMatchObject({ event: 'tool_post', session: SESSION, tool: 'toolu_9', input: { state: 'malformed', bytes: text.length } });
    expect(o.problem).toMatch(/not JSON/);
    expect(o.head).toBe(text);
    expect(o.duration_ms).toBeUndefined();
  });

  test('truncated input with no session id is unplaceable and says so', () => {
    const o = observeHookInput(Buffer.from('{"hook_event_name":"PreTo'), AT);
    expect(o.session).toBeUndefined();
    expect(o.problem).toMatch(/not JSON/);
  });

  test('empty input, a JSON value that is not an object, an event the plugin does not hook', () => {
    expect(observeHookInput(Buffer.alloc(0), AT)).toMatchObject({ event: 'other', input: { state: 'empty' }, problem: 'the hook received no input' });
    expect(observeHookInput(Buffer.from('[1,2]'), AT).problem).toMatch(/not an object/);
    expect(observeHookInput(raw({ session_id: SESSION, hook_event_name: 'Stop' }), AT)).toMatchObject({
      event: 'other',
      problem: expect.stringContaining('Stop'),
    });
  });

  test('a tool event with no tool use id says it cannot name its call', () => {
    expect(observeHookInput(raw({ session_id: SESSION, hook_event_name: 'PreToolUse', tool_name: 'Bash' }), AT).problem).toBe(
      'a tool event that names no tool use',
    );
  });

  test('input over the parse limit is measured and searched, head and tail: the tool use id after a huge response is still found', () => {
    const big = 'x'.repeat(MAX_PARSED_INPUT + 10);
    const text = `{"session_id":"${SESSION}","hook_event_name":"PostToolUse","tool_name":"Read","tool_response":"${big}","tool_use_id":"toolu_big","duration_ms":5}`;
    const o = observeHookInput(Buffer.from(text), AT);
    expect(o).toMatchObject({ event: 'tool_post', session: SESSION, tool: 'toolu_big', tool_name: 'Read', input: { state: 'too_large', bytes: text.length } });
    expect(o.problem).toMatch(/not parsed/);
    expect(JSON.stringify(o).length).toBeLessThan(4096);
  });

  test('measure is size and digest only', () => {
    expect(measure({ a: 1 })).toEqual({ state: 'size_only', bytes: 7, sha256: createHash('sha256').update('{"a":1}').digest('hex') });
    expect(measure(undefined)).toBeUndefined();
  });
});
