/**
 * One hook spool line as Session Data: which stream and which kind of landed file it goes to, and
 * the record it lands as. asz 0.6 lands its plugin's output the same way: one file per stream and
 * kind, a record per observation with `id`, `tool` and `time` lifted from it and the line whole as
 * one `data` part, no `from` and no flags, so assembly emits no node for it. An MCP call's
 * observations are `execution` records; every other observation (a shell or edit tool's, the
 * session's start and end) is a `changes` record. The records are `aszcol-hook/1` observations, not
 * asz's own `changes/1` or `execution/1` shapes, so the files name `aszcol-hook/1` as their dialect.
 */
import { unknownPart } from '../../formats/session-data/parts.js';
import type { SdRecord } from '../../formats/session-data/types.js';
import { HOOK_SCHEMA, type HookObservation } from './hook-event.js';

export const HOOK_DIALECT = HOOK_SCHEMA;
/** How the records were acquired: the plugin's hooks, by way of the hook spool. */
export const HOOK_ADAPTER = 'claude-code-plugin/1';
export const PLUGIN_KINDS = ['changes', 'execution'] as const;
export type PluginKind = (typeof PLUGIN_KINDS)[number];

export interface PlacedLine {
  stream: string;
  kind: PluginKind;
  record: Omit<SdRecord, 'ord' | 'off' | 'sha' | 'bytes'>;
}

/** The kind an observation lands as: an MCP tool call's is an execution record, anything else a change record. */
export function pluginKindOf(o: { event?: string; mcp?: unknown }): PluginKind {
  return o.event?.startsWith('tool_') && o.mcp ? 'execution' : 'changes';
}

/**
 * Where one spool line lands and as what. `usableStream` says whether a stream name may name a
 * directory; a line that is not an observation, or names a stream that cannot, lands on `main`
 * with what it holds and the reason, never dropped.
 */
export function placeHookLine(line: Buffer, usableStream: (s: string) => boolean): PlacedLine {
  let v: unknown;
  try {
    v = JSON.parse(line.toString('utf8'));
  } catch (err) {
    return { stream: 'main', kind: 'changes', record: { parts: [unknownPart(line, `a hook spool line that is not JSON: ${(err as Error).message}`)] } };
  }
  const o = v as Partial<HookObservation> | null;
  if (!o || typeof o !== 'object' || Array.isArray(o) || o.schema !== HOOK_SCHEMA) {
    return { stream: 'main', kind: 'changes', record: { parts: [unknownPart(line, `a hook spool line that is not an ${HOOK_SCHEMA} observation`)] } };
  }
  const record: PlacedLine['record'] = { parts: [] };
  if (typeof o.id === 'string' && o.id) record.id = o.id;
  if (typeof o.tool === 'string' && o.tool) record.tool = o.tool;
  if (typeof o.time === 'string' && o.time) record.time = o.time;
  record.parts = [{ k: 'data', state: 'available', bytes: line.length, data: o }];
  const stream = typeof o.stream === 'string' && o.stream && usableStream(o.stream) ? o.stream : 'main';
  return { stream, kind: pluginKindOf(o), record };
}
