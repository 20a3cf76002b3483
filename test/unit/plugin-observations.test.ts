/**
 * What the aszcol plugin's hooks leave for a call, in a scenario and in the real hook: the MCP
 * server's configuration scope as Claude Code reads its files, and a scenario's `execution` block
 * and a Bash call's `changes` written as the observations the hooks would spool, joined back to
 * their steps the way the view's `/tools` answer joins them.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, writeFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { mcpServerSource, userConfigPath } from '../../src/adapters/claude-code/mcp-server-source.js';
import { observeHookInput } from '../../src/adapters/claude-code/hook-event.js';
import { joinExecutions } from '../../src/assemble/tool-executions.js';
import { runHook } from '../../src/cli/hook.js';
import { CHECK_AT, ScenarioChecker } from '../../src/scenario/check.js';
import { generate } from '../../src/scenario/generate.js';
import { parseScenario, ScenarioError } from '../../src/scenario/model.js';
import { ScenarioRoot } from '../../src/scenario/run.js';
import { readSpool } from '../../src/storage/hook-spool.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const servers = (...names: string[]) => ({ mcpServers: Object.fromEntries(names.map((n) => [n, { command: n }])) });

describe("an MCP server's source, as Claude Code reads its scopes", () => {
  const cwd = '/work/app/src';
  const user = { ...servers('shared', 'mine'), projects: { '/work/app': servers('mine') } };
  const project = (dir: string) => (dir === '/work/app' ? servers('shared', 'team') : undefined);

  test('local (the project entry of .claude.json) before project (.mcp.json) before user (the top of .claude.json)', () => {
    expect(mcpServerSource('mine', cwd, { userConfig: user, projectConfig: project })).toBe('local');
    expect(mcpServerSource('shared', cwd, { userConfig: user, projectConfig: project })).toBe('project');
    expect(mcpServerSource('team', cwd, { userConfig: user, projectConfig: project })).toBe('project');
    expect(mcpServerSource('shared', '/elsewhere', { userConfig: user, projectConfig: project })).toBe('user');
  });

  test('a server no file defines (given on the command line, or a plugin’s) has no source: left out, not guessed', () => {
    expect(mcpServerSource('cli-only', cwd, { userConfig: user, projectConfig: project })).toBeUndefined();
    expect(mcpServerSource('mine', cwd, { userConfig: undefined, projectConfig: () => undefined })).toBeUndefined();
  });

  test('.claude.json lives in CLAUDE_CONFIG_DIR when it is set', () => {
    expect(userConfigPath({ CLAUDE_CONFIG_DIR: '/cfg' }, '/home/dev')).toBe('/cfg/.claude.json');
    expect(userConfigPath({}, '/home/dev')).toBe('/home/dev/.claude.json');
  });

  test('aszcol hook writes the source it found into the observation it spools', async () => {
    const root = tempDir();
    const config = tempDir();
    const project = join(tempDir(), 'app');
    mkdirSync(project, { recursive: true });
    writeFileSync(join(config, '.claude.json'), JSON.stringify(servers('lab')));
    writeFileSync(join(project, '.mcp.json'), JSON.stringify(servers('team')));
    const run = async (tool: string, name: string) => {
      const stdin = new PassThrough();
      stdin.end(JSON.stringify({ session_id: 'sess-1', hook_event_name: 'PostToolUse', tool_name: name, tool_use_id: tool, tool_input: {}, cwd: project }));
      return (await runHook({ root, stdin, env: { CLAUDE_CONFIG_DIR: config }, budgetMs: 5000 })).observation;
    };
    expect((await run('t1', 'mcp__lab__echo')).mcp).toEqual({ server: 'lab', tool: 'echo', source: 'user' });
    expect((await run('t2', 'mcp__team__ask')).mcp).toEqual({ server: 'team', tool: 'ask', source: 'project' });
    expect((await run('t3', 'mcp__nowhere__x')).mcp).toEqual({ server: 'nowhere', tool: 'x' });
    expect(readSpool(root, 'sess-1').map((l) => (l.value as { mcp?: { source?: string } }).mcp?.source)).toEqual(['user', 'project', undefined]);
  });
});

describe("an MCP server's source as the runtime names it in the hook's input", () => {
  // What Claude Code 2.1.328 handed a plugin's hooks in the lab, one server per scope (name, source).
  const MEASURED: [string, { name: string; source: string }, { server: string; tool: string; source: string; name?: string }][] = [
    ['mcp__lab__echo', { name: 'lab', source: 'dynamic' }, { server: 'lab', tool: 'echo', source: 'dynamic' }],
    [
      'mcp__plugin_probe_plugsrv__echo',
      { name: 'plugin:probe:plugsrv', source: 'plugin' },
      { server: 'plugin_probe_plugsrv', tool: 'echo', source: 'plugin', name: 'plugin:probe:plugsrv' },
    ],
    ['mcp__usersrv__echo', { name: 'usersrv', source: 'user' }, { server: 'usersrv', tool: 'echo', source: 'user' }],
    ['mcp__localsrv__echo', { name: 'localsrv', source: 'local' }, { server: 'localsrv', tool: 'echo', source: 'local' }],
    ['mcp__projsrv__echo', { name: 'projsrv', source: 'project' }, { server: 'projsrv', tool: 'echo', source: 'project' }],
  ];
  const input = (tool: string, mcp_server: unknown, id = 't1') =>
    JSON.stringify({ session_id: 'sess-2', hook_event_name: 'PostToolUse', tool_name: tool, tool_use_id: id, tool_input: {}, cwd: '/w', mcp_server });

  test.each(MEASURED)('%s: the observation keeps the scope the runtime named, and its own name of the server when it differs', (tool, given, want) => {
    expect(observeHookInput(Buffer.from(input(tool, given)), '2026-12-01T10:00:00.000Z').mcp).toEqual(want);
  });

  test('the runtime’s word wins over the files, and a source that is no scope word is not kept: the files answer then', async () => {
    const root = tempDir();
    const config = tempDir();
    writeFileSync(join(config, '.claude.json'), JSON.stringify(servers('lab')));
    const run = async (id: string, given: unknown) => {
      const stdin = new PassThrough();
      stdin.end(input('mcp__lab__echo', given, id));
      return (await runHook({ root, stdin, env: { CLAUDE_CONFIG_DIR: config }, budgetMs: 5000 })).observation.mcp;
    };
    expect(await run('a', { name: 'lab', source: 'dynamic' })).toEqual({ server: 'lab', tool: 'echo', source: 'dynamic' });
    expect(await run('b', { name: 'lab', source: 'Not A Scope!' })).toEqual({ server: 'lab', tool: 'echo', source: 'user' });
    expect(await run('c', { name: 'lab', source: 7 })).toEqual({ server: 'lab', tool: 'echo', source: 'user' });
    expect(await run('d', 'lab')).toEqual({ server: 'lab', tool: 'echo', source: 'user' });
  });
});

describe("a scenario's plugin observations", () => {
  const SCENARIO = {
    steps: [
      { input: 'check the status, then write the notes' },
      {
        call: {
          tool: {
            id: 'm1',
            name: 'mcp__status__lookup',
            input: { service: 'api' },
            result: { text: 'server unreachable', failed: true },
            execution: { server: 'status', source: 'user', duration: '1500ms', twice: true },
          },
        },
      },
      {
        call: {
          tool: {
            id: 'b1',
            name: 'Bash',
            input: { command: 'make notes' },
            result: 'done',
            changes: [
              { path: 'NOTES.md', before: '', after: '# notes\n' },
              { path: 'docs/deep.md', before: 'a\n', after: 'b\n' },
            ],
          },
        },
      },
      { call: { text: 'The server was unreachable; the notes are written.' } },
    ],
  };

  function built() {
    const scn = parseScenario(SCENARIO, 'plugin');
    const root = new ScenarioRoot(join(tempDir(), 'cc'), 'claude-code', scn, CHECK_AT);
    root.build();
    return { root, session: generate(scn, { at: CHECK_AT }).session };
  }

  test('the hooks ran before and after each call; the runtime handed the failure hook its event twice', () => {
    const { root, session } = built();
    const lines = readSpool(root.dir, session).map((l) => l.value as { event: string; tool: string; native_event: string });
    expect(lines.map((l) => `${l.tool} ${l.native_event}`)).toEqual([
      'm1 PreToolUse',
      'm1 PostToolUseFailure',
      'm1 PostToolUseFailure',
      'b1 PreToolUse',
      'b1 PostToolUse',
    ]);
  });

  test('joined to the steps: one failed MCP call with its server, source and duration; the Bash call shows only the top-level file the shallow scan sees', () => {
    const { root, session } = built();
    const j = joinExecutions(new Set(['m1', 'b1']), readSpool(root.dir, session));
    expect(j.unresolved).toEqual([]);
    expect(j.executions.get('m1')).toMatchObject({
      join: 'exact_unique',
      outcome: 'failed',
      mcp_server: 'status',
      mcp_tool: 'lookup',
      mcp_source: 'user',
      duration_ms: 1500,
      error: 'server unreachable',
    });
    // docs/deep.md changed below the working directory's first level, where the plugin does not look.
    expect(j.executions.get('b1')).toMatchObject({ outcome: 'returned', shell_changed: ['NOTES.md'], shell_scan_complete: true });
  });

  test('a second build of the same scenario appends nothing: each observation is written once', () => {
    const { root, session } = built();
    const before = readSpool(root.dir, session).length;
    root.build();
    expect(readSpool(root.dir, session)).toHaveLength(before);
  });

  test('an execution block on a tool that is no MCP call, or with a source Claude Code has no word for, is refused with its path', () => {
    const bad =
      (execution: object, name = 'mcp__s__t') =>
      () =>
        parseScenario({ steps: [{ call: { tool: { name, result: 'x', execution } } }] }, 'bad');
    expect(bad({ server: 's' }, 'Bash')).toThrow(ScenarioError);
    expect(bad({ server: 's' }, 'Bash')).toThrow(/bad.steps\[0\].call.tool.execution/);
    expect(bad({ server: 's', source: 'global' })).toThrow(/must be one of user, project, local/);
    expect(bad({ server: 's', colour: 'red' })).toThrow(/unknown key "colour"/);
  });

  test("a checkpoint's view counts of executions fail when the plugin saw otherwise, and pass when it saw that", () => {
    const dir = tempDir();
    writeFileSync(join(dir, 'case.yaml'), stringify(SCENARIO));
    const run = (view: object) => {
      writeFileSync(join(dir, 'case.expect.yaml'), stringify({ checkpoints: { final: { view } } }));
      return new ScenarioChecker(join(dir, 'case.yaml'), { formats: ['sd'] }).run()[0]!;
    };
    expect(run({ executions: 2, executions_joined: 2, outcomes: { failed: 1, returned: 1 } }).status).toBe('passed');
    const wrong = run({ executions: 3, outcomes: { returned: 2 } });
    expect(wrong.status).toBe('failed');
    expect(wrong.failures.map((f) => [f.where, f.got])).toEqual([
      ['sd: final.view.executions', 2],
      ['sd: final.view.outcomes', { failed: 1, returned: 1 }],
    ]);
  });
});
