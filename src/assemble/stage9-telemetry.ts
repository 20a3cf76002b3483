import { figureColumnsOf, ObservationTable } from '../adapters/claude-code/observation-table.js';
import { entityId } from '../formats/session-flow/types.js';
import { IsoTimes } from '../util/iso-time.js';
import { retriesOfCalls } from './call-retries.js';
import { addUnresolved, has, type AssemblyContext } from './context.js';
import type { IndexEntry } from '../storage/index.js';
import type { ToolUse } from './stage4-tools.js';
import { emitAuxiliaryStream, type PlacedObservation } from './auxiliary-stream.js';
import { RowGroups } from './row-groups.js';
import { CodeGroups, CodeMap } from './code-groups.js';
import { IdCodes, sharedStringTable, stringCodedOf } from '../storage/string-codes.js';
import { isBodyEventName } from './inline-provider-bodies.js';
import { columnCodedOf } from '../storage/index-figures.js';

import { callFigures, refAt, toolFigures, writeTotals, type Joined } from './telemetry-figures.js';
// Loaded for its effect: it keeps the join's object shapes, and the code compiled for them, from one assembly to the next.
import './kept-shapes.js';

/** An OTLP log or span record: what the join reads (provider bodies are the bodies' join's). */
const isTelemetryRecord = (e: IndexEntry) => e.fileKind === 'otlp_log' || e.fileKind === 'otlp_span';

/** The distinct names of a group's rows, in row order. */
const namesOf = (t: ObservationTable, rows: number[]) => [...new Set(rows.map((r) => t.name(r)))].join(', ');

/**
 * Stage 9. The runtime's own events and spans, joined to the calls, tools and talks they describe
 * by identifiers only — request id, tool use id, prompt id, span parent — never by nearness in
 * time. A request id reaches its call through a bridge the runtime states: `assistant_response`
 * names the transcript record (`message.uuid`), and a tool event names both the request and a tool
 * use the call holds. What joins nothing is an open `telemetry` unresolved entry with its reason; a
 * step with no event says which figures are unavailable and why. Events that land after the
 * transcript join in the next round, since assembly runs over everything landed so far.
 *
 * The events are read into columns (adapters/claude-code/observation-table.ts) and grouped by
 * chains through the rows (row-groups.ts): no object per event, only the figures written out.
 */
