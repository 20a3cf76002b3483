/**
 * The metrics aszcol derives, named as the SkyWalking OAP's `ai-agent` MAL rules read them
 * (`otel-rules/ai-agent/runtime-service.yaml`, `runtime-instance.yaml`, `mcp_endpoint.yaml`).
 * The OAP turns each dot of a metric or attribute name into an underscore and keeps a point for
 * a rule only when the name and every label the rule sums by are there, so these names are the
 * contract; a test holds them to the rules' facts.
 *
 * Token usage is `claude_code.token.usage` (token-usage.ts), not asz 0.6's documented
 * `agent.token.usage`, which no stored rule reads.
 */
import { METRIC_NAME as TOKEN_USAGE } from './token-usage.js';

export { TOKEN_USAGE };

/** Calls to MCP servers, one per call, a monotonic delta sum of doubles (asz 0.6, `docs/en/formats/otlp.md`). */
export const MCP_CALLS = { name: 'agent.mcp.calls', unit: '{call}' } as const;
/** The runtime's own time around those calls, summed, in milliseconds. */
export const MCP_DURATION = { name: 'agent.mcp.duration', unit: 'ms' } as const;

/** The point attributes of both MCP metrics. The rules sum by server, tool and outcome; the rest are summed away. */
export const MCP_ATTRIBUTES = {
  session: 'session.id',
  server: 'mcp_server.name',
  serverSource: 'mcp_server.source',
  tool: 'mcp_tool.name',
  /** `returned`, `failed` or `interrupted`. */
  outcome: 'outcome',
  /** `main` or `subagent`. */
  querySource: 'query_source',
} as const;

/** A metric or attribute name as the OAP's rules spell it. */
export const oapName = (otlpName: string): string => otlpName.replace(/\./g, '_');
