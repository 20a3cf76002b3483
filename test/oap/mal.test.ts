/**
 * The test OAP's MAL path: the rule files' expressions, parsed, send each sample point to the
 * meters SkyWalking would feed, and a point that feeds nothing says why. The expected meters are
 * written out here by hand from the rule files, so a parser that misread them would disagree.
 */
import { describe, expect, test } from '@jest/globals';
import { meterRules, nodeLabels, parseFilter, routeResourceMetrics } from './mal.js';
import type { KeyValue } from './lal.js';

const s = (key: string, v: string): KeyValue => ({ key, value: { value: 'stringValue', stringValue: v } });
const IDENTITY = [s('service.name', 'Claude Code'), s('service.instance.id', 'ann@box'), s('service.layer', 'AI_AGENT')];
const DELTA = 1,
  CUMULATIVE = 2;

function request(resource: KeyValue[], name: string, attributes: KeyValue[], opts: { temporality?: number; monotonic?: boolean; value?: number } = {}) {
  return {
    resource: { attributes: resource },
    scopeMetrics: [
      {
        metrics: [
          {
            name,
            sum: {
              aggregationTemporality: opts.temporality ?? DELTA,
              isMonotonic: opts.monotonic ?? true,
              dataPoints: [{ attributes, timeUnixNano: '1764576000000000000', value: 'asDouble', asDouble: opts.value ?? 7 }],
            },
          },
        ],
      },
    ],
  };
}

const rules = meterRules();
const route = (rm: unknown) => routeResourceMetrics(rules, rm);
const TOKEN_ATTRS = [s('session.id', 'S'), s('model', 'claude-x'), s('type', 'input'), s('query_source', 'main')];
const TOKEN_METERS = ['tokens', 'tokens_by_type', 'tokens_by_model', 'tokens_by_source', 'cache_read_share'];

describe('MAL rules of the AI_AGENT layer, as the test OAP applies them', () => {
  test('every rule of the three files is a meter, named <metricPrefix>_<name>', () => {
    const meters = rules.map((r) => r.meter);
    expect(meters).toHaveLength(12 + 12 + 3);
    expect(meters).toEqual(
      expect.arrayContaining(['meter_ai_agent_tokens_by_model', 'meter_ai_agent_instance_tokens', 'meter_ai_agent_mcp_calls', 'meter_ai_agent_edit_decisions']),
    );
    expect(rules.find((r) => r.meter === 'meter_ai_agent_instance_tokens')!.entity).toEqual(['service_name', 'service_instance_id']);
  });

  test('a token point under our identity feeds the five token meters of the service and of the instance', () => {
    const [p] = route(request(IDENTITY, 'claude_code.token.usage', TOKEN_ATTRS));
    expect(p!.why).toEqual([]);
    expect([...p!.feeds].sort()).toEqual(
      [...TOKEN_METERS.map((m) => `meter_ai_agent_${m}`), ...TOKEN_METERS.map((m) => `meter_ai_agent_instance_${m}`)].sort(),
    );
    expect(p!.labels).toMatchObject({ service_layer: 'AI_AGENT', service_name: 'Claude Code', service_instance_id: 'ann@box', session_id: 'S' });
  });

  test("an output token point is in neither of cache_read_share's reads", () => {
    const [p] = route(request(IDENTITY, 'claude_code.token.usage', [...TOKEN_ATTRS.filter((a) => a.key !== 'type'), s('type', 'output')]));
    expect(p!.feeds).not.toContain('meter_ai_agent_cache_read_share');
    expect(p!.feeds).toContain('meter_ai_agent_tokens_by_type');
  });

  test("a point under Claude Code's own resource (no layer) feeds nothing, and says the filter is why", () => {
    const [p] = route(request([s('service.name', 'claude-code')], 'claude_code.token.usage', TOKEN_ATTRS));
    expect(p!.feeds).toEqual([]);
    expect(p!.why.length).toBe(10);
    expect(p!.why[0]).toMatch(/filter wants service_layer == 'AI_AGENT'/);
  });

  test('without an instance the service meters are fed and the instance meters are not', () => {
    const [p] = route(
      request(
        IDENTITY.filter((a) => a.key !== 'service.instance.id'),
        'claude_code.token.usage',
        TOKEN_ATTRS,
      ),
    );
    expect(p!.feeds.every((m) => !m.includes('_instance_'))).toBe(true);
    expect(p!.feeds).toContain('meter_ai_agent_tokens');
  });

  test('a point without a label its rule sums by does not feed that rule', () => {
    const [p] = route(request(IDENTITY, 'claude_code.cost.usage', [s('session.id', 'S')]));
    expect(p!.feeds).toEqual([]);
    expect(p!.why.join('\n')).toMatch(/summed by model/);
    const [q] = route(request(IDENTITY, 'claude_code.cost.usage', [s('model', 'claude-x')]));
    expect(q!.feeds.sort()).toEqual(['meter_ai_agent_cost_by_model', 'meter_ai_agent_instance_cost_by_model']);
  });

  test('an MCP call point feeds the endpoint meters; a point of a name no rule reads feeds nothing', () => {
    const [p] = route(request(IDENTITY, 'agent.mcp.calls', [s('mcp.server.name', 'lab'), s('mcp.tool.name', 'echo'), s('outcome', 'returned')]));
    expect(p!.feeds.sort()).toEqual(['meter_ai_agent_mcp_calls', 'meter_ai_agent_mcp_calls_by_outcome']);
    const [q] = route(request(IDENTITY, 'agent.mcp.calls', [s('mcp.server.name', 'lab')]));
    expect(q!.feeds).toEqual([]);
    expect(q!.why.join('\n')).toMatch(/no mcp_tool_name/);
    const [r] = route(request(IDENTITY, 'claude_code.tokens.used', TOKEN_ATTRS));
    expect(r!.why).toEqual(['no ai-agent rule reads claude_code_tokens_used']);
  });

  test('a sum of unspecified temporality is dropped, and a cumulative counter is not read as the deltas the rules sum', () => {
    expect(route(request(IDENTITY, 'claude_code.token.usage', TOKEN_ATTRS, { temporality: 0 }))[0]!.why[0]).toMatch(/unspecified temporality/);
    expect(route(request(IDENTITY, 'claude_code.token.usage', TOKEN_ATTRS, { temporality: CUMULATIVE }))[0]!.feeds).toEqual([]);
  });

  test("resource attributes become labels with dots as underscores, the first of a name kept; a point's own attributes win", () => {
    expect(nodeLabels([s('service.layer', 'AI_AGENT'), s('service_layer', 'OTHER'), s('service.name', 'X')])).toEqual({
      service_layer: 'AI_AGENT',
      service_name: 'X',
      job_name: 'X',
    });
    const [p] = route(request(IDENTITY, 'claude_code.token.usage', [...TOKEN_ATTRS, s('service.name', 'spoofed')]));
    expect(p!.labels.service_name).toBe('spoofed');
  });

  test('a filter of a form the parser does not know is refused rather than passed', () => {
    expect(parseFilter("{ tags -> tags.service_layer == 'AI_AGENT' }")).toEqual({ service_layer: 'AI_AGENT' });
    expect(() => parseFilter("{ tags -> tags.service_layer != 'AI_AGENT' }")).toThrow(/unreadable/);
    expect(() => parseFilter("{ tags -> tags.a == 'x' || tags.b == 'y' }")).toThrow(/unreadable/);
  });
});
