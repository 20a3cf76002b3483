/**
 * MCP calls: a tool step whose name is `mcp__<server>__<tool>` called a tool on an MCP server.
 * The step carries the server and the tool, how the call ended and how long it took. The name is
 * split as the OAP's `mcp_endpoint.yaml` reads it: a name that does not split into exactly one
 * server and one tool keeps the whole name as the tool and names no server.
 *
 * A transcript holds no time measured around the call, so the duration is the time from the
 * record that asked for it to the record that answered, and says so (`duration_from`). It
 * includes any wait before the call started and is never the server's own time.
 */
import type { IndexEntry, IndexedPart } from '../storage/index.js';

export const MCP_PREFIX = 'mcp__';

export type McpOutcome = 'returned' | 'failed' | 'interrupted';

export interface McpTarget {
  /** Absent when the name does not split into one server and one tool. */
  server?: string;
  tool: string;
}

/** The server and tool an MCP tool name names; undefined for a name that is not an MCP call. */
export function splitMcpName(name: string | undefined): McpTarget | undefined {
  if (!name?.startsWith(MCP_PREFIX)) return undefined;
  const rest = name.slice(MCP_PREFIX.length).split('__');
  if (rest.length === 2 && rest[0] && rest[1]) return { server: rest[0], tool: rest[1] };
  return { tool: name };
}

/** How a call ended, from its one result: interrupted when the runtime flagged it so, failed when it said so, else returned. */
export function mcpOutcome(result: { entry: Pick<IndexEntry, 'flags'>; part: Pick<IndexedPart, 'failed'> }): McpOutcome {
  if (result.entry.flags.includes('interrupted')) return 'interrupted';
  if (result.part.failed === true) return 'failed';
  return 'returned';
}

export const DURATION_FROM = 'request_to_result_record';

/**
 * The attributes an MCP step adds: `mcp_server`, `mcp_tool`, and with exactly one result,
 * `outcome`, `duration_ms` and `duration_from` (both records timed, the result not earlier).
 */
export function mcpAttributes(
  name: string | undefined,
  request: Pick<IndexEntry, 'time'>,
  results: { entry: Pick<IndexEntry, 'flags' | 'time'>; part: Pick<IndexedPart, 'failed'> }[],
): Record<string, unknown> | undefined {
  const target = splitMcpName(name);
  if (!target) return undefined;
  const attrs: Record<string, unknown> = { mcp_tool: target.tool };
  if (target.server) attrs.mcp_server = target.server;
  if (results.length !== 1) return attrs; // no result, or several: the step already says which
  const r = results[0]!;
  attrs.outcome = mcpOutcome(r);
  if (request.time !== undefined && r.entry.time !== undefined && r.entry.time >= request.time) {
    attrs.duration_ms = r.entry.time - request.time;
    attrs.duration_from = DURATION_FROM;
  }
  return attrs;
}
