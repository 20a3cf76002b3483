/**
 * The `claude-code/1` dialect: one Claude Code source record → one Session Data record.
 * Claude Code's field names stop here; everything above reads roles and parts.
 */
import type { Dropped, From, Part, SdRecord, Usage } from '../../formats/session-data/types.js';
import { unknownPart } from '../../formats/session-data/parts.js';
import { keepDataJson } from '../../formats/session-data/measured-data.js';
import { AGENT_ID } from './paths.js';
import { changeRecordOf } from './changes.js';

export const DIALECT = 'claude-code/1';
export const ADAPTER = 'claude-code-local/0.1.0';

/** A converted record without its provenance (`ord`, `off`, `sha`, `bytes`), which the reader adds. */
export type Converted = Omit<SdRecord, 'ord' | 'off' | 'sha' | 'bytes'>;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const str = (v: unknown): string | undefined => (typeof v === 'string' && v !== '' ? v : undefined);
const utf8Len = (s: string) => Buffer.byteLength(s, 'utf8');
const jsonLen = (v: unknown) => utf8Len(JSON.stringify(v) ?? '');
/** A value's JSON and its length: a part that carries the value as `data` keeps the JSON for the writer (measured-data.ts). */
const measure = (v: unknown) => {
  const json = JSON.stringify(v) ?? '';
  return { json, bytes: utf8Len(json) };
};

const SIGNATURE_WHY = 'a provider verifies it; a reader cannot read it';
const CALLER_WHY = 'says who invoked the tool, always the model directly in the measured corpus';
const STRING_TUR_WHY = 'a plain-string tool outcome that repeats the result block';

function usageOf(u: unknown): Usage | undefined {
  if (!isObj(u)) return undefined;
  const pick = (k: string) => (typeof u[k] === 'number' ? (u[k] as number) : undefined);
  const out: Usage = {};
  const a = pick('input_tokens'),
    b = pick('output_tokens'),
    c = pick('cache_read_input_tokens'),
    d = pick('cache_creation_input_tokens');
  if (a !== undefined) out.in = a;
  if (b !== undefined) out.out = b;
  if (c !== undefined) out.cache_read = c;
  if (d !== undefined) out.cache_write = d;
  return Object.keys(out).length ? out : undefined;
}

function textOfResultContent(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return undefined;
  const texts = content.filter((b) => isObj(b) && b.type === 'text' && typeof b.text === 'string').map((b) => (b as Obj).text as string);
  return texts.length ? texts.join('\n') : undefined;
}

/** One part per content block, in source order; a block this dialect does not describe is `unknown`, never left out. */
function blockPart(block: unknown, dropped: Dropped[], toolUseResult: unknown, resultTaken: { done: boolean }): Part {
  if (!isObj(block)) return unknownPart(JSON.stringify(block) ?? 'null', 'a content block that is not an object');
  switch (block.type) {
    case 'text':
      if (typeof block.text === 'string') return { k: 'text', state: 'available', bytes: utf8Len(block.text), text: block.text };
      break;
    case 'thinking': {
      const t = typeof block.thinking === 'string' ? block.thinking : '';
      if (typeof block.signature === 'string' && block.signature) {
        dropped.push({ what: 'reasoning signature', bytes: utf8Len(block.signature), why: SIGNATURE_WHY });
      }
      return t ? { k: 'reasoning', state: 'available', bytes: utf8Len(t), text: t } : { k: 'reasoning', state: 'unavailable', bytes: 0 };
    }
    case 'redacted_thinking':
      return { k: 'reasoning', state: 'redacted', bytes: typeof block.data === 'string' ? utf8Len(block.data) : jsonLen(block) };
    case 'tool_use':
    case 'server_tool_use': {
      if (typeof block.id !== 'string') break;
      if (block.caller !== undefined) dropped.push({ what: 'tool_use caller', bytes: jsonLen(block.caller), why: CALLER_WHY });
      const input = measure(block.input ?? null);
      const p: Part = keepDataJson({ k: 'call', state: 'available', bytes: input.bytes, id: block.id, data: block.input ?? null }, input.json);
      if (typeof block.name === 'string') p.name = block.name;
      return p;
    }
    case 'tool_result': {
      if (typeof block.tool_use_id !== 'string') break;
      const content = block.content;
      const text = textOfResultContent(content);
      const p: Part = {
        k: 'result',
        state: 'available',
        bytes: typeof content === 'string' ? utf8Len(content) : jsonLen(content ?? null),
        of: block.tool_use_id,
      };
      if (typeof block.is_error === 'boolean') p.failed = block.is_error;
      if (text !== undefined) p.text = text;
      // The structured outcome rides with the result it belongs to; it is the only full copy of long output.
      const turFor = isObj(toolUseResult) && !resultTaken.done && (toolUseResult.toolUseId === undefined || toolUseResult.toolUseId === block.tool_use_id);
      if (turFor) {
        p.data = toolUseResult;
        resultTaken.done = true;
      } else if (text === undefined && content !== undefined) {
        p.data = content; // images, tool_reference: the landed copy may be the only one left
      } else if (text === undefined && isObj(toolUseResult)) {
        p.data = content ?? null;
      }
      if (turFor && text === undefined && content !== undefined && typeof content !== 'string') {
        dropped.push({ what: 'result content without text', bytes: jsonLen(content), why: 'the structured outcome in data stands in for it' });
      }
      return p;
    }
    case 'image':
    case 'document': {
      const src = block.source;
      if (isObj(src) && typeof src.data === 'string') {
        return { k: 'media', state: 'available', bytes: utf8Len(src.data), media: str(src.media_type) ?? 'application/octet-stream', data: src.data };
      }
      break;
    }
  }
  const raw = JSON.stringify(block);
  return unknownPart(raw, typeof block.type === 'string' ? `block type "${block.type}" is not one this dialect describes` : 'a content block with no type');
}

