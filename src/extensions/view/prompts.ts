/**
 * What each provider call was sent and what came back, added to the view document from the bodies
 * the call lists (`provider_bodies`, joined in assembly): the input manifest and the response's stop
 * reason and usage on the `llm.call` (`prompt`), and what changed in the context since the previous
 * call of the same stream whose request is captured (`context_change`). `callPrompt` is the whole
 * of it for one call, system prompt text and message list included, read on request.
 */
import { join } from 'node:path';
import { contextChange, describeRequest, describeResponse } from '../../adapters/claude-code/request-manifest.js';
import { readSessionData } from '../../formats/session-data/decode.js';
import { bodyText } from '../../formats/session-data/inline-provider-body.js';
import { rebuiltWithSessionFiles } from '../../formats/session-data/provider-body.js';
import { SessionProviderBodies } from '../../storage/provider-body-files.js';
import type { SdRecord } from '../../formats/session-data/types.js';
import { buildView, type RecordReader, type ViewInput } from '../../formats/view/build.js';
import type { ContextChange, InputManifest, OutputManifest, ViewPrompt, ViewProviderBody } from '../../formats/view/prompt.js';
import type { ViewDocument, ViewNode } from '../../formats/view/types.js';

export interface CallPrompt {
  conversation: string;
  message_id: string;
  stream?: string;
  provider_bodies: ViewProviderBody[];
  request?: InputManifest;
  response?: OutputManifest;
  context_change?: ContextChange;
  problems: string[];
}

type Reader = (ref: ViewProviderBody['ref']) => SdRecord | undefined;
/** A body whose record names earlier ones, rebuilt from the session's files; throws saying why not. */
type BodyReader = (ref: ViewProviderBody['ref']) => Buffer;

function* walk(nodes: ViewNode[]): Generator<ViewNode> {
  for (const n of nodes) {
    yield n;
    if (n.children) yield* walk(n.children);
  }
}

function bodiesOf(n: ViewNode): ViewProviderBody[] {
  const list = n.attrs?.provider_bodies;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (b): b is ViewProviderBody => !!b && (b.role === 'request' || b.role === 'response') && Number.isInteger(b.ref?.seq) && Number.isInteger(b.ref?.row),
  );
}

/** One call's bodies, read and described; what could not be read says why. */
function readCall(n: ViewNode, read: Reader, readBody?: BodyReader): { request?: InputManifest; response?: OutputManifest; problems: string[] } {
  const out: { request?: InputManifest; response?: OutputManifest; problems: string[] } = { problems: [] };
  for (const b of bodiesOf(n)) {
    const at = `${b.role} body at ${b.ref.seq}/${b.ref.row}`;
    let rec: SdRecord | undefined;
    try {
      rec = read(b.ref);
    } catch (err) {
      out.problems.push(`${at}: ${(err as Error).message}`);
      continue;
    }
    if (!rec) {
      out.problems.push(`${at}: no such landed record`);
      continue;
    }
    let rebuilt = bodyText(rec);
    if ('problem' in rebuilt && readBody && rebuiltWithSessionFiles(rec)) {
      try {
        rebuilt = { body: readBody(b.ref).toString('utf8') };
      } catch (err) {
        rebuilt = { problem: (err as Error).message };
      }
    }
    if ('problem' in rebuilt) {
      out.problems.push(`${at}: ${rebuilt.problem}`);
      continue;
    }
    if (rebuilt.partial) out.problems.push(`${at}: ${rebuilt.partial}`);
    const body = JSON.parse(rebuilt.body) as unknown;
    if (b.role === 'request') {
      const m = describeRequest(body);
      if (m) out.request = m;
      else out.problems.push(`${at}: not a Messages API request (no messages list)`);
    } else {
      const m = describeResponse(body);
      if (m) out.response = m;
    }
  }
  return out;
}

function summaryOf(m: InputManifest): NonNullable<ViewPrompt['request']> {
  const { text: _text, ...system } = m.system;
  const { items: _items, ...messages } = m.messages;
  return { ...m, system, messages };
}

