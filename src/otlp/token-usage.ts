/**
 * `claude_code.token.usage` as Claude Code's own exporter sends it: one monotonic delta sum named
 * `claude_code.token.usage`, description `Number of tokens used`, unit `tokens`, double values,
 * a point for each of the four types (zero included) with `session.id`, `model`, `query_source`
 * and `type`. The request is built from the message types in proto/; the same points always
 * give the same bytes (no wall-clock time is read here).
 */
import { otlpTypes } from './proto.js';
import { nanos } from './values.js';
import { SCOPE_NAME, aszcolVersion } from './identity.js';
import { mcpMetrics, type McpWindow } from './mcp-usage.js';

export const METRIC_NAME = 'claude_code.token.usage';
export const METRIC_DESCRIPTION = 'Number of tokens used';
export const METRIC_UNIT = 'tokens';
export const TOKEN_TYPES = ['input', 'output', 'cacheRead', 'cacheCreation'] as const;
export type TokenType = (typeof TOKEN_TYPES)[number];
export type QuerySource = 'main' | 'subagent';

/** One window of one series: the four types' sums over the calls that finished in it. */
export interface Window {
  model: string;
  query_source: QuerySource;
  /** Epoch ms; the window is [start, end). */
  start_ms: number;
  end_ms: number;
  tokens: Record<TokenType, number>;
}

/** OTLP's AGGREGATION_TEMPORALITY_DELTA. */
const DELTA = 1;

/** The derived request of one landed file: its token usage windows, and the MCP windows (`mcp-usage.ts`) beside them when it has any. */
export function encodeTokenUsage(session: string, windows: Window[], mcp: McpWindow[] = []): Buffer {
  const T = otlpTypes().ExportMetricsServiceRequest;
  const str = (key: string, v: string) => ({ key, value: { stringValue: v } });
  const dataPoints = windows.flatMap((w) =>
    TOKEN_TYPES.map((type) => ({
      attributes: [str('session.id', session), str('model', w.model), str('query_source', w.query_source), str('type', type)],
      startTimeUnixNano: nanos(BigInt(w.start_ms) * 1_000_000n),
      timeUnixNano: nanos(BigInt(w.end_ms) * 1_000_000n),
      asDouble: w.tokens[type],
    })),
  );
  const msg = {
    resourceMetrics: [
      {
        // As Claude Code names itself; the exporter puts its own identity here on the way out.
        resource: { attributes: [str('service.name', 'claude-code')] },
        scopeMetrics: [
          {
            scope: { name: SCOPE_NAME, version: aszcolVersion() },
            metrics: [
              ...(windows.length
                ? [
                    {
                      name: METRIC_NAME,
                      description: METRIC_DESCRIPTION,
                      unit: METRIC_UNIT,
                      sum: { aggregationTemporality: DELTA, isMonotonic: true, dataPoints },
                    },
                  ]
                : []),
              ...mcpMetrics(session, mcp),
            ],
          },
        ],
      },
    ],
  };
  const out = T.encode(msg as never).finish();
  return Buffer.from(out.buffer, out.byteOffset, out.byteLength);
}

export interface TokenPoint {
  session: string;
  model: string;
  query_source: string;
  type: string;
  start_ms: number;
  end_ms: number;
  value: number;
}

/** Every `claude_code.token.usage` point of an ExportMetricsServiceRequest (for the Prometheus exporter and tests). */
export function tokenPoints(request: Uint8Array): TokenPoint[] {
  const T = otlpTypes().ExportMetricsServiceRequest;
  type Kv = { key: string; value?: { stringValue?: string } };
  type Dp = { attributes?: Kv[]; asDouble?: number; asInt?: number | { toNumber(): number }; startTimeUnixNano?: unknown; timeUnixNano?: unknown };
  const o = T.toObject(T.decode(request), { longs: String }) as {
    resourceMetrics?: { scopeMetrics?: { metrics?: { name?: string; sum?: { dataPoints?: Dp[] } }[] }[] }[];
  };
  const out: TokenPoint[] = [];
  for (const rm of o.resourceMetrics ?? [])
    for (const sm of rm.scopeMetrics ?? [])
      for (const m of sm.metrics ?? []) {
        if (m.name !== METRIC_NAME) continue;
        for (const p of m.sum?.dataPoints ?? []) {
          const a = (k: string) => p.attributes?.find((x) => x.key === k)?.value?.stringValue ?? '';
          const value = p.asDouble ?? (p.asInt === undefined ? 0 : Number(p.asInt));
          out.push({
            session: a('session.id'),
            model: a('model'),
            query_source: a('query_source'),
            type: a('type'),
            start_ms: Number(BigInt(String(p.startTimeUnixNano ?? '0')) / 1_000_000n),
            end_ms: Number(BigInt(String(p.timeUnixNano ?? '0')) / 1_000_000n),
            value,
          });
        }
      }
  return out;
}
