/**
 * The auxiliary stream: the provider calls the runtime makes for itself (a title, a summary, a
 * check), which asz 0.6's model names an `auxiliary` ExecutionStream beside `main` and the
 * children. Claude Code writes them to no transcript; its `api_request` events say
 * `query_source: auxiliary`. So such a request joining no call is not a gap in the evidence but
 * this stream's call: it becomes part of one `stream/auxiliary` node (role `auxiliary`, with
 * every call's figures and the events as its references) instead of an open `telemetry` entry.
 * The stream has no epochs, talks or steps: no record says what was asked, and continuity checks
 * never cross into it. A request some of whose events say otherwise stays unresolved.
 */
import type { Observation } from '../adapters/claude-code/otlp-figures.js';
import { entityId, type Ref } from '../formats/session-flow/types.js';
import { addNode, type AssemblyContext } from './context.js';

export const AUXILIARY_STREAM = 'auxiliary';
const AUXILIARY = 'auxiliary';

export interface PlacedObservation extends Observation {
  at: Ref;
  time?: number;
}

export interface AuxiliaryCall {
  request_id: string;
  model?: string;
  /** When the runtime sent the request's event (not when the call started: nothing says that). */
  event_at?: string;
  duration_ms?: number;
  cost_usd?: number;
  input_tokens?: number;
  output_tokens?: number;
  cache_read_tokens?: number;
  cache_creation_tokens?: number;
  /** Failed attempts before it (`api_error`), each with its status. */
  errors?: number;
}

const round6 = (n: number) => Math.round(n * 1e6) / 1e6;
const isAuxiliary = (obs: PlacedObservation[]) =>
  obs.some((o) => o.querySource === AUXILIARY) && obs.every((o) => o.querySource === undefined || o.querySource === AUXILIARY);

/**
 * Takes the requests that no call holds and whose events say they were the runtime's own; writes
 * the auxiliary stream's node when there is any. Returns the requests taken.
 */
export function emitAuxiliaryStream(ctx: AssemblyContext, unjoined: ReadonlyMap<string, PlacedObservation[]>): Set<string> {
  const taken = new Set<string>();
  const calls: AuxiliaryCall[] = [];
  const refs: Ref[] = [];
  for (const [request, obs] of unjoined) {
    if (!isAuxiliary(obs)) continue;
    taken.add(request);
    const done = obs.find((o) => o.kind === 'call');
    const c: AuxiliaryCall = { request_id: request };
    if (done?.model) c.model = done.model;
    if (done?.time !== undefined) c.event_at = new Date(done.time).toISOString();
    if (done?.durationMs !== undefined) c.duration_ms = done.durationMs;
    if (done?.costUsd !== undefined) c.cost_usd = done.costUsd;
    if (done?.inputTokens !== undefined) c.input_tokens = done.inputTokens;
    if (done?.outputTokens !== undefined) c.output_tokens = done.outputTokens;
    if (done?.cacheReadTokens !== undefined) c.cache_read_tokens = done.cacheReadTokens;
    if (done?.cacheCreationTokens !== undefined) c.cache_creation_tokens = done.cacheCreationTokens;
    const errors = obs.filter((o) => o.kind === 'call_error').length;
    if (errors) c.errors = errors;
    calls.push(c);
    refs.push(...obs.map((o) => o.at));
  }
  if (!calls.length) return taken;
  calls.sort((a, b) => (a.event_at ?? '').localeCompare(b.event_at ?? '') || a.request_id.localeCompare(b.request_id));
  refs.sort((a, b) => a.seq - b.seq || a.row - b.row);
  const sum = (k: keyof AuxiliaryCall) => calls.reduce((n, c) => n + ((c[k] as number | undefined) ?? 0), 0);
  addNode(ctx, entityId('stream', AUXILIARY_STREAM), {
    kind: 'stream',
    parent: entityId('session', ctx.session),
    stream: AUXILIARY_STREAM,
    ref: refs[0],
    refs,
    attrs: {
      role: AUXILIARY,
      from: 'telemetry',
      calls: calls.length,
      duration_ms: sum('duration_ms'),
      cost_usd: round6(sum('cost_usd')),
      input_tokens: sum('input_tokens'),
      output_tokens: sum('output_tokens'),
      requests: calls,
    },
  });
  return taken;
}
