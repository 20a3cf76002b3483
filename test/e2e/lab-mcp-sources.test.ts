/**
 * Where each MCP server's configuration came from, as the real runtime tells the plugin. Claude
 * Code (through ../shared/lab) runs with this checkout's plugin, copied beside a `bin/` that leads
 * back here and given a server of its own in the plugin's `.mcp.json`, plus one server in each of
 * the user's `.claude.json`, the project's entry in it and the project's `.mcp.json`. The lab's MCP
 * server logs every call it answered (aszcol never reads that log), so each observation is held
 * to a call that really reached its server; the `--mcp-config` case (`dynamic`) is lab-plugin's.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { labRun } from '../helpers/lab.js';
import { REPO, SHARED } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { readSpool } from '../../src/storage/hook-spool.js';
import type { HookObservation } from '../../src/adapters/claude-code/hook-event.js';

afterAll(cleanupTemp);

/** Each server: the scope Claude Code should name, and where the test configures it. */
const SERVERS = {
  plugsrv: { tool: 'mcp__plugin_aszcol_plugsrv__echo', source: 'plugin', name: 'plugin:aszcol:plugsrv' },
  usersrv: { tool: 'mcp__usersrv__echo', source: 'user', name: 'usersrv' },
  localsrv: { tool: 'mcp__localsrv__echo', source: 'local', name: 'localsrv' },
  projsrv: { tool: 'mcp__projsrv__echo', source: 'project', name: 'projsrv' },
} as const;

describe('MCP server sources in the real Claude Code runtime', () => {
  const base = tempDir('aszcol-e2e-mcp-sources-');
  const home = join(base, 'home');
  const work = join(base, 'work');
  const root = join(base, 'data');
  let session = '';

  const server = (name: string) => ({
    type: 'stdio',
    command: process.execPath,
    args: [join(SHARED, 'lab', 'mcp-lab.mjs'), '--log', join(base, `${name}.jsonl`)],
  });

  beforeAll(async () => {
    // The plugin as installed, plus a server of its own; its hook command finds bin/aszcol.js two levels up.
    const plugin = join(base, 'pl', 'plugins', 'claude-code');
    cpSync(join(REPO, 'plugins', 'claude-code'), plugin, { recursive: true });
    symlinkSync(join(REPO, 'bin'), join(base, 'pl', 'bin'));
    writeFileSync(join(plugin, '.mcp.json'), JSON.stringify({ mcpServers: { plugsrv: server('plugsrv') } }));
    mkdirSync(home, { recursive: true });
    mkdirSync(work, { recursive: true });
    writeFileSync(
      join(home, '.claude.json'),
      JSON.stringify({
        mcpServers: { usersrv: server('usersrv') },
        projects: { [work]: { mcpServers: { localsrv: server('localsrv') }, hasTrustDialogAccepted: true } },
      }),
    );
    writeFileSync(join(work, '.mcp.json'), JSON.stringify({ mcpServers: { projsrv: server('projsrv') } }));
    const tools = Object.values(SERVERS).map((s) => ({ name: s.tool, input: { text: s.source } }));
    const script = join(base, 'script.json');
    writeFileSync(
      script,
      JSON.stringify([
        { when: { first_user_has: 'SOURCES', has_tool_result: false }, reply: { text: 'Asking every server.', tools } },
        { when: { first_user_has: 'SOURCES', has_tool_result: true }, reply: { text: 'Every server answered.' } },
      ]),
    );
    const run = await labRun({
      configDir: home,
      cwd: work,
      script,
      prompt: 'SOURCES please',
      tools: tools.map((t) => t.name).join(','),
      pluginDir: plugin,
      settings: JSON.stringify({ enableAllProjectMcpServers: true }),
      env: `ASZCOL_ROOT=${root}`,
    } as Parameters<typeof labRun>[0] & { pluginDir: string; settings: string });
    session = run.session_id;
  }, 300_000);

  test.each(Object.entries(SERVERS))('%s: the call reached its server, and both hooks name the scope Claude Code loaded it from', (name, want) => {
    const log = join(base, `${name}.jsonl`);
    expect(existsSync(log)).toBe(true);
    expect(readFileSync(log, 'utf8').split('\n').filter(Boolean)).toHaveLength(1);
    const seen = readSpool(root, session)
      .map((l) => l.value as HookObservation)
      .filter((o) => o.tool_name === want.tool);
    expect(seen.map((o) => o.event).sort()).toEqual(['tool_post', 'tool_pre']);
    for (const o of seen) expect(o.mcp).toMatchObject({ tool: 'echo', source: want.source, ...(want.name === name ? {} : { name: want.name }) });
  });
});
