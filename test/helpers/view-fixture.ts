/**
 * A session for the view's tests, written as Claude Code files and collected and parsed by the
 * real pipeline: two talks half an hour apart on main, a delegated child with a label, an orphan
 * child nothing launched, a tool use with no result (an open unresolved entry), a result landed
 * in the same millisecond as its request, a long multibyte text, and a thinking block whose
 * signature is dropped on landing.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { TranscriptBuilder, childPath, mainPath } from './cc.js';
import { bench, PROJECT, SID, type Bench } from './collect.js';
import { parseSession } from '../../src/processors/assembler/parse.js';

export const CHILD = 'a0123456789abcdef';
export const ORPHAN = 'afedcba9876543210';
export const LONG_TEXT = 'ü€'.repeat(700) + ' end'; // 3,504 bytes, multibyte all the way
export { SID, PROJECT };

export function writeFixture(b: Bench): void {
  const t = new TranscriptBuilder(SID);
  t.prompt('build and check', 'p1');
  t.raw({ type: 'ai-title', aiTitle: 'Build and check the tests', sessionId: SID });
  t.push({ type: 'attachment', attachment: { type: 'date', date: '2026-11-30' } });
  t.fragment('msg_1', { type: 'thinking', thinking: '', signature: 'sig-bytes' }, { stop: null });
  const f = t.fragment(
    'msg_1',
    { type: 'tool_use', id: 'tu_build', name: 'Bash', input: { command: 'make build' } },
    { stop: 'tool_use', usage: { input_tokens: 12, output_tokens: 40, cache_read_input_tokens: 0, cache_creation_input_tokens: 7 } },
  );
  t.result('tu_build', 'build ok', 'p1', { toolUseResult: { stdout: 'build ok' } }, { parent: f });
  t.fragment('msg_2', { type: 'tool_use', id: 'tu_agent', name: 'Agent', input: { description: 'checker', prompt: 'check the tests' } }, { stop: 'tool_use' });
  t.result('tu_agent', 'launched', 'p1', { toolUseResult: { status: 'async_launched', agentId: CHILD } });
  t.fragment('msg_3', { type: 'text', text: 'Waiting for the checker.' });
  t.prompt(
    `<task-notification>\n<task-id>${CHILD}</task-id>\n<tool-use-id>tu_agent</tool-use-id>\n<status>completed</status>\n</task-notification>`,
    'p1n',
    'task-notification',
  );
  t.fragment('msg_4', { type: 'text', text: 'Build passed and tests are green.' });

  const c = new TranscriptBuilder(SID, { agentId: CHILD, start: '2026-11-30T10:00:06.500Z' });
  c.user('check the tests', { promptId: 'p1' }, { parent: null });
  c.fragment('msg_c1', { type: 'text', text: 'Tests pass.' });
  c.write(childPath(b.src, PROJECT, SID, CHILD));
  writeFileSync(
    join(dirname(childPath(b.src, PROJECT, SID, CHILD)), `agent-${CHILD}.meta.json`),
    JSON.stringify({ agentType: 'general-purpose', description: 'checker', toolUseId: 'tu_agent' }),
  );

  const o = new TranscriptBuilder(SID, { agentId: ORPHAN, start: '2026-11-30T10:00:09.000Z' });
  o.user('an orphan task', { promptId: 'p-orphan' }, { parent: null });
  o.fragment('msg_o1', { type: 'text', text: 'Nobody asked.' });
  o.write(childPath(b.src, PROJECT, SID, ORPHAN));

  t.advance(30 * 60_000); // a pause longer than the idle gap: a second segment, a gap on the timeline
  t.prompt('read the log', 'p2');
  t.fragment('msg_5', { type: 'tool_use', id: 'tu_open', name: 'Read', input: { file_path: '/var/log/x' } }, { stop: 'tool_use' });
  const fast = t.fragment('msg_6', { type: 'tool_use', id: 'tu_fast', name: 'Bash', input: { command: 'true' } }, { stop: 'tool_use' });
  const at = Date.parse(t.lines[t.lines.length - 1]!.timestamp as string);
  t.push(
    { type: 'user', promptId: 'p2', message: { role: 'user', content: [{ tool_use_id: 'tu_fast', type: 'tool_result', content: '', is_error: true }] } },
    { parent: fast, time: at },
  );
  t.fragment('msg_7', { type: 'text', text: LONG_TEXT });
  t.write(mainPath(b.src, PROJECT, SID));
}

/** A storage root holding the fixture, collected and parsed. */
export function fixtureRoot(): Bench {
  const b = bench();
  writeFixture(b);
  const pass = b.pass();
  if (pass.errors.length) throw new Error(JSON.stringify(pass.errors));
  parseSession({ root: b.root, session: SID, maxRoundBytes: 2 * 1024 * 1024 });
  return b;
}
