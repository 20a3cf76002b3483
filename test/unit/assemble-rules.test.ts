import { afterAll, describe, expect, test } from '@jest/globals';
import { appendFileSync } from 'node:fs';
import { bench, PROJECT, SID } from '../helpers/collect.js';
import { TranscriptBuilder, childPath, mainPath } from '../helpers/cc.js';
import { collectAndParse, foldOf } from '../helpers/parse.js';
import { parseSession } from '../../src/processors/assembler/parse.js';
import { cleanupTemp } from '../helpers/tmp.js';
import { writeLines } from '../helpers/transcript.js';
import { expectChainProperties } from '../helpers/chain-props.js';

afterAll(cleanupTemp);

const A = 'a0123456789abcdef';

describe('assembly rules, each the opposite of the obvious choice', () => {
  test('a parallel fork: one call, two tool uses with results between fragments; an ancestor walk would lose one', () => {
    const b = bench();
    const t = new TranscriptBuilder(SID);
    t.prompt('run two', 'p1');
    const f1 = t.fragment('msg_1', { type: 'tool_use', id: 'tu_1', name: 'Bash', input: { command: 'a' } }, { stop: 'tool_use' });
    t.fragment(
      'msg_1',
      { type: 'tool_use', id: 'tu_2', name: 'Bash', input: { command: 'b' } },
      { stop: 'tool_use', usage: { input_tokens: 1, output_tokens: 99, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } },
    );
    t.result('tu_1', 'A', 'p1', { toolUseResult: { stdout: 'A' } }, { parent: f1 }); // the fork: a sibling of the second fragment
    t.result('tu_2', 'B', 'p1', { toolUseResult: { stdout: 'B' } });
    t.fragment('msg_2', { type: 'text', text: 'done' });
    t.write(mainPath(b.src, PROJECT, SID));
    const f = collectAndParse(b, SID);
    expect(f.node('call/msg_1')).toMatchObject({ kind: 'llm.call', attrs: { fragments: 2, usage: 'observed_replayable', usage_at: { seq: 1, row: 3 } } });
    for (const id of ['tu_1', 'tu_2'])
      expect(f.node(`tool/${id}`)).toMatchObject({
        parent: 'call/msg_1',
        attrs: { result: 'available', result_join: 'exact_unique', timing: 'unavailable', name: 'Bash' },
      });
    expect(f.node('tool/tu_1')!.refs).toHaveLength(2);
    expect(f.kinds).toMatchObject({ talk: 1, run: 1, 'llm.call': 2, tool: 2, 'message.external': 1, 'message.assistant': 1 });
    expect(f.unresolved).toEqual([]);
    expectChainProperties(b.root, SID);
  });

  test("a duplicate block before a reset: the first copy wins; the copy's rewritten cycle and blanked output are ignored", () => {
    const b = bench();
    const t = new TranscriptBuilder(SID);
    t.prompt('first', 'p1');
    const call = t.fragment('msg_1', { type: 'tool_use', id: 'tu_1', name: 'Bash', input: { command: 'ls' } }, { stop: 'tool_use' });
    const res = t.result('tu_1', 'file-a', 'p1', { toolUseResult: { stdout: 'file-a' } });
    const done = t.fragment('msg_2', { type: 'text', text: 'listed' });
    // The runtime re-emits the block just before the boundary: same ids, a new promptId, blanked output.
    const copy = t.lines.slice(1).map((l) => ({ ...l, ...(l.promptId ? { promptId: 'p-rewritten', toolUseResult: { stdout: '' } } : {}) }));
    for (const l of copy) t.raw(l);
    const boundary = t.push({ type: 'system', subtype: 'compact_boundary', logicalParentUuid: done, content: 'Conversation compacted' }, { parent: null });
    t.push({ type: 'user', isCompactSummary: true, promptId: 'p2', message: { role: 'user', content: 'summary' } });
    t.prompt('after', 'p3');
    t.write(mainPath(b.src, PROJECT, SID));
    const f = collectAndParse(b, SID);
    expect([call, res, done].every((id) => typeof id === 'string')).toBe(true);
    expect(f.node('tool/tu_1')!.refs).toEqual([
      { seq: 1, row: 2, block: 0 },
      { seq: 1, row: 3, block: 0 },
    ]); // the first copies
    expect(f.node('tool/tu_1')!.attrs).toMatchObject({ result_join: 'exact_unique' }); // the copy does not make it ambiguous
    expect(f.node('call/msg_1')!.attrs).toMatchObject({ fragments: 1 });
    expect(
      f.nodes
        .filter((n) => n.kind === 'run')
        .map((n) => n.id)
        .some((id) => id.includes('p-rewritten')),
    ).toBe(false);
    expect(f.kinds).toMatchObject({ epoch: 2, 'epoch.boundary': 1, 'epoch.summary': 1, talk: 3 });
    expect(f.rel('follows')).toEqual([expect.objectContaining({ from: `epoch/main/${boundary}`, to: 'epoch/main/0', quality: 'exact_unique' })]);
    expect(f.rel('summarizes')).toHaveLength(1);
    expectChainProperties(b.root, SID);
  });

  test('usage is the last fragment in line order, never a sum; a call with no stop reason has none', () => {
    const b = bench();
    const m = new TranscriptBuilder(SID);
    m.prompt('go', 'p1');
    m.fragment('msg_main', { type: 'text', text: 'ok' });
    m.write(mainPath(b.src, PROJECT, SID));
    const c = new TranscriptBuilder(SID, { agentId: A });
    c.user('child prompt', { promptId: 'p1' }, { parent: null });
    for (const out of [1, 2, 3]) {
      c.fragment(
        'msg_child',
        { type: 'text', text: `part ${out}` },
        { stop: out === 3 ? 'end_turn' : null, usage: { input_tokens: 5, output_tokens: out, cache_read_input_tokens: 0, cache_creation_input_tokens: 0 } },
      );
    }
    c.fragment('msg_stub', { type: 'text', text: 'never finished' }, { stop: null });
    c.write(childPath(b.src, PROJECT, SID, A));
    const f = collectAndParse(b, SID);
    expect(f.node('call/msg_child')!.attrs).toMatchObject({
      fragments: 3,
      usage: 'observed_replayable',
      usage_at: { seq: 2, row: 4 },
      usage_from: 'last_fragment_in_line_order',
    });
    expect(f.node('call/msg_stub')!.attrs).toMatchObject({ usage: 'unavailable', stop_reason: 'unavailable' });
    expect(f.node('call/msg_stub')!.attrs).not.toHaveProperty('usage_at');
    // A child nobody launched is an orphan: under the session, with an open spawn_of_child.
    expect(f.unresolved).toEqual([expect.objectContaining({ kind: 'spawn_of_child', ref: A, state: 'open' })]);
    expect(f.node(`stream/${A}`)).toMatchObject({ parent: `session/${SID}`, attrs: { role: 'child' } });
    expect(f.kinds.talk).toBe(2); // the child stream is one talk
    expectChainProperties(b.root, SID);
  });

  test('a string toolUseResult still joins; a queued prompt is a person, a queued notification is not; neither starts a talk', () => {
    const b = bench();
    const t = new TranscriptBuilder(SID);
    t.prompt('start', 'p1');
    t.fragment('msg_1', { type: 'tool_use', id: 'tu_1', name: 'Bash', input: { command: 'x' } }, { stop: 'tool_use' });
    t.result('tu_1', 'Error: boom', 'p1', { toolUseResult: 'Error: boom' });
    t.push({ type: 'attachment', attachment: { type: 'queued_command', prompt: 'also do this', commandMode: 'prompt', origin: { kind: 'human' } } });
    t.push({
      type: 'attachment',
      attachment: {
        type: 'queued_command',
        prompt: '<task-notification><task-id>bx1</task-id></task-notification>',
        commandMode: 'task-notification',
        origin: { kind: 'task-notification' },
      },
    });
    t.fragment('msg_2', { type: 'text', text: 'ok' });
    t.write(mainPath(b.src, PROJECT, SID));
    const f = collectAndParse(b, SID);
    expect(f.node('tool/tu_1')!.attrs).toMatchObject({ result: 'available', result_join: 'exact_unique' });
    expect(f.kinds).toMatchObject({ talk: 1, run: 1, 'message.external': 2, 'context.injection': 1 }); // a queued notification is context
    expect(f.kinds['runtime.notification']).toBeUndefined();
    expect(f.nodes.filter((n) => n.kind === 'message.external').every((n) => n.parent === 'run/talk_main_p1/p1')).toBe(true);
    expectChainProperties(b.root, SID);
  });

  test('a local slash command (no origin) opens a talk; a notification cycle continues one', () => {
    const b = bench();
    const t = new TranscriptBuilder(SID);
    t.prompt('hello', 'p1');
    t.fragment('msg_1', { type: 'text', text: 'hi' });
    t.prompt('<command-name>/cost</command-name>', 'p2', undefined);
    t.push({ type: 'system', subtype: 'local_command', content: 'cost: $0', promptId: 'p2' });
    t.prompt('<task-notification><task-id>b123</task-id><tool-use-id>none</tool-use-id></task-notification>', 'p3', 'task-notification');
    t.fragment('msg_3', { type: 'text', text: 'noted' });
    t.write(mainPath(b.src, PROJECT, SID));
    const f = collectAndParse(b, SID);
    expect(
      f.nodes
        .filter((n) => n.kind === 'talk')
        .map((n) => n.id)
        .sort(),
    ).toEqual(['talk/main/p1', 'talk/main/p2']);
    expect(f.node('run/talk_main_p2/p3')).toMatchObject({ parent: 'talk/main/p2', attrs: { trigger: 'notification' } });
    expect(f.kinds['control.command']).toBe(1);
    expectChainProperties(b.root, SID);
  });

  test('time stepping backward is no gap; a gap over 10 minutes opens a window named by where it opens', () => {
    const b = bench();
    const t = new TranscriptBuilder(SID);
    t.prompt('one', 'p1');
    t.advance(20 * 60_000);
    t.fragment('msg_1', { type: 'text', text: 'a' });
    t.advance(-15 * 60_000); // time steps backward: the next talk starts before this one's last record
    t.prompt('two', 'p2');
    t.fragment('msg_2', { type: 'text', text: 'b' });
    t.advance(4 * 3600_000);
    t.prompt('three', 'p3');
    t.fragment('msg_3', { type: 'text', text: 'c' });
    t.write(mainPath(b.src, PROJECT, SID));
    const f = collectAndParse(b, SID);
    const segs = f.nodes.filter((n) => n.kind === 'segment').sort((x, y) => (x.id < y.id ? -1 : 1));
    expect(segs.map((s) => s.id)).toEqual(['segment/at_1_1', 'segment/at_1_5']);
    expect(segs[0]!.attrs).toMatchObject({ state: 'candidate', talks: 2, committable: true, gates_unmet: [] });
    expect(segs[1]!.attrs).toMatchObject({ state: 'open', talks: 1, committable: false });
    expect(segs[1]!.attrs!.gates_unmet).toEqual(expect.arrayContaining(['activity_boundary', 'lateness_watermark']));
    expect(f.chain.fold.head!.policy).toBe('v1+idle=10m0s');
    expectChainProperties(b.root, SID);
  });

  test('a journal naming a child before its file exists: open child_stream, resolved in a later round', () => {
    const b = bench();
    const run = 'wf_abc-123';
    const t = new TranscriptBuilder(SID);
    t.prompt('run the workflow', 'p1');
    t.fragment('msg_1', { type: 'tool_use', id: 'tu_wf', name: 'Workflow', input: { script: 'x' } }, { stop: 'tool_use' });
    t.result('tu_wf', 'started', 'p1', { toolUseResult: { runId: run, status: 'async_launched' } });
    t.write(mainPath(b.src, PROJECT, SID));
    writeLines(`${b.src}/${PROJECT}/${SID}/subagents/workflows/${run}/journal.jsonl`, [{ type: 'started', key: 'v2:1', agentId: A }]);
    let f = collectAndParse(b, SID);
    expect(f.unresolved).toEqual([expect.objectContaining({ kind: 'child_stream', ref: A, state: 'open' })]);
    expect(f.node('tool/tu_wf')!.kind).toBe('tool');
    const seg = f.nodes.find((n) => n.kind === 'segment')!;
    expect(seg.attrs!.gates_unmet).toContain('no_crossing_open_operation');
    const c = new TranscriptBuilder(SID, { agentId: A });
    c.user('do the step', { promptId: 'p1' }, { parent: null });
    c.fragment('msg_c', { type: 'text', text: 'step done' });
    c.write(childPath(b.src, PROJECT, SID, A, run));
    appendFileSync(`${b.src}/${PROJECT}/${SID}/subagents/workflows/${run}/journal.jsonl`, JSON.stringify({ type: 'result', agentId: A, result: 'ok' }) + '\n');
    f = collectAndParse(b, SID);
    expect(f.chain.fold.rounds).toBe(2);
    expect(f.unresolved).toEqual([expect.objectContaining({ kind: 'child_stream', ref: A, state: 'resolved' })]); // resolved, never dropped
    expect(f.rel('starts')).toEqual([expect.objectContaining({ from: 'tool/tu_wf', to: `stream/${A}`, quality: 'strong_inference' })]);
    expect(f.node('tool/tu_wf')!.kind).toBe('agent.call');
    expect(f.node(`output/${A}`)).toMatchObject({ kind: 'agent.output', attrs: { returned_value: 'observed_replayable' } });
    expect(f.node(`output/${A}`)!.refs).toHaveLength(2);
    expectChainProperties(b.root, SID);
  });

  test('a parse with nothing new writes nothing; a parse of a session with nothing landed creates no chain', () => {
    const b = bench();
    const t = new TranscriptBuilder(SID);
    t.prompt('x', 'p1');
    t.write(mainPath(b.src, PROJECT, SID));
    collectAndParse(b, SID);
    expect(parseSession({ root: b.root, session: SID, maxRoundBytes: 1 << 21 }).status).toBe('unchanged');
    expect(foldOf(b.root, SID).chain.fold.rounds).toBe(1);
    expect(parseSession({ root: b.root, session: 'no-such-session', maxRoundBytes: 1 << 21 }).status).toBe('empty');
    expectChainProperties(b.root, SID);
  });
});