/** Every call of the document in stream order, each with what its bodies say and the change from the stream's previous captured request. */
function describeAll(
  doc: ViewDocument,
  read: Reader,
  readBody: BodyReader | undefined,
  each: (n: ViewNode, r: ReturnType<typeof readCall>, change?: ContextChange) => void,
): void {
  const previous = new Map<string, { id: string; request: InputManifest }>();
  for (const n of walk([...doc.talks, ...doc.loose])) {
    if (n.kind !== 'llm.call') continue;
    const r = readCall(n, read, readBody);
    const stream = n.stream ?? '';
    const prev = previous.get(stream);
    const change = r.request && prev ? contextChange(prev.request, r.request, prev.id.replace(/^call\//, '')) : undefined;
    if (r.request) previous.set(stream, { id: n.id, request: r.request });
    each(n, r, change);
  }
}

/** Adds `provider_bodies`, `prompt` and `context_change` to the calls, and the two counts to the summary. */
export function addPrompts(doc: ViewDocument, records: RecordReader): void {
  let captured = 0;
  describeAll(
    doc,
    (ref) => records.record(ref.seq, ref.row),
    records.providerBody ? (ref) => records.providerBody!(ref.seq, ref.row) : undefined,
    (n, r, change) => {
      const bodies = bodiesOf(n);
      if (!bodies.length) return;
      n.provider_bodies = bodies;
      const prompt: ViewPrompt = {};
      if (r.request) {
        prompt.request = summaryOf(r.request);
        captured++;
      }
      if (r.response) prompt.response = r.response;
      if (r.problems.length) prompt.problems = r.problems;
      n.prompt = prompt;
      if (change) n.context_change = change;
    },
  );
  const landed = doc.talks.length || doc.loose.length ? sessionBodies(doc) : undefined;
  if (landed !== undefined) Object.assign(doc.summary, { provider_bodies: landed, captured_prompts: captured });
}

/** How many bodies the session holds as of the fold, from the landed files the document lists. */
function sessionBodies(doc: ViewDocument): number | undefined {
  const files = doc.files.filter((f) => f.kind === 'provider_body');
  // Bodies sent inline as events live in otlp_log files among other events: those the calls list are counted.
  const telemetrySeqs = new Set(doc.files.filter((f) => f.kind === 'otlp_log').map((f) => f.seq));
  let inline = 0;
  for (const n of walk([...doc.talks, ...doc.loose])) for (const b of bodiesOf(n)) if (telemetrySeqs.has(b.ref.seq)) inline++;
  // A file's lines are its header, its records and its closing line.
  return files.length || inline ? files.reduce((a, f) => a + Math.max(0, f.lines - 2), 0) + inline : undefined;
}

/** The whole manifest of one call, read from the landed files the document lists; undefined when the document has no such call. */
export function callPrompt(root: string, doc: ViewDocument, messageId: string): CallPrompt | undefined {
  const pathOf = new Map(doc.files.filter((f) => f.seq !== undefined && f.seq !== null).map((f) => [f.seq!, join(root, f.file)]));
  const files = new Map<number, SdRecord[]>();
  const read: Reader = (ref) => {
    const path = pathOf.get(ref.seq);
    if (!path) return undefined;
    if (!files.has(ref.seq)) files.set(ref.seq, readSessionData(path).records);
    return files.get(ref.seq)![ref.row - 1];
  };
  const bodies = new SessionProviderBodies(
    doc.files.filter((f) => f.kind === 'provider_body' && typeof f.seq === 'number').map((f) => ({ seq: f.seq!, path: join(root, f.file) })),
  );
  let found: CallPrompt | undefined;
  describeAll(
    doc,
    read,
    (ref) => bodies.bodyAt(ref.seq, ref.row),
    (n, r, change) => {
      if (found || n.id !== `call/${messageId}`) return;
      found = {
        conversation: doc.conversation,
        message_id: messageId,
        ...(n.stream ? { stream: n.stream } : {}),
        provider_bodies: bodiesOf(n),
        ...(r.request ? { request: r.request } : {}),
        ...(r.response ? { response: r.response } : {}),
        ...(change ? { context_change: change } : {}),
        problems: r.problems,
      };
    },
  );
  return found;
}

/** The `asz.view` build with what each call's bodies say: every reader of a conversation (page, CLI) goes through here. */
export function buildViewWithPrompts(input: ViewInput): ViewDocument {
  const doc = buildView(input);
  addPrompts(doc, input.records);
  return doc;
}
