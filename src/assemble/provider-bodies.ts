import { entityId, type Ref } from '../formats/session-flow/types.js';
import { addUnresolved, refOf, type AssemblyContext } from './context.js';
import { pairInlineBodies, readInlineBody, type InlineBody } from './inline-provider-bodies.js';
import type { IndexEntry } from '../storage/index.js';
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

/** One body a call lists: asz's `{role, ref}`, with the form it came in and the other landed copies of it. */
interface Listed {
  role: 'request' | 'response';
  ref: Ref;
  /** Absent for the `file:` dump (asz 0.6's only form) unless a copy in another form was set aside. */
  form?: 'file' | 'inline';
  truncated?: true;
  /** The same body landed again in another form, not listed as a body of its own. */
  duplicates?: { form: 'inline' | 'reference'; ref: Ref }[];
}

type Candidate = Listed & { from: 'file' | 'inline' | 'reference'; file?: string };

/**
 * The provider bodies a session landed, joined to the calls they belong to by the ids the runtime
 * filed them under: the call's message id, else its request id (stage 9's `request_id`). Each
 * `llm.call` lists its bodies as asz 0.6 does, `provider_bodies: [{role, ref}]`, request first; the
 * session states `provider_bodies_landed`. A body that joins no call, or that could not be read as
 * JSON, is an open `telemetry` unresolved entry with its reason (the raw body dump is one of the
 * runtime's telemetry settings). Bodies never make or change a step, so the fold's steps are the
 * same with and without them.
 *
 * Body events in the OTLP export (inline-provider-bodies.ts) join the same way. One call has one
 * body per role: the `file:` dump's, whole, when it landed, and the event's otherwise (`form:
 * inline`, `truncated` when the runtime cut it). An event naming a dump file (`body_ref`) or a
 * second copy is listed under the kept body's `duplicates`, never as a body of its own.
 */
