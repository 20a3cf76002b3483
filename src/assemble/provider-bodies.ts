import { entityId, type Ref } from '../formats/session-flow/types.js';
import { addUnresolved, refOf, type AssemblyContext } from './context.js';
import { inlineBodies } from './inline-provider-bodies.js';
import type { FigureValue, Figures } from '../storage/index-figures.js';

interface BodyFigures {
  role: 'request' | 'response';
  src?: string;
  call?: string;
  request?: string;
  bytes?: number;
  why?: string;
}

/** The figures the index keeps of a body (storage/index.ts), read by name. */
function read(figures: Figures): BodyFigures | undefined {
  const f: Record<string, FigureValue> = {};
  for (let i = 0; i < figures.count; i++) f[figures.key(i)] = figures.value(i);
  if (f.role !== 'request' && f.role !== 'response') return undefined;
  const text = (v: FigureValue | undefined) => (typeof v === 'string' ? v : undefined);
  const out: BodyFigures = { role: f.role };
  if (text(f.src)) out.src = text(f.src);
  if (text(f.call)) out.call = text(f.call);
  if (text(f.request)) out.request = text(f.request);
  if (typeof f.bytes === 'number') out.bytes = f.bytes;
  if (text(f.why)) out.why = text(f.why);
  return out;
}

/**
 * The provider bodies a session landed, joined to the calls they belong to by the ids the runtime
 * filed them under: the call's message id, else its request id (stage 9's `request_id`). Each
 * `llm.call` lists its bodies as asz 0.6 does, `provider_bodies: [{role, ref}]`, request first; the
 * session states `provider_bodies_landed`. A body that joins no call, or that could not be read as
 * JSON, is an open `telemetry` unresolved entry with its reason (the raw body dump is one of the
 * runtime's telemetry settings). Bodies never make or change a step, so the fold's steps are the
 * same with and without them. Bodies sent inline as events join the same way (inline-provider-bodies.ts);
 * one the runtime cut short is listed with `truncated: true`.
 */
export function joinProviderBodies(ctx: AssemblyContext): void {
  const callOfRequest = new Map<string, string>();
  for (const [id, node] of ctx.out.nodes) {
    const request = node.kind === 'llm.call' ? node.attrs?.request_id : undefined;
    if (typeof request === 'string') callOfRequest.set(request, id);
  }
  const byCall = new Map<string, { role: string; ref: Ref; truncated?: true }[]>();
  const callOf = (call?: string, request?: string) => {
    const byMessage = call ? entityId('call', call) : undefined;
    return byMessage && ctx.out.nodes.has(byMessage) ? byMessage : request ? callOfRequest.get(request) : undefined;
  };
  const named = (call?: string, request?: string) => [call && `message ${call}`, request && `request ${request}`].filter(Boolean).join(' and ');
  let landed = 0;
  for (const e of ctx.live) {
    if (e.fileKind !== 'provider_body' || !e.figures) continue;
    const f = read(e.figures);
    if (!f) continue;
    landed++;
    const ref = refOf(e);
    const where = `provider_body/${e.seq}/${e.row}`;
    const name = f.src ?? `${f.role} body`;
    if (f.why) addUnresolved(ctx, 'telemetry', where, `the ${f.role} body ${name} is kept whole, unread: ${f.why}`);
    const call = callOf(f.call, f.request);
    if (!call) {
      if (!f.why)
        addUnresolved(
          ctx,
          'telemetry',
          where,
          `the ${f.role} body ${name} names ${named(f.call, f.request) || 'no call'}, which no landed call of this session is (yet)`,
        );
      continue;
    }
    (byCall.get(call) ?? byCall.set(call, []).get(call)!).push({ role: f.role, ref });
  }
  // The inline form (OTEL_LOG_RAW_API_BODIES=1): the same join; a body the runtime cut short is listed, marked, and read as far as it goes.
  for (const b of inlineBodies(ctx.live)) {
    landed++;
    const where = `record/${b.entry.seq}/${b.entry.row}`;
    const name = `inline ${b.role} body${b.bodyId ? ` ${b.bodyId}` : ''}`;
    const call = callOf(b.call, b.request);
    if (!call) {
      const why =
        b.role === 'request' && !b.call && !b.request
          ? `the ${name} names no call, and no response event with its request_body_id has landed (yet)`
          : `the ${name} names ${named(b.call, b.request) || 'no call'}, which no landed call of this session is (yet)`;
      addUnresolved(ctx, 'telemetry', where, why);
      continue;
    }
    (byCall.get(call) ?? byCall.set(call, []).get(call)!).push({ role: b.role, ref: refOf(b.entry), ...(b.truncated ? { truncated: true as const } : {}) });
  }
  for (const [call, bodies] of byCall) {
    const node = ctx.out.nodes.get(call)!;
    bodies.sort((a, b) => (a.role === b.role ? a.ref.seq - b.ref.seq || a.ref.row - b.ref.row : a.role === 'request' ? -1 : 1));
    (node.attrs ??= {}).provider_bodies = bodies;
  }
  const session = ctx.out.nodes.get(entityId('session', ctx.session));
  if (session && landed > 0) (session.attrs ??= {}).provider_bodies_landed = landed;
}
