/**
 * The MCP calls a landed transcript file ends: every result in it that answers a
 * `mcp__<server>__<tool>` request, with the outcome and the milliseconds from the request
 * record to the result record (a transcript measures nothing closer to the call). A call is
 * counted in the file its result lands in; its request is looked for in that file, then in the
 * stream's earlier files, newest first.
 */
import { mcpOutcome, splitMcpName } from '../../assemble/mcp-calls.js';
import type { SdRecord } from '../../formats/session-data/types.js';
import type { McpWindow } from '../../otlp/mcp-usage.js';

export interface McpCallSeen {
  /** The tool use id. */
  id: string;
  server: string;
  tool: string;
  outcome: string;
  /** Epoch ms the result was written; undefined when the record has no time. */
  at: number | undefined;
  /** Undefined when either record has no time or the result is earlier: the call counts and adds no time. */
  duration_ms: number | undefined;
}

interface Request {
  name: string | undefined;
  time: number | undefined;
}

const timeOf = (r: SdRecord) => {
  const t = r.time ? Date.parse(r.time) : NaN;
  return Number.isFinite(t) ? t : undefined;
};

function requestsIn(records: SdRecord[], into: Map<string, Request>, wanted?: Set<string>): void {
  for (const r of records)
    for (const p of r.parts) if (p.k === 'call' && p.id && (!wanted || wanted.has(p.id)) && !into.has(p.id)) into.set(p.id, { name: p.name, time: timeOf(r) });
}

export function mcpCallsIn(records: SdRecord[], earlier: () => Iterable<SdRecord[]>): McpCallSeen[] {
  const requests = new Map<string, Request>();
  requestsIn(records, requests);
  const answered: { of: string; record: SdRecord; failed: boolean | undefined }[] = [];
  for (const r of records) for (const p of r.parts) if (p.k === 'result' && p.of) answered.push({ of: p.of, record: r, failed: p.failed });
  const missing = new Set(answered.map((a) => a.of).filter((id) => !requests.has(id)));
  if (missing.size)
    for (const older of earlier()) {
      requestsIn(older, requests, missing);
      for (const id of requests.keys()) missing.delete(id);
      if (!missing.size) break;
    }
  const out: McpCallSeen[] = [];
  const seen = new Set<string>();
  for (const a of answered) {
    const req = requests.get(a.of);
    const target = splitMcpName(req?.name);
    if (!req || !target || seen.has(a.of)) continue;
    seen.add(a.of);
    const at = timeOf(a.record);
    const duration = at !== undefined && req.time !== undefined && at >= req.time ? at - req.time : undefined;
    out.push({
      id: a.of,
      server: target.server ?? '',
      tool: target.tool,
      outcome: mcpOutcome({ entry: { flags: a.record.flags ?? [] }, part: { failed: a.failed } }),
      at,
      duration_ms: duration,
    });
  }
  return out;
}

const MINUTE = 60_000;

/** The series key of an MCP window in the derivation state, apart from the token series. */
export const mcpSeriesKey = (w: Pick<McpWindow, 'server' | 'tool' | 'outcome' | 'query_source'>) =>
  `mcp\u0000${w.server}\u0000${w.tool}\u0000${w.outcome}\u0000${w.query_source}`;

/**
 * Calls summed per minute and series; a window whose series already reaches past its minute starts
 * where the series ends, so the windows of a series never overlap (as the token windows).
 */
export function mcpWindows(calls: { call: McpCallSeen; at: number }[], querySource: string, series: Map<string, number>): McpWindow[] {
  const acc = new Map<string, McpWindow>();
  for (const { call, at } of calls) {
    const minute = Math.floor(at / MINUTE) * MINUTE;
    const w0 = { server: call.server, tool: call.tool, outcome: call.outcome, query_source: querySource };
    const k = `${mcpSeriesKey(w0)}\u0000${minute}`;
    const w = acc.get(k) ?? acc.set(k, { ...w0, start_ms: minute, end_ms: minute + MINUTE, calls: 0, duration_ms: 0 }).get(k)!;
    w.calls++;
    w.duration_ms += call.duration_ms ?? 0;
  }
  const out: McpWindow[] = [];
  for (const w of [...acc.values()].sort((a, b) => a.start_ms - b.start_ms || (mcpSeriesKey(a) < mcpSeriesKey(b) ? -1 : 1))) {
    const key = mcpSeriesKey(w);
    const end = series.get(key);
    const start = end !== undefined && end > w.start_ms ? end : w.start_ms;
    series.set(key, start + MINUTE);
    out.push({ ...w, start_ms: start, end_ms: start + MINUTE });
  }
  return out;
}
