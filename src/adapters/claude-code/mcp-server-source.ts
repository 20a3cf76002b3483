/**
 * Where Claude Code's configuration of an MCP server comes from, in its own words: `local` (the
 * project's entry in the user's `.claude.json`), `project` (a `.mcp.json` in the project) or `user`
 * (the top of `.claude.json`). Claude Code 2.1.328 names the scope itself in every MCP hook's input
 * (`mcp_server.source`, read by hook-event.ts, which also gives `dynamic` and `plugin`); this lookup
 * answers only for a runtime that does not, naming the server by the tool name alone. Claude Code
 * takes the first scope that defines a name in that order, so the same order answers here. A server
 * none of the files defines (one given with `--mcp-config`, or a plugin's own) has no source here:
 * it is left out, never guessed.
 */
import { dirname, join } from 'node:path';

export type McpServerSource = 'local' | 'project' | 'user';

/** What the lookup reads: `.claude.json` as parsed, and the parsed `.mcp.json` nearest each directory asked about. */
export interface McpConfigs {
  userConfig?: unknown;
  /** The `.mcp.json` of a directory, parsed, or undefined when it has none (or it could not be read). */
  projectConfig: (dir: string) => unknown;
}

const serversOf = (v: unknown): Record<string, unknown> | undefined => {
  const s = v && typeof v === 'object' ? (v as { mcpServers?: unknown }).mcpServers : undefined;
  return s && typeof s === 'object' && !Array.isArray(s) ? (s as Record<string, unknown>) : undefined;
};

/** The directory and each one above it, nearest first, at most `depth` of them. */
export function upwards(dir: string, depth = 16): string[] {
  const out: string[] = [];
  for (let d = dir; out.length < depth; d = dirname(d)) {
    out.push(d);
    if (dirname(d) === d) break;
  }
  return out;
}

export function mcpServerSource(server: string, cwd: string | undefined, configs: McpConfigs): McpServerSource | undefined {
  const dirs = cwd ? upwards(cwd) : [];
  const projects = configs.userConfig && typeof configs.userConfig === 'object' ? (configs.userConfig as { projects?: unknown }).projects : undefined;
  if (projects && typeof projects === 'object')
    for (const d of dirs) if (serversOf((projects as Record<string, unknown>)[d])?.[server] !== undefined) return 'local';
  for (const d of dirs) if (serversOf(configs.projectConfig(d))?.[server] !== undefined) return 'project';
  if (serversOf(configs.userConfig)?.[server] !== undefined) return 'user';
  return undefined;
}

/** Where Claude Code keeps `.claude.json`: in `CLAUDE_CONFIG_DIR` when it is set, else in the home directory. */
export function userConfigPath(env: NodeJS.ProcessEnv, home: string): string {
  return join(env.CLAUDE_CONFIG_DIR || home, '.claude.json');
}

export const PROJECT_CONFIG = '.mcp.json';
