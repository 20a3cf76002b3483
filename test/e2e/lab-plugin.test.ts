/**
 * The plugin inside the real runtime: Claude Code (through ../shared/lab) loads
 * `plugins/claude-code` with `--plugin-dir`, and its hooks run `bin/aszcol.js hook` for real. The
 * MCP calls are held against the lab server's own log of each call (start, end, outcome), which
 * aszcol never reads; the same MCPCALL run without the plugin shows what the transcript alone gives.
 *
 * The MCPCALL run with the plugin has the local receiver's hook intake listening (the service's
 * path); the EDITFILE and SLOWTOOL runs have none, so their hooks append to the spool themselves.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { labRun, WORK_SCRIPT, type LabOptions } from '../helpers/lab.js';
import { REPO, runCli, writeConfig } from '../helpers/cli.js';
import { launchChromium } from '../helpers/browser.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { foldOf } from '../helpers/parse.js';
import { HookIntake } from '../../src/receivers/claude-code-local/hook-intake.js';
import { hookLogPath } from '../../src/storage/hook-spool.js';
import { listLanded } from '../../src/storage/landed-files.js';
import { verifyRoot } from '../../src/storage/verify.js';
import { ViewExtension, type ViewConfig } from '../../src/extensions/view/extension.js';
import type { ExecutionsAnswer } from '../../src/extensions/view/executions.js';

afterAll(cleanupTemp);

interface McpLogLine {
  tool: string;
  started_at: string;
  ended_at: string;
  is_error: boolean;
}

type PluginRun = LabOptions & { mcp?: string; pluginDir?: string; env?: string };

describe('the plugin in the real Claude Code runtime', () => {
  const base = tempDir('aszcol-e2e-plugin-');
  const home = join(base, 'home');
  const root = join(base, 'data');
  const plugin = join(REPO, 'plugins', 'claude-code');
  const mcpLog = join(base, 'mcp.jsonl');
  const ids = { mcp: '', mcpBare: '', edit: '', slow: '' };
  let intakeAccepted = 0;
  let view: ViewExtension;
  const tools = async (id: string) => (await (await fetch(`http://${view.address()}/api/c/${id}/tools`)).json()) as ExecutionsAnswer;

  beforeAll(async () => {
    const config = writeConfig(base, root, join(home, 'projects'));
    const withPlugin = (cwd: string, prompt: string, extra: Partial<PluginRun> = {}): PluginRun => ({
      configDir: home,
      cwd: join(base, cwd),
      script: WORK_SCRIPT,
      prompt,
      pluginDir: plugin,
      env: `ASZCOL_ROOT=${root}`,
      ...extra,
    });
    const intake = new HookIntake(root, '127.0.0.1', 0, () => undefined);
    await intake.start();
    try {
      ids.mcp = (await labRun(withPlugin('work-mcp', 'MCPCALL please', { mcp: mcpLog }))).session_id;
    } finally {
      intakeAccepted = intake.accepted;
      await intake.stop();
    }
    const bare: PluginRun = { configDir: home, cwd: join(base, 'work-bare'), script: WORK_SCRIPT, prompt: 'MCPCALL please', mcp: join(base, 'mcp-bare.jsonl') };
    ids.mcpBare = (await labRun(bare)).session_id;
    ids.edit = (await labRun(withPlugin('work-edit', 'EDITFILE please', { tools: 'Write,Edit' }))).session_id;
    ids.slow = (await labRun(withPlugin('work-slow', 'SLOWTOOL please', { tools: 'Bash' }))).session_id;
    expect((await runCli(['collect', '--once', '--config', config])).code).toBe(0);
    const p = await runCli(['parse', '--config', config]);
    expect(p.code).toBe(0);
    view = new ViewExtension({ endpoint: '127.0.0.1:0', allowedHosts: [] } as ViewConfig, { storageRoot: root });
    await view.start();
  }, 300_000);

  afterAll(async () => view?.shutdown());

  test("the running service took the MCPCALL run's observations; the only problem a hook may log is a service slower than its budget", () => {
    expect(intakeAccepted).toBeGreaterThan(0);
    const log = existsSync(hookLogPath(root)) ? readFileSync(hookLogPath(root), 'utf8').split('\n').filter(Boolean) : [];
    // A post that timed out was appended by the hook itself (and perhaps by the service too: the reader drops the repeat).
    for (const line of log) expect(line).toMatch(/via spool .*: the service did not answer within \d+ ms$/);
  });

  test("MCPCALL with the plugin: each call the lab server logged has the runtime's measured duration, no shorter than the server took, and its outcome", async () => {
    const logged = readFileSync(mcpLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as McpLogLine);
    expect(logged.map((l) => l.tool).sort()).toEqual(['echo', 'fail', 'slow']);
    const answer = await tools(ids.mcp);
    expect(answer.plugin).toMatchObject({ observations: 8, unresolved: [] });
    expect(answer.plugin.session_ended).toBeDefined();
    // The collect landed every spooled line as the session's execution and changes records: none is read from the spool.
    expect(answer.plugin.read_from.spool_not_landed).toBe(0);
    expect(answer.plugin.read_from.landed).toBeGreaterThanOrEqual(8);
    const kinds = listLanded(root, ids.mcp).map((f) => f.prefix);
    expect(kinds).toContain('execution');
    expect(verifyRoot(root, ids.mcp).problems).toEqual([]);
    const mcpRows = answer.tools.filter((t) => t.name?.startsWith('mcp__'));
    expect(mcpRows).toHaveLength(3);
    for (const l of logged) {
      const row = mcpRows.find((t) => t.name === `mcp__lab__${l.tool}`)!;
      const serverMs = Date.parse(l.ended_at) - Date.parse(l.started_at);
      expect(row.execution).toMatchObject({
        source: 'plugin',
        join: 'exact_unique',
        duration_from: 'hook_duration_ms',
        outcome: l.is_error ? 'failed' : 'returned',
        mcp_server: 'lab',
        mcp_tool: l.tool,
      });
      expect(row.execution!.duration_ms!).toBeGreaterThanOrEqual(serverMs);
      // The hook before ran before the server started, the hook after once it had answered.
      expect(row.execution!.hook_span_ms!).toBeGreaterThanOrEqual(serverMs);
      expect(row.execution!.after_session_end).toBeUndefined();
      // The lab gives the server with --mcp-config, which the runtime itself calls `dynamic` in the hook's input.
      expect(row.execution!.mcp_source).toBe('dynamic');
    }
    expect(mcpRows.find((t) => t.name === 'mcp__lab__slow')!.execution!.duration_ms!).toBeGreaterThanOrEqual(400);
  });

  test("MCPCALL without the plugin: the same three steps, with only the transcript's request-to-result time and no measured execution", async () => {
    const answer = await tools(ids.mcpBare);
    expect(answer.plugin).toEqual({ observations: 0, read_from: { landed: 0, spool_not_landed: 0 }, unresolved: [] });
    const mcpRows = answer.tools.filter((t) => t.name?.startsWith('mcp__'));
    expect(mcpRows).toHaveLength(3);
    expect(mcpRows.every((t) => t.execution === undefined)).toBe(true);
    const steps = foldOf(root, ids.mcpBare).nodes.filter((n) => typeof n.attrs?.mcp_tool === 'string');
    expect(steps.map((s) => s.attrs!.duration_from)).toEqual(['request_to_result_record', 'request_to_result_record', 'request_to_result_record']);
  });

  test("EDITFILE with the plugin: the Write and the Edit are observed as returned calls; the changes stay the transcript's, not counted twice", async () => {
    const answer = await tools(ids.edit);
    expect(answer.plugin.unresolved).toEqual([]);
    const edits = answer.tools.filter((t) => t.name === 'Write' || t.name === 'Edit');
    expect(edits.map((t) => t.name)).toEqual(['Write', 'Edit']);
    for (const t of edits) expect(t.execution).toMatchObject({ source: 'plugin', outcome: 'returned', duration_from: 'hook_duration_ms' });
    const changes = (await (await fetch(`http://${view.address()}/api/c/${ids.edit}/changes`)).json()) as { totals: object };
    expect(changes.totals).toEqual({ changes: 2, lines_added: 5, lines_removed: 1, files: 1 });
  });

  test('SLOWTOOL with the plugin: the Bash run of sleep 0.5 measures at least 500 ms, and the shallow scan saw nothing change', async () => {
    const answer = await tools(ids.slow);
    const bash = answer.tools.find((t) => t.name === 'Bash')!;
    expect(bash.execution!.duration_ms!).toBeGreaterThanOrEqual(500);
    expect(bash.execution).toMatchObject({ outcome: 'returned', shell_changed: [], shell_scan_complete: true });
  });

  test('the page: the MCPCALL conversation has an MCP lane with its three calls, one failed; the EDITFILE one has none', async () => {
    const ctx = await launchChromium();
    try {
      const page = await ctx.newPage();
      await page.goto(`http://${view.address()}/c/${ids.mcp}`);
      await page.waitForSelector('body[data-ready=conversation]');
      const timeline = page.locator('[data-testid=timeline]');
      expect(await timeline.getAttribute('data-mcp-calls')).toBe('3');
      expect(await timeline.locator('canvas').getAttribute('aria-label')).toMatch(/on 2 lanes, .*3 MCP calls \(1 failed\)/);
      await page.goto(`http://${view.address()}/c/${ids.edit}`);
      await page.waitForSelector('body[data-ready=conversation]');
      expect(await timeline.getAttribute('data-mcp-calls')).toBe('0');
    } finally {
      await ctx.close();
    }
  });
});
