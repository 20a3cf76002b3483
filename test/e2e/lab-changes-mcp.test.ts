/**
 * Against the real client: Claude Code (through ../shared/lab) edits a file and calls the lab's
 * MCP server. The workspace changes come from the transcript alone and are held against what the
 * script asked the runtime to write; the MCP calls are held against the lab server's own log of
 * each call (its start, end and outcome), which aszcol never reads.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { labRun, type LabOptions } from '../helpers/lab.js';
import { collectAndParse, SHARED, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { foldOf } from '../helpers/parse.js';
import { ViewCatalog } from '../../src/extensions/view/catalog.js';
import { loadChain } from '../../src/storage/chain.js';
import { deriveTokenUsage } from '../../src/processors/token-metrics/derive.js';
import { PrometheusExporter } from '../../src/exporters/prometheus/exporter.js';
import type { PrometheusExporterConfig } from '../../src/exporters/prometheus/config.js';
import type { ComponentSettings, PassContext } from '../../src/component/component.js';

afterAll(cleanupTemp);

const WORK_SCRIPT = join(SHARED, 'lab', 'scripts', 'work.json');

interface McpLogLine {
  tool: string;
  started_at: string;
  ended_at: string;
  is_error: boolean;
}

describe('workspace changes and MCP calls of sessions the real Claude Code wrote', () => {
  const base = tempDir('aszcol-e2e-changes-');
  const home = join(base, 'home');
  const root = join(base, 'data');
  const mcpLog = join(base, 'mcp.jsonl');
  let edit = '';
  let mcp = '';

  beforeAll(async () => {
    const config = writeConfig(base, root, join(home, 'projects'));
    edit = (await labRun({ configDir: home, cwd: join(base, 'work'), script: WORK_SCRIPT, prompt: 'EDITFILE please', tools: 'Write,Edit' })).session_id;
    const withMcp: LabOptions & { mcp: string } = { configDir: home, cwd: join(base, 'work-mcp'), script: WORK_SCRIPT, prompt: 'MCPCALL please', mcp: mcpLog };
    mcp = (await labRun(withMcp)).session_id;
    await collectAndParse(config);
  }, 180_000);

  test('EDITFILE: a Write and an Edit are two changes to notes.txt, +5 −1, each on the step that made it', () => {
    const answer = new ViewCatalog(root).changes(edit);
    expect(answer.totals).toEqual({ changes: 2, lines_added: 5, lines_removed: 1, files: 1 });
    const [write, editing] = answer.changes;
    // The script's Write: three lines; its Edit: "beta" replaced by two lines.
    expect(write).toMatchObject({ file: 'notes.txt', operation: 'create', lines_added: 3, lines_removed: 0, user_modified: false, captured_by: 'claude-code' });
    expect(write!.diff).toBe('@@ -0,0 +1,3 @@\n+alpha\n+beta\n+gamma');
    expect(editing).toMatchObject({ file: 'notes.txt', operation: 'update', lines_added: 2, lines_removed: 1, user_modified: false });
    expect(editing!.hunks[0]!.lines).toEqual([' alpha', '-beta', '+beta two', '+beta three', ' gamma']);
    // Each on its own step, which the fold holds as the Write and the Edit tool; one talk holds both.
    const fold = foldOf(root, edit);
    expect(fold.node(write!.step!)?.attrs?.name).toBe('Write');
    expect(fold.node(editing!.step!)?.attrs?.name).toBe('Edit');
    expect(write!.step).not.toBe(editing!.step);
    expect(answer.talks).toEqual([{ talk: write!.talk, totals: answer.totals }]);
  });

  test('the round header carries the totals the OAP reads, with asz 0.6 meaning', () => {
    const head = loadChain(root, edit).fold.head!;
    expect({ changes: head.changes, lines_added: head.lines_added, lines_removed: head.lines_removed }).toEqual({
      changes: 2,
      lines_added: 5,
      lines_removed: 1,
    });
    expect(loadChain(root, mcp).fold.head).toMatchObject({ changes: 0, lines_added: 0, lines_removed: 0 });
  });

  test('MCPCALL: every call the lab server logged is a step with its server, tool, outcome and a duration no shorter than the server took', () => {
    const logged = readFileSync(mcpLog, 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as McpLogLine);
    expect(logged.map((l) => l.tool).sort()).toEqual(['echo', 'fail', 'slow']);
    const steps = foldOf(root, mcp).nodes.filter((n) => typeof n.attrs?.mcp_tool === 'string');
    expect(steps).toHaveLength(logged.length);
    for (const l of logged) {
      const step = steps.find((s) => s.attrs!.mcp_tool === l.tool)!;
      expect(step.attrs).toMatchObject({
        name: `mcp__lab__${l.tool}`,
        mcp_server: 'lab',
        outcome: l.is_error ? 'failed' : 'returned',
        duration_from: 'request_to_result_record',
      });
      const serverMs = Date.parse(l.ended_at) - Date.parse(l.started_at);
      expect(step.attrs!.duration_ms as number).toBeGreaterThanOrEqual(serverMs);
    }
    // The slow tool waited 400 ms inside the server; the step's duration cannot be shorter.
    expect(steps.find((s) => s.attrs!.mcp_tool === 'slow')!.attrs!.duration_ms as number).toBeGreaterThanOrEqual(400);
    expect(steps.filter((s) => s.attrs!.outcome === 'failed')).toHaveLength(1);
  });

  test('the metrics count 3 MCP calls, one failed, with the milliseconds of the steps; the prometheus exporter shows them', async () => {
    const derived = await deriveTokenUsage({ root, lookbackMs: 0, graceMs: 0, session: mcp });
    expect(derived.problems).toEqual([]);
    expect(derived.mcp_calls).toBe(3);
    const prom = new PrometheusExporter({} as PrometheusExporterConfig, { id: 'prometheus', storageRoot: root, metricsSource: 'derived' } as ComponentSettings);
    await prom.send({} as PassContext);
    const text = await prom.registry.metrics();
    const series = (name: string) =>
      text
        .split('\n')
        .filter((l) => l.startsWith(`${name}{`))
        .map((l) => ({ labels: l.slice(l.indexOf('{'), l.indexOf('}') + 1), value: Number(l.slice(l.lastIndexOf(' ') + 1)) }));
    const calls = series('agent_mcp_calls_total');
    expect(calls.reduce((n, c) => n + c.value, 0)).toBe(3);
    expect(calls.filter((c) => c.labels.includes('outcome="failed"'))).toEqual([{ labels: expect.stringContaining('mcp_tool_name="fail"'), value: 1 }]);
    expect(calls.every((c) => c.labels.includes('mcp_server_name="lab"') && c.labels.includes(`session_id="${mcp}"`))).toBe(true);
    // The summed milliseconds are the steps' own durations, no more and no less.
    const steps = foldOf(root, mcp).nodes.filter((n) => typeof n.attrs?.mcp_tool === 'string');
    const stepMs = steps.reduce((n, s) => n + (s.attrs!.duration_ms as number), 0);
    expect(series('agent_mcp_duration_milliseconds_total').reduce((n, c) => n + c.value, 0)).toBe(stepMs);
  });
});