export function joinTelemetry(ctx: AssemblyContext, uses: Map<string, ToolUse>): void {
  // Ids are joined by number: the loaded index's own, when every record was read from it (a map by text costs ~20 times more).
  const table = ctx.telemetry.length ? sharedStringTable(ctx.live) : undefined;
  const codes = new IdCodes(table);
  const t = new ObservationTable(ctx.telemetry.length, codes);
  // The transcript's failed attempts, from the streams (a transcript landed with no stream is in no stage's view);
  // retriesOfCalls reads them as a set, so stream order is as good as landed order. The flag first: reading figures makes an object.
  const failures: IndexEntry[] = [];
  for (const s of ctx.streams.values()) for (const e of s.records) if (has(e, 'api_error') && e.figures) failures.push(e);
  const bodyEvents: IndexEntry[] = (ctx.bodyEvents = []);
  // With one loaded index, every record's figures are read in its columns, by the numbers the join keys
  // on; else (records built in memory, or loaded from several) all are first written into columns of their own.
  const records = table ? undefined : ctx.telemetry.filter(isTelemetryRecord);
  const written = records ? figureColumnsOf(records.map((e) => e.figures)) : undefined;
  let nextWritten = 0;
  let sameSession = -1;
  for (const e of records ?? ctx.telemetry) {
    const kind = e.fileKind;
    if (kind !== 'otlp_log' && kind !== 'otlp_span') continue;
    const coded = written ? undefined : columnCodedOf(e);
    if (!written && coded?.figureColumns.str !== table)
      throw new Error(`telemetry record ${e.seq}/${e.row} was not read from the index its session's others were`);
    const start = written ? written.starts[nextWritten++]! : coded!.figureStart();
    if (start < 0) continue;
    const read = written
      ? t.readColumns(written.columns, start, e.seq, e.row, e.time, written.own)
      : t.readColumns(coded!.figureColumns, start, e.seq, e.row, e.time);
    // A record the table does not take is left to the bodies' join to judge: rare, and it reads its figures its own way.
    if (kind === 'otlp_log' && (!read || isBodyEventName(t.name(t.length - 1)))) bodyEvents.push(e);
    if (!read) continue;
    const session = t.code('session', t.length - 1);
    // The records share one code for the session id: compared by text once, then by code.
    if (session < 0 || session === sameSession) continue;
    const text = codes.text(session);
    if (text === ctx.session) sameSession = session;
    else {
      addUnresolved(ctx, 'telemetry', `record/${e.seq}/${e.row}`, `the ${t.name(t.length - 1)} record names session ${text}, not ${ctx.session}`);
      t.dropLast();
    }
  }
  const n = t.length;
  const j: Joined = {
    t,
    codes,
    byRequest: new CodeGroups(n, codes.size),
    toolRows: new RowGroups(n),
    byUnknownToolUse: new RowGroups(n),
    byPrompt: new RowGroups(n),
    byParentSpan: new RowGroups(n),
    times: new IsoTimes(),
    exported: n > 0,
  };

  // The bridges from a request id to the call (message id) that carries it, both as codes.
  const callCode = (e: IndexEntry | undefined): number => {
    const call = e?.call;
    return call === undefined ? -1 : codes.of(call, table ? stringCodedOf(e!)!.code('call') : -1);
  };
  const callOfRecord = (id: string) => {
    const e = ctx.byId.get(id);
    return e?.fileKind === 'transcript' ? callCode(e) : -1;
  };
  const callOfRequest = new CodeMap(codes.size);
  // Its inverse, made as it grows: when two requests name one call, the one bridged last is the call's.
  const requestOfCall = new CodeMap(codes.size);
  let bridged = 0;
  const bridge = (request: number, call: number) => {
    if (request < 0 || call < 0) return;
    const prev = callOfRequest.get(request);
    if (prev < 0) {
      callOfRequest.set(request, call);
      requestOfCall.set(call, request);
      bridged++;
    } else if (prev !== call) {
      const text = codes.text(request);
      addUnresolved(ctx, 'telemetry', `request/${text}`, `the runtime ties request ${text} to two calls, ${codes.text(prev)} and ${codes.text(call)}`);
    }
  };
  // Each landed tool use by its id's code, so an event finds its use with no lookup by text, and
  // by its place in `uses`: the code of the call holding it, and its first row (-1: none), a chain
  // through its rows (toolRows) onwards.
  const useList = n ? [...uses.values()] : []; // with no rows nothing looks a use up: a session with no export numbers none
  const useAt = new CodeMap(codes.size);
  const callOfUse = new Int32Array(useList.length);
  const firstRowOfUse = new Int32Array(useList.length).fill(-1);
  useList.forEach((u, i) => {
    let known = -1;
    if (table) {
      const parts = u.entry.parts;
      for (let k = 0; k < parts.length; k++) if (parts[k]!.k === 'call' && parts[k]!.id === u.id) known = stringCodedOf(u.entry)!.partIdCode(k);
    }
    useAt.set(codes.of(u.id, known), i);
    callOfUse[i] = callCode(u.entry);
  });
  for (let r = 0; r < n; r++) {
    const kind = t.kind(r);
    const request = t.code('request', r),
      toolUse = t.code('toolUse', r);
    if (kind === 'call_response') {
      const record = t.text('record', r);
      if (record) bridge(request, callOfRecord(record));
    }
    const bridging = kind === 'tool_decision' || kind === 'tool_result';
    if ((bridging || kind === 'tool_span' || kind === 'tool_execution_span') && toolUse >= 0) {
      const at = useAt.get(toolUse);
      if (at < 0) j.byUnknownToolUse.add(t.text('toolUse', r), r);
      else {
        if (bridging) bridge(request, callOfUse[at]!);
        if (firstRowOfUse[at]! < 0) j.toolRows.start((firstRowOfUse[at] = r));
        else j.toolRows.append(firstRowOfUse[at]!, r);
      }
    }
    if (kind === 'call' || kind === 'call_span' || kind === 'call_error') j.byRequest.add(request, r);
    if (kind === 'tool_blocked_span') j.byParentSpan.add(t.text('parentSpanId', r), r);
    j.byPrompt.add(t.text('prompt', r), r);
  }

  const retries = retriesOfCalls(ctx, failures);
  for (const { first, node } of ctx.callNodes ?? []) {
    const request = bridged ? requestOfCall.get(callCode(first)) : -1;
    // Each node owns its attrs object (stages 3 and 4 make one per node): written in place, not copied.
    callFigures((node.attrs ??= {}), request, j, retries.size ? retries.get(first.call!) : undefined);
  }
  // The runtime's own side calls join no call by design: they are the auxiliary stream, not a gap.
  const unjoined = new Map<string, PlacedObservation[]>();
  const unjoinedRows = new Map<string, number[]>();
  for (const request of j.byRequest.keys()) if (!callOfRequest.has(request)) unjoinedRows.set(codes.text(request), j.byRequest.rows(request));
  for (const [request, rows] of unjoinedRows)
    unjoined.set(
      request,
      rows.map((r) => placed(t, r)),
    );
  const auxiliary = emitAuxiliaryStream(ctx, unjoined);
  for (const [request, rows] of unjoinedRows) {
    if (auxiliary.has(request)) continue;
    addUnresolved(
      ctx,
      'telemetry',
      `request/${request}`,
      `${namesOf(t, rows)} names request ${request}, and no landed call is tied to it by an assistant_response or tool event`,
    );
  }

  let useNo = 0;
  for (const u of uses.values()) {
    const first = n ? firstRowOfUse[useNo++]! : -1;
    const node = u.node;
    if (!node) continue;
    let blocked: number[] | undefined;
    for (let r = first; r >= 0; r = j.toolRows.after(r))
      if (t.kind(r) === 'tool_span' && t.text('spanId', r))
        for (let b = j.byParentSpan.first(t.text('spanId', r)); b >= 0; b = j.byParentSpan.after(b)) (blocked ??= []).push(b);
    toolFigures((node.attrs ??= {}), first, blocked, j);
  }
  const toolSpanIds = new Set<string>();
  for (let r = 0; r < n; r++) {
    const spanId = t.kind(r) === 'tool_span' ? t.text('spanId', r) : undefined;
    if (spanId) toolSpanIds.add(spanId);
  }
  for (const toolUse of j.byUnknownToolUse.keys()) {
    addUnresolved(
      ctx,
      'telemetry',
      `tool_use/${toolUse}`,
      `${namesOf(t, j.byUnknownToolUse.rows(toolUse))} names tool use ${toolUse}, which no landed call holds`,
    );
  }
  for (const parent of j.byParentSpan.keys()) {
    if (toolSpanIds.has(parent)) continue;
    const rows = j.byParentSpan.rows(parent);
    addUnresolved(ctx, 'telemetry', `span/${parent}`, `${rows.length} ${t.name(rows[0]!)} span(s) hang under span ${parent}, which is no landed tool span`);
  }

  for (const talk of ctx.talks) {
    const node = ctx.out.nodes.get(talk.id);
    if (!node) continue;
    const promptIds = [...new Set(talk.runs.map((r) => r.cycle))];
    writeTotals((node.attrs ??= {}), j, promptIds);
  }
  const session = ctx.out.nodes.get(entityId('session', ctx.session));
  if (session) {
    const attrs = (session.attrs ??= {});
    writeTotals(attrs, j);
    attrs.telemetry_records = n;
  }
}

/** A row as the auxiliary stream reads it. */
function placed(t: ObservationTable, r: number): PlacedObservation {
  const o = t.observation(r) as PlacedObservation;
  o.at = refAt(t, r);
  const time = t.time(r);
  if (time !== undefined) o.time = time;
  return o;
}
