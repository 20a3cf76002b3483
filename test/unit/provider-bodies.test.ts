/**
 * Provider bodies, pure: a body lands as a `provider_body/1` record that rebuilds to its exact bytes;
 * one that is not a JSON object is kept whole with its reason; and the context change between two
 * calls reads a message as what it means — the spelling Claude Code changes as the cache marker
 * moves on (asz 0.6, measured) is no change, and a compaction's shorter list is a drop.
 */
import { describe, expect, test } from '@jest/globals';
import { createHash } from 'node:crypto';
import { contextChange, describeRequest, describeResponse } from '../../src/adapters/claude-code/request-manifest.js';
import { bodyParts, manifestOf, rebuildBody } from '../../src/formats/session-data/provider-body.js';

const sys = [
  { type: 'text', text: 'You are a lab agent.' },
  { type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } },
];
const tools = [
  { name: 'Bash', input_schema: { type: 'object' } },
  { name: 'Read', input_schema: { type: 'object' } },
];
const first = {
  model: 'claude-x',
  system: sys,
  tools,
  max_tokens: 1000,
  thinking: { type: 'adaptive' },
  messages: [{ role: 'user', content: [{ type: 'text', text: 'hello', cache_control: { type: 'ephemeral' } }] }],
};
/** The next call: the first message now spelled as a string (its marker moved on), an answer and a new question added, Read gone, Edit offered. */
const next = {
  ...first,
  tools: [tools[0], { name: 'Edit', input_schema: { type: 'object' } }],
  messages: [
    { role: 'user', content: 'hello' },
    { role: 'assistant', content: [{ type: 'text', text: 'hi' }] },
    { role: 'user', content: [{ type: 'text', text: 'more', cache_control: { type: 'ephemeral' } }] },
  ],
};

describe('a provider body as landed', () => {
  test('a JSON body is one literal segment that rebuilds byte for byte, its digest the SHA-256 of the file', () => {
    const bytes = Buffer.from(JSON.stringify(first, null, 1) + '\n', 'utf8');
    const parts = bodyParts(bytes, { role: 'request', src: 'a.request.json', session: 's', call: 'msg_1', request: 'req_1' });
    expect(parts).toHaveLength(1);
    const m = manifestOf({ parts })!;
    expect(m).toMatchObject({
      schema: 'provider_body/1',
      role: 'request',
      src: 'a.request.json',
      bytes: bytes.length,
      depth: 0,
      call: 'msg_1',
      request: 'req_1',
    });
    expect(m.sha256).toBe(createHash('sha256').update(bytes).digest('hex'));
    expect(rebuildBody({ parts })).toEqual({ body: bytes.toString('utf8') });
  });

  test('a body cut short is kept whole in an unknown part, and its manifest and rebuild say why', () => {
    const bytes = Buffer.from(JSON.stringify(first).slice(0, 40), 'utf8');
    const parts = bodyParts(bytes, { role: 'request', src: 'b.request.json' });
    expect(parts[0]).toMatchObject({ k: 'unknown', bytes: bytes.length, data: bytes.toString('utf8') });
    expect(manifestOf({ parts })!.why).toMatch(/not one JSON value.*cut short/);
    expect(rebuildBody({ parts })).toEqual({ problem: expect.stringMatching(/not one JSON value/) });
  });

  test('a segment that names bytes of earlier records is refused with its reason, never read as empty', () => {
    const parts = bodyParts(Buffer.from('{}'), { role: 'response', src: 'c.response.json' });
    (manifestOf({ parts })!.segments as unknown[]) = [{ piece: 'ab'.repeat(32) }];
    expect(rebuildBody({ parts })).toEqual({ problem: expect.stringMatching(/pieces of earlier records/) });
  });
});

describe('the input manifest and the change between calls', () => {
  test('the manifest counts what was sent: system text, tools and their schema bytes, messages by role, parameters, cache breakpoints', () => {
    const m = describeRequest(first)!;
    expect(m.system).toMatchObject({ blocks: 2, chars: 'You are a lab agent.\nBe brief.'.length, text: 'You are a lab agent.\nBe brief.' });
    expect(m.tools).toMatchObject({ count: 2, names: ['Bash', 'Read'], schema_bytes: JSON.stringify(tools[0]).length + JSON.stringify(tools[1]).length });
    expect(m.messages).toMatchObject({ count: 1, roles: { user: 1 } });
    expect(m.parameters).toEqual({ max_tokens: 1000, thinking: { type: 'adaptive' } });
    expect(m.cache_breakpoints).toEqual([{ at: 'system[1]' }, { at: 'messages[0].content[0]' }]);
  });

  test('a message whose spelling changed as the marker moved on is kept; what was added, and the tools offered, are the change', () => {
    const c = contextChange(describeRequest(first)!, describeRequest(next)!, 'msg_1');
    expect(c).toMatchObject({ previous: 'msg_1', messages_kept: 1, messages_added: 2, messages_dropped: 0, tools_added: ['Edit'], tools_removed: ['Read'] });
    expect(c.added.map((m) => m.role)).toEqual(['assistant', 'user']);
    expect(c).toMatchObject({ system_changed: false, system_chars_delta: 0, parameters_changed: [], tools_changed: [] });
  });

  test('a compaction starts the list again: everything before is dropped, and a new system prompt and max_tokens are named', () => {
    const compacted = { ...next, system: 'Summary follows.', max_tokens: 2000, messages: [{ role: 'user', content: 'summary of the talk' }] };
    const c = contextChange(describeRequest(next)!, describeRequest(compacted)!, 'msg_2');
    expect(c).toMatchObject({ messages_kept: 0, messages_added: 1, messages_dropped: 3, system_changed: true, parameters_changed: ['max_tokens'] });
  });

  test('a response says how it stopped and what it used', () => {
    const r = describeResponse({
      id: 'msg_1',
      stop_reason: 'tool_use',
      content: [{ type: 'text' }, { type: 'tool_use' }],
      usage: { input_tokens: 3, output_tokens: 4 },
    });
    expect(r).toEqual({
      message_id: 'msg_1',
      stop_reason: 'tool_use',
      content: ['text', 'tool_use'],
      usage: { input: 3, output: 4, cache_read: undefined, cache_creation: undefined },
    });
  });
});
