import { describe, expect, test } from '@jest/globals';
import { convertJournalLine, convertManifest, convertScript, convertSidecar, convertTranscriptLine } from '../../src/adapters/claude-code/dialect.js';

const line = (o: unknown) => Buffer.from(typeof o === 'string' ? o : JSON.stringify(o));

describe('claude-code/1 → sd/1', () => {
  test('an assistant fragment: roles, usage by its documented names, and one part per block in order', () => {
    const r = convertTranscriptLine(
      line({
        type: 'assistant',
        uuid: 'u2',
        parentUuid: 'u1',
        promptId: 'p1',
        timestamp: '2026-11-30T04:48:42.536Z',
        requestId: 'req_1',
        cwd: '/x',
        message: {
          id: 'msg_1',
          model: 'claude-opus-5-5',
          stop_reason: 'tool_use',
          usage: { input_tokens: 100, output_tokens: 40, cache_read_input_tokens: 300, cache_creation_input_tokens: 20 },
          content: [
            { type: 'thinking', thinking: '', signature: 'sig-abc' },
            { type: 'text', text: 'Running.' },
            { type: 'tool_use', id: 'toolu_1', name: 'Bash', input: { command: 'echo one' }, caller: { type: 'direct' } },
          ],
        },
      }),
    );
    expect(r).toMatchObject({
      id: 'u2',
      parent: 'u1',
      call: 'msg_1',
      run: 'p1',
      from: 'agent',
      time: '2026-11-30T04:48:42.536Z',
      model: 'claude-opus-5-5',
      flags: ['finished'],
    });
    expect(r.usage).toEqual({ in: 100, out: 40, cache_read: 300, cache_write: 20 });
    expect(r.parts.map((p) => p.k)).toEqual(['reasoning', 'text', 'call']);
    expect(r.parts[0]).toEqual({ k: 'reasoning', state: 'unavailable', bytes: 0 });
    expect(r.parts[2]).toMatchObject({
      k: 'call',
      id: 'toolu_1',
      name: 'Bash',
      data: { command: 'echo one' },
      bytes: Buffer.byteLength('{"command":"echo one"}'),
    });
    // The signature is not landed, and saying so is not optional.
    expect(r.dropped).toEqual(expect.arrayContaining([{ what: 'reasoning signature', bytes: 7, why: expect.any(String) }]));
    expect(r.dropped!.some((d) => d.what === 'tool_use caller')).toBe(true);
    // Envelope fields do not land.
    expect(JSON.stringify(r)).not.toContain('req_1');
  });

  test('a fragment with no stop reason is not finished; reasoning text is kept when the runtime wrote it', () => {
    const r = convertTranscriptLine(
      line({ type: 'assistant', uuid: 'u', message: { id: 'm', content: [{ type: 'thinking', thinking: 'hmm', signature: 's' }], stop_reason: null } }),
    );
    expect(r.flags).toBeUndefined();
    expect(r.parts[0]).toEqual({ k: 'reasoning', state: 'available', bytes: 3, text: 'hmm' });
  });

  test('redacted thinking is reasoning marked redacted', () => {
    const r = convertTranscriptLine(line({ type: 'assistant', message: { id: 'm', content: [{ type: 'redacted_thinking', data: 'xyz' }] } }));
    expect(r.parts[0]).toMatchObject({ k: 'reasoning', state: 'redacted', bytes: 3 });
  });

  test('a tool result carries text and the structured outcome together; failed only when the source says so', () => {
    const r = convertTranscriptLine(
      line({
        type: 'user',
        uuid: 'u3',
        promptId: 'p1',
        message: { role: 'user', content: [{ tool_use_id: 'toolu_1', type: 'tool_result', content: 'one', is_error: false }] },
        toolUseResult: { stdout: 'one', stderr: '', interrupted: false },
      }),
    );
    expect(r.from).toBe('external');
    expect(r.flags).toBeUndefined(); // a tool answering is not a person's input
    expect(r.parts).toEqual([
      { k: 'result', state: 'available', bytes: 3, of: 'toolu_1', failed: false, text: 'one', data: { stdout: 'one', stderr: '', interrupted: false } },
    ]);
    const silent = convertTranscriptLine(line({ type: 'user', message: { content: [{ tool_use_id: 't', type: 'tool_result', content: 'x' }] } }));
    expect(silent.parts[0]).not.toHaveProperty('failed');
  });

  test('a result whose content is a list keeps text, images and tool references', () => {
    const withText = convertTranscriptLine(
      line({
        type: 'user',
        message: {
          content: [
            {
              type: 'tool_result',
              tool_use_id: 't',
              content: [
                { type: 'text', text: 'a' },
                { type: 'text', text: 'b' },
              ],
            },
          ],
        },
      }),
    );
    expect(withText.parts[0]).toMatchObject({ k: 'result', text: 'a\nb' });
    const refs = [{ type: 'tool_reference', tool_name: 'Monitor' }];
    const noText = convertTranscriptLine(line({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: 't', content: refs }] } }));
    expect(noText.parts[0]).toMatchObject({ k: 'result', data: refs });
    expect(noText.parts[0]).not.toHaveProperty('text');
  });

  test('a plain-string toolUseResult is stated as dropped, not silently lost', () => {
    const r = convertTranscriptLine(
      line({
        type: 'user',
        message: { content: [{ type: 'tool_result', tool_use_id: 't', content: 'Error: no', is_error: true }] },
        toolUseResult: 'Error: no',
      }),
    );
    expect(r.parts[0]).toMatchObject({ failed: true, text: 'Error: no' });
    expect(r.dropped).toEqual([expect.objectContaining({ what: 'toolUseResult string', bytes: 9 })]);
  });

  test('an image is media with its base64 inline', () => {
    const r = convertTranscriptLine(
      line({ type: 'user', message: { content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0=' } }] } }),
    );
    expect(r.parts[0]).toEqual({ k: 'media', state: 'available', bytes: 8, media: 'image/png', data: 'iVBORw0=' });
  });

  test('a block this dialect does not describe keeps its bytes as unknown, in place', () => {
    const block = { type: 'fallback', from: { model: 'a' }, to: { model: 'b' } };
    const r = convertTranscriptLine(
      line({ type: 'assistant', message: { id: 'm', content: [{ type: 'text', text: 'x' }, block, { type: 'text', text: 'y' }] } }),
    );
    expect(r.parts.map((p) => p.k)).toEqual(['text', 'unknown', 'text']);
    expect(r.parts[1]).toMatchObject({ state: 'available', data: JSON.stringify(block), text: expect.stringContaining('"fallback"') });
  });

  test('a line that is not JSON lands as one unknown part holding every byte', () => {
    const raw = '{"type":"user", truncated';
    const r = convertTranscriptLine(line(raw));
    expect(r.parts).toEqual([{ k: 'unknown', state: 'available', bytes: raw.length, text: 'the record is not valid JSON', data: raw }]);
    expect(convertTranscriptLine(line('[1,2]')).parts[0]).toMatchObject({ k: 'unknown', text: 'the record is not a JSON object' });
  });

  test('bytes that are not UTF-8 are kept as base64 and said to be', () => {
    const raw = Buffer.from([0x7b, 0xff, 0xfe, 0x7d]);
    const r = convertTranscriptLine(raw);
    expect(r.parts[0]).toMatchObject({ k: 'unknown', bytes: 4, data: raw.toString('base64'), text: expect.stringContaining('base64') });
  });

  test('string content is one text part; a person is external_input with trigger external', () => {
    const r = convertTranscriptLine(line({ type: 'user', uuid: 'u', message: { content: 'hello' }, origin: { kind: 'human' } }));
    expect(r).toMatchObject({
      from: 'external',
      trigger: 'external',
      flags: ['external_input'],
      parts: [{ k: 'text', text: 'hello', bytes: 5, state: 'available' }],
    });
  });

  test('a notification turn names the call it completes and triggers as a notification', () => {
    const text =
      '<task-notification>\n<task-id>a687426e8a37aa323</task-id>\n<tool-use-id>toolu_X</tool-use-id>\n<status>completed</status>\n</task-notification>';
    const r = convertTranscriptLine(line({ type: 'user', uuid: 'u', message: { content: text }, origin: { kind: 'task-notification' } }));
    expect(r).toMatchObject({ tool: 'toolu_X', child: 'a687426e8a37aa323', trigger: 'notification' });
    expect(r.flags).toBeUndefined();
  });

  test("a prompt with no origin is a person when it opens a cycle; a local command's echoed output is not", () => {
    expect(convertTranscriptLine(line({ type: 'user', promptId: 'p', message: { content: 'PARALLEL please' } })).flags).toEqual(['external_input']);
    expect(
      convertTranscriptLine(line({ type: 'user', promptId: 'p', message: { content: '<local-command-stdout>Compacted</local-command-stdout>' } })).flags,
    ).toBeUndefined();
    expect(convertTranscriptLine(line({ type: 'user', message: { content: 'no cycle' } })).flags).toBeUndefined();
  });

  test('isMeta and attachments are injected context; a prompt-mode queued command is a person', () => {
    expect(convertTranscriptLine(line({ type: 'user', isMeta: true, message: { content: '<local-command-caveat>' } })).flags).toEqual(['injected']);
    const att = convertTranscriptLine(line({ type: 'attachment', uuid: 'a', attachment: { type: 'date', date: '2026-11-30' } }));
    expect(att).toMatchObject({ from: 'runtime', flags: ['injected'], parts: [{ k: 'data', data: { type: 'date', date: '2026-11-30' } }] });
    const textual = convertTranscriptLine(line({ type: 'attachment', attachment: { type: 'model', text: 'You are Opus' } }));
    expect(textual.parts[0]).toMatchObject({ k: 'text', text: 'You are Opus' });
    const queued = convertTranscriptLine(
      line({ type: 'attachment', attachment: { type: 'queued_command', prompt: 'do it', commandMode: 'prompt', origin: { kind: 'human' } } }),
    );
    expect(queued).toMatchObject({ trigger: 'external', flags: ['external_input'] });
    const notif = convertTranscriptLine(
      line({
        type: 'attachment',
        attachment: { type: 'queued_command', prompt: 'x', commandMode: 'task-notification', origin: { kind: 'task-notification' } },
      }),
    );
    expect(notif).toMatchObject({ trigger: 'notification', flags: ['injected'] });
    expect(convertTranscriptLine(line({ type: 'user', message: { content: 'x' }, origin: { kind: 'cron' } })).trigger).toBe('unknown');
  });

  test('launch results: child, batch, launch_ack; a synchronous child return is child_result', () => {
    const ack = convertTranscriptLine(
      line({
        type: 'user',
        message: { content: [{ type: 'tool_result', tool_use_id: 't', content: 'launched' }] },
        toolUseResult: { status: 'async_launched', agentId: 'a687426e8a37aa323' },
      }),
    );
    expect(ack).toMatchObject({ child: 'a687426e8a37aa323', flags: ['launch_ack'] });
    const wf = convertTranscriptLine(
      line({
        type: 'user',
        message: { content: [{ type: 'tool_result', tool_use_id: 't', content: 'ok' }] },
        toolUseResult: { runId: 'wf_abc-def', status: 'async_launched' },
      }),
    );
    expect(wf.batch).toBe('wf_abc-def');
    const sync = convertTranscriptLine(
      line({
        type: 'user',
        message: { content: [{ type: 'tool_result', tool_use_id: 't', content: 'done' }] },
        toolUseResult: { status: 'completed', agentId: 'a0000000000000001' },
      }),
    );
    expect(sync.flags).toEqual(['child_result']);
  });

  test('a compact boundary: continues from logicalParentUuid, recognised by subtype; its summary is flagged', () => {
    const b = convertTranscriptLine(
      line({ type: 'system', subtype: 'compact_boundary', uuid: 'b', parentUuid: null, logicalParentUuid: 'L', content: 'Conversation compacted' }),
    );
    expect(b).toMatchObject({ id: 'b', continues: 'L', from: 'runtime', flags: ['context_reset'] });
    expect(b.parts[0]!.k).toBe('data');
    const text = convertTranscriptLine(line({ type: 'user', message: { content: 'compact_boundary mentioned in text' }, logicalParentUuid: 'L' }));
    expect(text.continues).toBeUndefined();
    const s = convertTranscriptLine(line({ type: 'user', isCompactSummary: true, parentUuid: 'b', message: { content: 'summary' } }));
    expect(s.flags).toEqual(['reset_summary']);
  });

  test('the runtime bookkeeping of 2.1.328 lands whole as data, nothing dropped', () => {
    for (const o of [
      { type: 'api-request', sessionId: 's', id: 'x', params: { model: 'm' } },
      { type: 'queue-operation', operation: 'enqueue', content: 'hi' },
      { type: 'cost-state', totalCostUSD: 0.1 },
      { type: 'ai-title', aiTitle: 'Fixing the build' },
    ]) {
      const r = convertTranscriptLine(line(o));
      expect(r.parts).toEqual([{ k: 'data', state: 'available', bytes: JSON.stringify(o).length, data: o }]);
    }
    expect(convertTranscriptLine(line({ type: 'ai-title', aiTitle: 'T' })).label).toBe('T');
  });

  test('sidecar, manifest, script and journal', () => {
    const side = convertSidecar(line({ description: 'helper task', toolUseId: 'toolu_9', parentAgentId: 'a1111111111111111' }), 'a2222222222222222');
    expect(side).toMatchObject({ from: 'runtime', child: 'a2222222222222222', label: 'helper task', tool: 'toolu_9', started_by: 'a1111111111111111' });
    expect(convertManifest(line({ workflowName: 'review', status: 'running' }), 'wf_1')).toMatchObject({
      batch: 'wf_1',
      label: 'review',
      parts: [{ k: 'data' }],
    });
    expect(convertScript(line('export default 1;'), 'wf_1', 'review')).toMatchObject({
      batch: 'wf_1',
      label: 'review',
      parts: [{ k: 'unknown', data: 'export default 1;' }],
    });
    expect(convertJournalLine(line({ type: 'started', agentId: 'a3333333333333333' }), 'wf_1')).toMatchObject({
      from: 'runtime',
      batch: 'wf_1',
      child: 'a3333333333333333',
      flags: ['child_started'],
    });
    expect(convertJournalLine(line({ type: 'result', agentId: 'a3' }), 'wf_1').flags).toEqual(['child_result']);
  });
});
