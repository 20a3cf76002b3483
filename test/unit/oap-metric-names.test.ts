/**
 * What aszcol derives feeds the OAP's meters: every metric name and label set an `ai-agent` MAL
 * rule reads is on the points we build. The table is the rules' facts, read off the stored
 * `apache/skywalking` files (`oap-server/server-starter/src/main/resources/otel-rules/ai-agent/`):
 * the metric each rule's expression names, and the labels it sums by besides the resource's
 * `service_name` and `service_instance_id`.
 */
import { describe, expect, test } from '@jest/globals';
import { MCP_ATTRIBUTES, MCP_CALLS, MCP_DURATION, oapName, TOKEN_USAGE } from '../../src/otlp/metric-names.js';
import { encodeTokenUsage } from '../../src/otlp/token-usage.js';
import { otlpTypes } from '../../src/otlp/proto.js';

const RULES: { file: string; meter: string; metric: string; labels: string[] }[] = [
  { file: 'runtime-service.yaml', meter: 'meter_ai_agent_tokens', metric: 'claude_code_token_usage', labels: [] },
  { file: 'runtime-service.yaml', meter: 'meter_ai_agent_tokens_by_type', metric: 'claude_code_token_usage', labels: ['type'] },
  { file: 'runtime-service.yaml', meter: 'meter_ai_agent_tokens_by_model', metric: 'claude_code_token_usage', labels: ['model', 'type'] },
  { file: 'runtime-service.yaml', meter: 'meter_ai_agent_tokens_by_source', metric: 'claude_code_token_usage', labels: ['query_source', 'type'] },
  { file: 'runtime-service.yaml', meter: 'meter_ai_agent_cache_read_share', metric: 'claude_code_token_usage', labels: ['type'] },
  { file: 'runtime-instance.yaml', meter: 'meter_ai_agent_instance_tokens_by_model', metric: 'claude_code_token_usage', labels: ['model', 'type'] },
  { file: 'runtime-instance.yaml', meter: 'meter_ai_agent_instance_tokens_by_source', metric: 'claude_code_token_usage', labels: ['query_source', 'type'] },
  { file: 'mcp_endpoint.yaml', meter: 'meter_ai_agent_mcp_calls', metric: 'agent_mcp_calls', labels: ['mcp_server_name', 'mcp_tool_name'] },
  {
    file: 'mcp_endpoint.yaml',
    meter: 'meter_ai_agent_mcp_calls_by_outcome',
    metric: 'agent_mcp_calls',
    labels: ['outcome', 'mcp_server_name', 'mcp_tool_name'],
  },
  { file: 'mcp_endpoint.yaml', meter: 'meter_ai_agent_mcp_duration', metric: 'agent_mcp_duration', labels: ['mcp_server_name', 'mcp_tool_name'] },
];

/** The metric names and point attribute keys of a request, as the OAP spells them. */
function asOapSees(request: Buffer): Map<string, Set<string>> {
  const msg = otlpTypes().ExportMetricsServiceRequest.toObject(otlpTypes().ExportMetricsServiceRequest.decode(request)) as any;
  const out = new Map<string, Set<string>>();
  for (const rm of msg.resourceMetrics)
    for (const sm of rm.scopeMetrics)
      for (const m of sm.metrics) {
        const keys = out.get(oapName(m.name)) ?? out.set(oapName(m.name), new Set()).get(oapName(m.name))!;
        for (const p of m.sum.dataPoints) for (const a of p.attributes) keys.add(oapName(a.key));
      }
  return out;
}

describe('every OAP ai-agent meter is fed by what aszcol derives', () => {
  test('derived token usage: the name and every label the token rules sum by', () => {
    const seen = asOapSees(
      encodeTokenUsage('s-1', [
        { model: 'claude-sonnet-4-5', query_source: 'main', start_ms: 0, end_ms: 60_000, tokens: { input: 1, output: 2, cacheRead: 3, cacheCreation: 4 } },
      ]),
    );
    expect(oapName(TOKEN_USAGE)).toBe('claude_code_token_usage');
    for (const rule of RULES.filter((r) => r.metric === 'claude_code_token_usage')) {
      const labels = seen.get(rule.metric);
      expect({ meter: rule.meter, missing: rule.labels.filter((l) => !labels?.has(l)) }).toEqual({ meter: rule.meter, missing: [] });
    }
  });

  test('MCP calls and duration (derived with MCP): the names and labels mcp_endpoint.yaml reads', () => {
    const labels = new Set(Object.values(MCP_ATTRIBUTES).map(oapName));
    for (const rule of RULES.filter((r) => r.file === 'mcp_endpoint.yaml')) {
      expect([oapName(MCP_CALLS.name), oapName(MCP_DURATION.name)]).toContain(rule.metric);
      expect({ meter: rule.meter, missing: rule.labels.filter((l) => !labels.has(l)) }).toEqual({ meter: rule.meter, missing: [] });
    }
  });
});
