/**
 * `metrics_match_the_plan`: the metrics a scenario's session pushes (derived, then sent over gRPC
 * and HTTP to the checker's receiver) against the scenario's own numbers. The plan is counted by
 * hand here; the property holds on a root built from the scenario, fails both ways when set false
 * there, and fails, naming the series, when the root was built from numbers the plan does not have.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { copyFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { CHECK_AT, ScenarioChecker } from '../../src/scenario/check.js';
import { metricsPlan } from '../../src/scenario/metrics-plan.js';
import { parseScenario, type Scenario } from '../../src/scenario/model.js';
import { evaluateProperty } from '../../src/scenario/properties.js';
import { ScenarioRoot } from '../../src/scenario/run.js';
import { generate } from '../../src/scenario/generate.js';
import { REPO } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const FILE = join(REPO, 'test', 'scenarios', 'metrics-plan.yaml');
const scenario = (): Scenario => parseScenario(parseYaml(readFileSync(FILE, 'utf8')), 'metrics-plan');

describe('the plan of metrics-plan.yaml', () => {
  test('each call once under its stream, the lost call not at all, each MCP call with its request-to-result time', () => {
    // main: two MCP calls (5/40/1000/200 and 3/12/default), the launch and the last text (defaults 2/10/900/100); the lost 999s never count.
    expect(metricsPlan(scenario())).toEqual({
      tokens: {
        'main/input': 5 + 3 + 2 + 2,
        'main/output': 40 + 12 + 10 + 10,
        'main/cacheRead': 1000 + 900 + 900 + 900,
        'main/cacheCreation': 200 + 100 + 100 + 100,
        'subagent/input': 7,
        'subagent/output': 30,
        'subagent/cacheRead': 50,
      },
      mcp: {
        'agent.mcp.calls/status/lookup/returned/main': 1,
        'agent.mcp.duration/status/lookup/returned/main': 250,
        'agent.mcp.calls/status/lookup/failed/main': 1,
        'agent.mcp.duration/status/lookup/failed/main': 2000,
      },
    });
  });
});

describe('the plan of metrics-result-step.yaml', () => {
  test('an MCP result given as its own step counts once, timed from the request record to that step’s result record', () => {
    const file = join(REPO, 'test', 'scenarios', 'metrics-result-step.yaml');
    const scn = parseScenario(parseYaml(readFileSync(file, 'utf8')), 'metrics-result-step');
    // By hand, interval 1 s: the first call's request record, then the injected record (+1 s), then
    // the result step (+1 s) whose result arrives 500 ms later; the second: its result step +1 s, result +1 s.
    expect(metricsPlan(scn).mcp).toEqual({
      'agent.mcp.calls/status/lookup/returned/main': 1,
      'agent.mcp.duration/status/lookup/returned/main': 2500,
      'agent.mcp.calls/status/lookup/failed/main': 1,
      'agent.mcp.duration/status/lookup/failed/main': 2000,
    });
  });

  test('a result step that is lost, or that answers no MCP call, plans nothing', () => {
    const scn = parseScenario(
      {
        steps: [
          { input: 'go' },
          { call: { tool: { id: 'm', name: 'mcp__s__t' } } },
          { result: { of: 'm', text: 'x' }, lost: true },
          { call: { tool: { id: 'b', name: 'Bash' } } },
          { result: { of: 'b', text: 'y' } },
        ],
      },
      'none',
    );
    expect(metricsPlan(scn).mcp).toEqual({});
  });
});

describe('metrics_match_the_plan, judged both ways', () => {
  test('true holds in both formats; false fails in both, since it holds', () => {
    const dir = tempDir();
    copyFileSync(FILE, join(dir, 'case.yaml'));
    writeFileSync(join(dir, 'case.expect.yaml'), 'properties: {metrics_match_the_plan: true}\n');
    expect(new ScenarioChecker(join(dir, 'case.yaml'), { formats: ['claude-code', 'sd'] }).run().map((r) => r.status)).toEqual(['passed', 'passed', 'passed']);
    writeFileSync(join(dir, 'case.expect.yaml'), 'properties: {metrics_match_the_plan: false}\n');
    const rs = new ScenarioChecker(join(dir, 'case.yaml'), { formats: ['claude-code', 'sd'] }).run();
    expect(rs.flatMap((r) => r.failures.map((f) => `${f.where}: ${String(f.got)}`))).toEqual([
      'claude-code: metrics_match_the_plan: holds',
      'sd: metrics_match_the_plan: holds',
    ]);
  });

  test('a root whose calls used other numbers than the plan says fails, naming each series over each transport', () => {
    const built = scenario();
    const first = built.steps[1] as { call: { usage?: object } };
    first.call.usage = { in: 5, out: 41, cache_read: 1000, cache_write: 200 };
    const dir = tempDir();
    const root = new ScenarioRoot(dir, 'sd', built, CHECK_AT);
    root.build();
    root.parse();
    const session = generate(built, { at: CHECK_AT }).session;
    const v = evaluateProperty('metrics_match_the_plan', { scn: scenario(), dir, session, format: 'sd', root, at: CHECK_AT });
    expect(v.map((x) => [x.where, x.expected, x.got])).toEqual([
      ['metrics_match_the_plan over grpc: claude_code.token.usage/main/output', 72, 73],
      ['metrics_match_the_plan over http: claude_code.token.usage/main/output', 72, 73],
    ]);
  });
});