/** An edit's result gains a second `data` part: the workspace change its structured outcome describes (`changes/1`). */
function changePart(parts: Part[], tur: unknown, cwd: string | undefined): Part | undefined {
  const result = parts.find((p) => p.k === 'result' && p.of !== undefined && p.data === tur);
  if (!result?.of) return undefined;
  const rec = changeRecordOf(result.of, tur, cwd);
  if (!rec) return undefined;
  const m = measure(rec);
  return keepDataJson({ k: 'data', state: 'available', bytes: m.bytes, of: result.of, data: rec }, m.json);
}

const TYPE_FROM: Record<string, From> = { assistant: 'agent', user: 'external', system: 'runtime', attachment: 'runtime' };

function notificationToolUseId(text: string): string | undefined {
  if (!text.includes('<task-notification>')) return undefined;
  return /<tool-use-id>([^<]+)<\/tool-use-id>/.exec(text)?.[1]?.trim() || undefined;
}

/**
 * The child a notification names: the first `<task-id>` shaped like an agent id. A task id is a
 * generic handle (a background command, a monitor …), so one of another shape names no child.
 */
function notificationAgentId(text: string): string | undefined {
  if (!text.includes('<task-notification>')) return undefined;
  for (const m of text.matchAll(/<task-id>([^<]+)<\/task-id>/g)) {
    const id = m[1]!.trim();
    if (AGENT_ID.test(id)) return id;
  }
  return undefined;
}

function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((b) => (isObj(b) && typeof b.text === 'string' ? b.text : '')).join('\n');
  return '';
}

/**
 * Flags name states a record is in, in the dialect-neutral words assembly reads: `finished`,
 * `synthetic`, `external_input`, `injected`, `launch_ack`, `child_result`, `context_reset` and
 * `reset_summary` as asz writes them, `system_prompt` and `tool_schemas` on a `prompt_snapshot`
 * attachment carrying them, plus aszcol's `forked`, `interrupted`, `api_error`,
 * `local_command`, `turn_duration`, `notice` and `child_started`, so nothing above the adapter needs a
 * runtime field to find them.
 */
