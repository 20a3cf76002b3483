/**
 * `agent.mcp.calls` and `agent.mcp.duration`, the MCP metrics the OAP's `mcp_endpoint.yaml`
 * reads: delta sums of whole numbers, a point per minute and series, with `mcp.server.name`,
 * `mcp.tool.name` and `outcome` (the receiver's `mcp_server_name`, `mcp_tool_name`, `outcome`),
 * beside `session.id` and `query_source`, which the rules sum away. Claude Code sends no MCP
 * metric of its own, so these are always derived. The same points always give the same metrics.
 */
import { otlpTypes } from './proto.js';
import { nanos } from './values.js';

export const MCP_CALLS = 'agent.mcp.calls';
export const MCP_DURATION = 'agent.mcp.duration';
const CALLS_DESCRIPTION = 'Calls to MCP server tools';
const DURATION_DESCRIPTION = 'Milliseconds from the request of an MCP tool call to its result, summed over the calls';

/** One window of one series: the calls that ended in it and their summed milliseconds. */
export interface McpWindow {
  /** Empty when the runtime's name does not split into one server and one tool. */
  server: string;
  tool: string;
  outcome: string;
  query_source: string;
  start_ms: number;
  end_ms: number;
  calls: number;
  duration_ms: number;
}

/** OTLP's AGGREGATION_TEMPORALITY_DELTA. */
const DELTA = 1;

/** The two metrics for a session's windows, as message objects for an ExportMetricsServiceRequest's scope; none for no windows. */
export function mcpMetrics(session: string, windows: McpWindow[]): object[] {
  if (windows.length === 0) return [];
  const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
  const points = (value: (w: McpWindow) => number) =>
    windows.map((w) => ({
      attributes: [
        str('session.id', session),
        str('mcp.server.name', w.server),
        str('mcp.tool.name', w.tool),
        str('outcome', w.outcome),
        str('query_source', w.query_source),
      ],
      startTimeUnixNano: nanos(BigInt(w.start_ms) * 1_000_000n),
      timeUnixNano: nanos(BigInt(w.end_ms) * 1_000_000n),
      asInt: value(w),
    }));
  return [
    {
      name: MCP_CALLS,
      description: CALLS_DESCRIPTION,
      unit: '{call}',
      sum: { aggregationTemporality: DELTA, isMonotonic: true, dataPoints: points((w) => w.calls) },
    },
    {
      name: MCP_DURATION,
      description: DURATION_DESCRIPTION,
      unit: 'ms',
      sum: { aggregationTemporality: DELTA, isMonotonic: true, dataPoints: points((w) => w.duration_ms) },
    },
  ];
}

export interface McpPoint {
  metric: typeof MCP_CALLS | typeof MCP_DURATION;
  session: string;
  server: string;
  tool: string;
  outcome: string;
  query_source: string;
  value: number;
}

type Kv = { key: string; value?: { stringValue?: string } };
type Dp = { attributes?: Kv[]; asDouble?: number; asInt?: number | string };
type Decoded = { resourceMetrics?: { scopeMetrics?: { metrics?: { name?: string; sum?: { dataPoints?: Dp[] } }[] }[] }[] };

/** Every MCP point of a decoded ExportMetricsServiceRequest (for the Prometheus exporter and tests). */
export function mcpPointsOf(o: Decoded): McpPoint[] {
  const out: McpPoint[] = [];
  for (const rm of o.resourceMetrics ?? [])
    for (const sm of rm.scopeMetrics ?? [])
      for (const m of sm.metrics ?? []) {
        if (m.name !== MCP_CALLS && m.name !== MCP_DURATION) continue;
        for (const p of m.sum?.dataPoints ?? []) {
          const a = (k: string) => p.attributes?.find((x) => x.key === k)?.value?.stringValue ?? '';
          out.push({
            metric: m.name,
            session: a('session.id'),
            server: a('mcp.server.name'),
            tool: a('mcp.tool.name'),
            outcome: a('outcome'),
            query_source: a('query_source'),
            value: p.asDouble ?? (p.asInt === undefined ? 0 : Number(p.asInt)),
          });
        }
      }
  return out;
}

/** Every MCP point of an ExportMetricsServiceRequest's bytes. */
export function mcpPoints(request: Uint8Array): McpPoint[] {
  const T = otlpTypes().ExportMetricsServiceRequest;
  return mcpPointsOf(T.toObject(T.decode(request), { longs: String }) as Decoded);
}
