/**
 * A shell command's changes as the plugin's two scans show them: each entry created, removed or
 * rewritten between the hook before and the hook after is one changed file of an asz-plugin record
 * on the call; a call whose hooks do not pair gives none, and a copy of an observation counts once.
 */
import { describe, expect, test } from '@jest/globals';
import type { DirScan, HookObservation } from '../../src/adapters/claude-code/hook-event.js';
import { shellWindowChanges, type LandedObservation } from '../../src/assemble/shell-window-changes.js';
import { joinExecutions } from '../../src/assemble/tool-executions.js';

const scan = (entries: Record<string, string>, dir = '/work'): DirScan => ({ dir, entries, complete: true });

function hook(id: string, event: 'tool_pre' | 'tool_post', tool: string, s: DirScan, row: number): LandedObservation {
  const observation: HookObservation = {
    schema: 'aszcol-hook/1',
    id,
    event,
    stream: 'main',
    tool,
    tool_name: 'Bash',
    time: `2026-06-01T09:00:0${row}.000Z`,
    shell: { scan: s },
    input: { bytes: 1, sha256: 'x', state: 'parsed' },
  };
  return { observation, ref: { seq: 3, row, block: 0 }, stream: 'main' };
}

describe('shell window changes', () => {
  test('created, rewritten and removed entries each name a file on the call, at the hook after it', () => {
    const before = scan({ 'a.txt': '5:100', 'gone.txt': '2:100', docs: 'dir', 'same.txt': '1:100' });
    const after = scan({ 'a.txt': '5:200', 'new.txt': '3:200', docs: 'dir', 'same.txt': '1:100' });
    const got = shellWindowChanges([hook('p', 'tool_pre', 't1', before, 1), hook('q', 'tool_post', 't1', after, 2)]);
    expect(got.map((c) => [c.file, c.operation])).toEqual([
      ['a.txt', 'update'],
      ['gone.txt', 'delete'],
      ['new.txt', 'create'],
    ]);
    for (const c of got)
      expect(c).toMatchObject({
        tool_use: 't1',
        captured_by: 'asz-plugin',
        basis: 'tool_window',
        coverage: 'partial',
        lines: 'unavailable',
        hunks: [],
        ref: { seq: 3, row: 2, block: 0 },
        stream: 'main',
        at: Date.parse('2026-06-01T09:00:02.000Z'),
      });
  });

  test('a call without both hooks, with two hooks after it, or scanned in two directories gives no record', () => {
    const b = scan({});
    const a = scan({ 'x.txt': '1:1' });
    expect(shellWindowChanges([hook('p', 'tool_pre', 't1', b, 1)])).toEqual([]);
    expect(shellWindowChanges([hook('q', 'tool_post', 't1', a, 2)])).toEqual([]);
    expect(shellWindowChanges([hook('p', 'tool_pre', 't1', b, 1), hook('q', 'tool_post', 't1', a, 2), hook('r', 'tool_post', 't1', a, 3)])).toEqual([]);
    expect(shellWindowChanges([hook('p', 'tool_pre', 't1', b, 1), hook('q', 'tool_post', 't1', scan({ 'x.txt': '1:1' }, '/elsewhere'), 2)])).toEqual([]);
  });

  test('the same observation landed twice (posted and spooled) is one hook, so the call still pairs', () => {
    const got = shellWindowChanges([
      hook('p', 'tool_pre', 't1', scan({}), 1),
      hook('q', 'tool_post', 't1', scan({ 'x.txt': '1:1' }), 2),
      hook('q', 'tool_post', 't1', scan({ 'x.txt': '1:1' }), 4),
    ]);
    expect(got.map((c) => c.file)).toEqual(['x.txt']);
  });

  test('a hook after the call without a scan still counts: with two hooks after it the call pairs for neither /changes nor /tools', () => {
    const bare = hook('r', 'tool_post', 't1', scan({}), 3);
    delete bare.observation.shell;
    const landed = [hook('p', 'tool_pre', 't1', scan({}), 1), hook('q', 'tool_post', 't1', scan({ 'x.txt': '1:1' }), 2), bare];
    expect(shellWindowChanges(landed)).toEqual([]);
    const tools = joinExecutions(
      new Set(['t1']),
      landed.map((l, i) => ({ line: i + 1, value: l.observation })),
    );
    expect(tools.executions.get('t1')).toMatchObject({ join: 'exact_ambiguous' });
    expect(tools.executions.get('t1')!.shell_changed).toBeUndefined();
  });

  test('a bounded scan compares only the names both scans looked at: a file pushed past the bound is unseen, not deleted', () => {
    // Both scans stopped at three names; a new file sorting first pushed "c.txt" out of the second.
    const before: DirScan = { dir: '/work', entries: { 'b.txt': '1:1', 'c.txt': '1:1', 'd.txt': '1:1' }, complete: false };
    const after: DirScan = { dir: '/work', entries: { 'a.txt': '2:2', 'b.txt': '1:1', 'c.txt': '1:1' }, complete: false };
    const got = shellWindowChanges([hook('p', 'tool_pre', 't1', before, 1), hook('q', 'tool_post', 't1', after, 2)]);
    expect(got.map((c) => [c.file, c.operation])).toEqual([['a.txt', 'create']]);
    // A directory the hook could not read was not looked at at all: nothing in it is known to have changed.
    const unread: DirScan = { dir: '/work', entries: {}, complete: false };
    expect(shellWindowChanges([hook('p', 'tool_pre', 't2', unread, 1), hook('q', 'tool_post', 't2', scan({ 'x.txt': '1:1' }), 2)])).toEqual([]);
  });
});