function flagsOf(o: Obj, msg: Obj | undefined, trigger: string | undefined): string[] {
  const f: string[] = [];
  const type = o.type;
  const att = isObj(o.attachment) ? o.attachment : undefined;
  const tur = isObj(o.toolUseResult) ? o.toolUseResult : undefined;
  if (msg && type === 'assistant' && str(msg.stop_reason)) f.push('finished');
  if (msg && type === 'assistant' && msg.model === '<synthetic>') f.push('synthetic');
  if (type === 'user' && msg) {
    const blocks = Array.isArray(msg.content) ? msg.content : [];
    const isResult = blocks.some((b) => isObj(b) && b.type === 'tool_result');
    if (o.isMeta === true) f.push('injected');
    else if (!isResult && o.isCompactSummary !== true && (trigger === 'external' || (trigger === undefined && isUntriggeredPrompt(o, msg))))
      f.push('external_input');
  }
  if (type === 'attachment' && att) f.push(att.type === 'queued_command' && att.commandMode === 'prompt' ? 'external_input' : 'injected');
  // What the runtime sent the model outside the messages (seen on 2.1.328): a view withholds these by rule.
  if (type === 'attachment' && att?.type === 'prompt_snapshot') {
    if (att.systemPrompt !== undefined) f.push('system_prompt');
    if (att.tools !== undefined) f.push('tool_schemas');
  }
  if (tur) {
    if (tur.status === 'async_launched') f.push('launch_ack');
    if (tur.status === 'completed' && typeof tur.agentId === 'string') f.push('child_result');
    if (tur.status === 'forked') f.push('forked');
    if (tur.interrupted === true) f.push('interrupted');
  }
  if (o.isCompactSummary === true) f.push('reset_summary');
  if (type === 'system' && o.subtype === 'compact_boundary') f.push('context_reset');
  if (type === 'system' && o.subtype === 'turn_duration') f.push('turn_duration');
  if (type === 'system' && o.subtype === 'api_error') f.push('api_error');
  if (type === 'system' && o.subtype === 'local_command') f.push('local_command');
  if (type === 'system' && typeof o.subtype === 'string' && !KNOWN_SYSTEM_SUBTYPES.has(o.subtype)) f.push('notice');
  return f;
}

/**
 * A prompt given with no `origin` at all (`claude -p`, a typed slash command) is still a person's
 * input when it opens a cycle (it carries `promptId`); the runtime's echo of a local command's
 * output, which shares the cycle, is not.
 */
function isUntriggeredPrompt(o: Obj, msg: Obj): boolean {
  if (typeof o.promptId !== 'string') return false;
  const text = contentText(msg.content).trimStart();
  return !text.startsWith('<local-command-stdout>') && !text.startsWith('<local-command-stderr>');
}

/** System records the model names a step for; any other subtype is a notice from the runtime. */
const KNOWN_SYSTEM_SUBTYPES = new Set(['compact_boundary', 'api_error', 'local_command', 'turn_duration']);

/** `origin.kind` in the model's words: a person, a completion notification, or something else. */
function triggerOf(kind: string | undefined): string | undefined {
  if (kind === undefined) return undefined;
  if (kind === 'human') return 'external';
  if (kind === 'task-notification') return 'notification';
  return 'unknown';
}

