import { describe, expect, test } from '@jest/globals';
import { changeRecordOf } from '../../src/adapters/claude-code/changes.js';
import { patchOf } from '../../src/scenario/edit-outcome.js';
import { generate } from '../../src/scenario/generate.js';
import { parseScenario, ScenarioError } from '../../src/scenario/model.js';

const AT = Date.parse('2026-06-01T09:00:00Z');
const lines = (scn: unknown) => {
  const g = generate(parseScenario(scn, 'format'), { at: AT });
  return [...g.files.entries()]
    .filter(([p]) => p.endsWith(`${g.session}.jsonl`))
    .flatMap(([, c]) =>
      c
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, any>),
    );
};

describe('the scenario format, key by key, as Claude Code would write it', () => {
  test('entrypoint: every record carries it; an SDK run writes promptSource "sdk" and no origin on a prompt, and a notification keeps its origin', () => {
    const recs = lines({
      entrypoint: 'sdk-cli',
      steps: [{ input: 'what is this' }, { call: { agent: { name: 'scout', prompt: 'look', steps: [{ call: { text: 'a server' } }], notify: true } } }],
    });
    expect(recs.every((r) => r.entrypoint === 'sdk-cli')).toBe(true);
    const prompt = recs.find((r) => r.uuid === 's1-input')!;
    expect(prompt.promptSource).toBe('sdk');
    expect(prompt.origin).toBeUndefined();
    const note = recs.find((r) => r.uuid === 's2-notification')!;
    expect(note.origin).toEqual({ kind: 'task-notification', producer: 'session-task' });
    // Without an entrypoint the session is an interactive one.
    const cli = lines({ steps: [{ input: 'hi' }] });
    expect(cli[0]!.entrypoint).toBe('cli');
    expect(cli[0]!.origin).toEqual({ kind: 'human' });
  });

  test("changes on an Edit: the result carries the runtime's patch, which Claude Code's adapter reads back as the same change", () => {
    const before = 'a\nb\nc\nd\ne\nf\ng\nh\n',
      after = 'a\nb\nc\nd\nE\nf\ng\nh\n';
    const recs = lines({
      steps: [{ input: 'fix' }, { call: { tool: { name: 'Edit', input: {}, result: 'ok', changes: [{ path: 'x.txt', before, after }] } } }],
    });
    const result = recs.find((r) => r.uuid === 's2-result')!;
    expect(result.toolUseResult.filePath).toBe('/Users/dev/scenario/x.txt');
    expect(result.toolUseResult.originalFile).toBe(before);
    const rec = changeRecordOf('s2-tool', result.toolUseResult, result.cwd)!;
    expect(rec.files).toEqual([
      {
        path: 'x.txt',
        operation: 'update',
        hunks: [{ old_start: 2, old_lines: 7, new_start: 2, new_lines: 7, lines: [' b', ' c', ' d', '-e', '+E', ' f', ' g', ' h'] }],
        lines_added: 1,
        lines_removed: 1,
        user_modified: false,
      },
    ]);
  });

  test('a Write from nothing is a create with its content; an unchanged file has no hunk', () => {
    const recs = lines({
      steps: [{ input: 'new' }, { call: { tool: { name: 'Write', input: {}, result: 'ok', changes: [{ path: 'n.md', before: '', after: 'one\ntwo\n' }] } } }],
    });
    const tur = recs.find((r) => r.uuid === 's2-result')!.toolUseResult;
    expect(tur).toMatchObject({ type: 'create', content: 'one\ntwo\n' });
    expect(changeRecordOf('t', tur, '/Users/dev/scenario')!.files[0]).toMatchObject({ operation: 'create', lines_added: 2 });
    expect(patchOf('same\n', 'same\n')).toEqual([]);
  });

  test("keys of a runtime aszcol does not collect are reported, by path and reason, never dropped; the plugin's keys are generated", () => {
    const scn = parseScenario(
      {
        langchain: { project: 'x' },
        langsmith: true,
        steps: [
          { input: 'go' },
          { call: { tool: { name: 'Bash', input: { command: 'sed -i s/a/b/ f' }, result: 'ok', changes: [{ path: 'f', before: 'a', after: 'b' }] } } },
          { call: { tool: { name: 'mcp__docs__find', input: {}, result: 'found', execution: { server: 'docs', source: 'project', duration: '20ms' } } } },
        ],
      },
      'reported',
    );
    expect(scn.ignored.map((i) => i.path)).toEqual(['reported.langchain', 'reported.langsmith']);
    expect(scn.ignored.every((i) => i.reason.startsWith('runtime not supported'))).toBe(true);
    // What only the plugin sees of these two calls is what the build writes for them.
    expect(generate(scn, { at: 0 }).plugin.map((c) => [c.tool.name, c.toolUseId])).toEqual([
      ['Bash', 's2-tool'],
      ['mcp__docs__find', 's3-tool'],
    ]);
  });

  test('an Edit names exactly one file, and a change is {path, before, after}', () => {
    const edit = (changes: unknown) => () => parseScenario({ steps: [{ call: { tool: { name: 'Edit', changes } } }] }, 'bad');
    expect(edit([])).toThrow(ScenarioError);
    expect(edit([{ path: 'a' }, { path: 'b' }])).toThrow('an Edit call changes one file, got 2');
    expect(edit([{ path: 'a', colour: 'red' }])).toThrow('unknown key "colour"');
  });
});