export function joinProviderBodies(ctx: AssemblyContext): void {
  const files: { e: IndexEntry; f: BodyFigures }[] = [];
  const events: InlineBody[] = [];
  // Stage 9 has named the log records that may be body events; without it every log record is one look.
  const candidates = ctx.bodyEvents;
  for (const e of ctx.telemetry) {
    const kind = e.fileKind;
    if (kind === 'provider_body') {
      const f = e.figures ? read(e.figures) : undefined;
      if (f) files.push({ e, f });
    } else if (kind === 'otlp_log' && !candidates) {
      const b = readInlineBody(e);
      if (b) events.push(b);
    }
  }
  if (candidates)
    for (const e of candidates) {
      const b = readInlineBody(e);
      if (b) events.push(b);
    }
  if (!files.length && !events.length) return;
  pairInlineBodies(events);

  // By request id only when a body names no landed message: most never need the map.
  let callOfRequest: Map<string, string> | undefined;
  const byRequest = (request: string) => {
    if (!callOfRequest) {
      callOfRequest = new Map();
      for (const [id, node] of ctx.out.nodes) {
        const r = node.kind === 'llm.call' ? node.attrs?.request_id : undefined;
        if (typeof r === 'string') callOfRequest.set(r, id);
      }
    }
    return callOfRequest.get(request);
  };
  const callOf = (call?: string, request?: string) => {
    if (call) {
      const id = call.includes('/') ? entityId('call', call) : `call/${call}`; // entityId's own result, without its general path
      if (ctx.out.nodes.has(id)) return id;
    }
    return request ? byRequest(request) : undefined;
  };
  const named = (call?: string, request?: string) => [call && `message ${call}`, request && `request ${request}`].filter(Boolean).join(' and ');
  const byCall = new Map<string, Candidate[]>();
  const add = (call: string, c: Candidate) => (byCall.get(call) ?? byCall.set(call, []).get(call)!).push(c);

  for (const { e, f } of files) {
    const where = `provider_body/${e.seq}/${e.row}`;
    const name = f.src ?? `${f.role} body`;
    if (f.why) addUnresolved(ctx, 'telemetry', where, `the ${f.role} body ${name} is kept whole, unread: ${f.why}`);
    const call = callOf(f.call, f.request);
    if (call) add(call, { role: f.role, ref: refOf(e), from: 'file' });
    else if (!f.why)
      addUnresolved(
        ctx,
        'telemetry',
        where,
        `the ${f.role} body ${name} names ${named(f.call, f.request) || 'no call'}, which no landed call of this session is (yet)`,
      );
  }
  for (const b of events) {
    const call = callOf(b.call, b.request);
    if (call) {
      const c: Candidate = { role: b.role, ref: refOf(b.entry), from: b.form };
      if (b.truncated) c.truncated = true;
      if (b.file) c.file = b.file;
      add(call, c);
      continue;
    }
    const name = `${b.form === 'reference' ? `${b.role} body event` : `inline ${b.role} body`}${b.bodyId ? ` ${b.bodyId}` : ''}`;
    const why =
      b.role === 'request' && !b.call && !b.request
        ? `the ${name} names no call, and no response event with its request_body_id has landed (yet)`
        : `the ${name} names ${named(b.call, b.request) || 'no call'}, which no landed call of this session is (yet)`;
    addUnresolved(ctx, 'telemetry', `record/${b.entry.seq}/${b.entry.row}`, why);
  }

  // Every landed body counts once, joined or not; an event naming a dump file is no body, and a second copy is no second body.
  let landed = files.length,
    duplicates = 0;
  for (const b of events) if (b.form === 'inline') landed++;
  for (const [call, candidates] of byCall) {
    const first = candidates[0]!.from;
    let oneForm = first !== 'reference';
    for (let i = 1; oneForm && i < candidates.length; i++) oneForm = candidates[i]!.from === first;
    let listed: Listed[];
    if (oneForm) {
      // The usual call: every body in one form, nothing to set aside.
      if (candidates.length > 1) candidates.sort(byPlace);
      const form = first === 'inline' ? 'inline' : undefined;
      listed = candidates.map((c) => listedOf(c, form));
    } else {
      const one = oneOfEachRole(candidates, (c) =>
        addUnresolved(
          ctx,
          'telemetry',
          `record/${c.ref.seq}/${c.ref.row}`,
          `the runtime wrote the ${c.role} body of ${call} to ${c.file ?? 'a dump file'} (OTEL_LOG_RAW_API_BODIES=file:), and no landed provider body holds it (yet): the local receiver's provider_bodies names the directory it collects`,
        ),
      );
      listed = one.listed;
      for (const c of one.setAside) {
        duplicates++;
        if (c.from === 'inline') landed--;
      }
    }
    if (listed.length) (ctx.out.nodes.get(call)!.attrs ??= {}).provider_bodies = listed;
  }
  const session = ctx.out.nodes.get(entityId('session', ctx.session));
  if (session && landed > 0) (session.attrs ??= {}).provider_bodies_landed = landed;
  if (session && duplicates > 0) (session.attrs ??= {}).provider_body_duplicates = duplicates;
}

const byPlace = (a: Candidate, b: Candidate) => (a.role === b.role ? a.ref.seq - b.ref.seq || a.ref.row - b.ref.row : a.role === 'request' ? -1 : 1);

function listedOf(c: Candidate, form: 'file' | 'inline' | undefined): Listed {
  const l: Listed = { role: c.role, ref: c.ref };
  if (form) l.form = form;
  if (c.truncated) l.truncated = true;
  return l;
}

/**
 * One call's bodies in more than one form, request first: per role the dump's when it landed, else
 * the inline ones; every other copy set aside under the first kept body's `duplicates`. An event naming a dump file with no
 * body of its role to stand beside goes to `orphan`.
 */
function oneOfEachRole(candidates: Candidate[], orphan: (c: Candidate) => void): { listed: Listed[]; setAside: Candidate[] } {
  candidates.sort(byPlace);
  const listed: Listed[] = [];
  const setAside: Candidate[] = [];
  for (const role of ['request', 'response'] as const) {
    const mine = candidates.filter((c) => c.role === role);
    const form = mine.some((c) => c.from === 'file') ? 'file' : 'inline';
    const kept = mine.filter((c) => c.from === form);
    const others = mine.filter((c) => c.from !== form);
    if (!kept.length) {
      others.forEach(orphan);
      continue;
    }
    kept.forEach((c, i) => {
      const l = listedOf(c, others.length || form === 'inline' ? form : undefined);
      if (i === 0 && others.length) l.duplicates = others.map((o) => ({ form: o.from as 'inline' | 'reference', ref: o.ref }));
      listed.push(l);
    });
    setAside.push(...others);
  }
  return { listed, setAside };
}