/** Converts one transcript line. Collection never stops on a line: what does not parse lands as `unknown`. */
export function convertTranscriptLine(line: Buffer): Converted {
  let o: unknown;
  try {
    o = JSON.parse(line.toString('utf8'));
  } catch {
    return { parts: [unknownPart(line, 'the record is not valid JSON')] };
  }
  if (!isObj(o)) return { parts: [unknownPart(line, 'the record is not a JSON object')] };

  const type = typeof o.type === 'string' ? o.type : undefined;
  const msg = isObj(o.message) ? o.message : undefined;
  const att = isObj(o.attachment) ? o.attachment : undefined;
  const tur = o.toolUseResult;
  const r: Converted = { parts: [] };
  r.id = str(o.uuid);
  r.parent = str(o.parentUuid);
  if (type === 'assistant' && msg) r.call = str(msg.id);
  r.run = str(o.promptId);
  if (type === 'system' && o.subtype === 'compact_boundary') r.continues = str(o.logicalParentUuid);
  if (isObj(tur)) {
    r.tool = str(tur.toolUseId);
    r.child = str(tur.agentId);
    r.batch = str(tur.runId);
  }
  // A notification is read only from plain-string content (or a queued command's prompt).
  const noteText = type === 'user' && msg && typeof msg.content === 'string' ? msg.content : att && typeof att.prompt === 'string' ? att.prompt : undefined;
  if (noteText !== undefined) {
    r.tool ??= notificationToolUseId(noteText);
    r.child ??= notificationAgentId(noteText);
  }
  r.label = str(o.aiTitle);
  if (type && TYPE_FROM[type]) r.from = TYPE_FROM[type];
  r.time = str(o.timestamp);
  const origin = isObj(o.origin) ? o.origin : att && isObj(att.origin) ? att.origin : undefined;
  r.trigger = triggerOf(origin ? str(origin.kind) : undefined);
  const flags = flagsOf(o, msg, r.trigger);
  if (flags.length) r.flags = flags;
  if (msg && type === 'assistant') {
    r.model = str(msg.model);
    r.usage = usageOf(msg.usage);
  }
  const dropped: Dropped[] = [];
  if ((type === 'user' || type === 'assistant') && msg && msg.content !== undefined) {
    const c = msg.content;
    if (typeof c === 'string') r.parts.push({ k: 'text', state: 'available', bytes: utf8Len(c), text: c });
    else if (Array.isArray(c)) {
      const taken = { done: false };
      for (const b of c) r.parts.push(blockPart(b, dropped, tur, taken));
      const change = changePart(r.parts, tur, str(o.cwd));
      if (change) r.parts.push(change);
      if (typeof tur === 'string' && tur) dropped.push({ what: 'toolUseResult string', bytes: utf8Len(tur), why: STRING_TUR_WHY });
    } else r.parts.push(unknownPart(JSON.stringify(c), 'message content that is neither a string nor a list'));
  } else if (type === 'attachment' && att) {
    const text = typeof att.text === 'string' ? att.text : typeof att.content === 'string' ? att.content : undefined;
    if (text !== undefined) r.parts.push({ k: 'text', state: 'available', bytes: utf8Len(text), text });
    else {
      const m = measure(att);
      r.parts.push(keepDataJson({ k: 'data', state: 'available', bytes: m.bytes, data: att }, m.json));
    }
  } else {
    // System records and the runtime's own bookkeeping (api-request, queue-operation, …) travel whole.
    r.parts.push({ k: 'data', state: 'available', bytes: line.length, data: o });
  }
  if (dropped.length) r.dropped = dropped;
  return r;
}

function parseDocument(doc: Buffer): { value?: Obj; part: Part } {
  try {
    const v = JSON.parse(doc.toString('utf8'));
    if (isObj(v)) return { value: v, part: { k: 'data', state: 'available', bytes: doc.length, data: v } };
    return { part: unknownPart(doc, 'the document is not a JSON object') };
  } catch {
    return { part: unknownPart(doc, 'the document is not valid JSON') };
  }
}

/** A child agent's sidecar (`agent-<id>.meta.json`), read whole. */
export function convertSidecar(doc: Buffer, agentId: string): Converted {
  const { value, part } = parseDocument(doc);
  const r: Converted = { from: 'runtime', child: agentId, parts: [part] };
  if (value) {
    r.tool = str(value.toolUseId);
    r.label = str(value.description);
    r.started_by = str(value.parentAgentId);
  }
  return r;
}

/** A workflow run's manifest (`workflows/wf_<run>.json`), read whole; each change lands as a new version. */
export function convertManifest(doc: Buffer, run: string): Converted {
  const { value, part } = parseDocument(doc);
  const r: Converted = { from: 'runtime', batch: run, parts: [part] };
  if (value) r.label = str(value.workflowName);
  return r;
}

/** A workflow's program: kept because it is part of the session, but it is code, not data. */
export function convertScript(doc: Buffer, run: string, label: string | undefined): Converted {
  return { from: 'runtime', batch: run, label, parts: [unknownPart(doc, 'a workflow script is a program, not a record')] };
}

/** One line of a workflow run's journal. */
export function convertJournalLine(line: Buffer, run: string): Converted {
  let o: unknown;
  try {
    o = JSON.parse(line.toString('utf8'));
  } catch {
    return { from: 'runtime', batch: run, parts: [unknownPart(line, 'the record is not valid JSON')] };
  }
  if (!isObj(o)) return { from: 'runtime', batch: run, parts: [unknownPart(line, 'the record is not a JSON object')] };
  const r: Converted = { from: 'runtime', batch: run, parts: [{ k: 'data', state: 'available', bytes: line.length, data: o }] };
  r.child = str(o.agentId);
  r.time = str(o.timestamp) ?? (typeof o.ts === 'string' ? o.ts : undefined);
  if (o.type === 'result') r.flags = ['child_result'];
  else if (o.type === 'started') r.flags = ['child_started'];
  return r;
}
