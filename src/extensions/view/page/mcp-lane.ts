/**
 * The timeline's MCP lane: every step that called a tool on an MCP server, as a bar from its
 * request to its result (the step's own `duration_ms`, which says where it came from), coloured
 * by how the call ended. Pure over the document, so the page and a test read the same calls.
 */
import type { ViewDocument, ViewNode } from '../../../formats/view/types.js';

export interface McpBar {
  id: string;
  from: number;
  to: number;
  server?: string;
  tool: string;
  outcome?: string;
  label: string;
}

const str = (v: unknown) => (typeof v === 'string' ? v : undefined);

/** The MCP calls of a conversation in time order; a call with no time is left off the lane (it has no place on it). */
export function mcpBars(doc: Pick<ViewDocument, 'talks' | 'loose'>): McpBar[] {
  const out: McpBar[] = [];
  const walk = (n: ViewNode) => {
    const a = n.attrs ?? {};
    const tool = str(a.mcp_tool);
    if ((n.kind === 'tool' || n.kind === 'agent.call') && tool && n.at !== undefined) {
      const ms = typeof a.duration_ms === 'number' ? a.duration_ms : 0;
      const server = str(a.mcp_server);
      const outcome = str(a.outcome);
      const took = typeof a.duration_ms === 'number' ? ` · ${ms} ms (${str(a.duration_from) ?? 'duration'})` : '';
      out.push({
        id: n.id,
        from: n.at,
        to: n.at + ms,
        server,
        tool,
        outcome,
        label: `${server ? `${server} · ` : ''}${tool}${outcome ? ` · ${outcome}` : ''}${took}`,
      });
    }
    for (const c of n.children ?? []) walk(c);
  };
  for (const t of doc.talks) walk(t);
  for (const l of doc.loose) walk(l);
  return out.sort((a, b) => a.from - b.from || a.id.localeCompare(b.id));
}

export const MCP_COLORS: Record<string, string> = { returned: '#f4a641', failed: '#ff6f78', interrupted: '#9cb0c7' };
