import { createHash } from 'node:crypto';
import type { ContextChange, InputManifest, MessageShape, OutputManifest } from '../../formats/view/prompt.js';

export type { ContextChange, InputManifest, OutputManifest };

/**
 * What a provider call was sent and what came back, read off the Messages API bodies Claude Code
 * dumps (the request as built, the last assistant message): the input manifest, and what changed in
 * the context since the previous call of the same stream. A message is compared as its content
 * means, not as it is spelled: Claude Code moves `cache_control` to the newest message and sends a
 * one-text-block message as a block list while it is newest and as a string afterwards (asz 0.6,
 * measured), so both spellings are one message here.
 */
/** Parameters a request may carry beyond model, messages, system, tools and metadata; each is reported as sent. */
const PARAMETERS = [
  'max_tokens',
  'thinking',
  'temperature',
  'top_p',
  'top_k',
  'stop_sequences',
  'tool_choice',
  'stream',
  'betas',
  'output_config',
  'context_management',
  'service_tier',
];

const digest = (s: string) => createHash('sha256').update(s).digest('hex');
const bytesOf = (s: string) => Buffer.byteLength(s, 'utf8');
type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => !!v && typeof v === 'object' && !Array.isArray(v);

/** A content block as its meaning: without its cache marker. */
function plainBlock(b: unknown): unknown {
  if (!isObj(b) || !('cache_control' in b)) return b;
  const { cache_control: _marker, ...rest } = b;
  return rest;
}

/** A message's content in one spelling: a single text block is its text. */
function plainContent(content: unknown): unknown {
  if (!Array.isArray(content)) return content;
  const blocks = content.map(plainBlock);
  if (blocks.length === 1 && isObj(blocks[0]) && blocks[0].type === 'text' && Object.keys(blocks[0]).length === 2) return blocks[0].text;
  return blocks;
}

function shapeOf(m: unknown): MessageShape {
  const msg = isObj(m) ? m : {};
  const role = typeof msg.role === 'string' ? msg.role : 'unknown';
  const plain = JSON.stringify(plainContent(msg.content)) ?? '';
  const blocks = Array.isArray(msg.content) ? msg.content.map((b) => (isObj(b) && typeof b.type === 'string' ? b.type : typeof b)) : ['text'];
  return { role, bytes: bytesOf(plain), blocks, digest: digest(role + '\n' + plain).slice(0, 16) };
}

function marker(v: unknown, at: string, out: InputManifest['cache_breakpoints']): void {
  if (!isObj(v) || !isObj(v.cache_control)) return;
  const ttl = v.cache_control.ttl;
  out.push({ at, ...(typeof ttl === 'string' ? { ttl } : {}) });
}

/** The input manifest of a request body; undefined when it is not a Messages API request. */
export function describeRequest(body: unknown): InputManifest | undefined {
  if (!isObj(body) || !Array.isArray(body.messages)) return undefined;
  const breakpoints: InputManifest['cache_breakpoints'] = [];
  const sys = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : Array.isArray(body.system) ? body.system : [];
  const texts: string[] = [];
  sys.forEach((b, i) => {
    if (isObj(b) && typeof b.text === 'string') texts.push(b.text);
    marker(b, `system[${i}]`, breakpoints);
  });
  const text = texts.join('\n'); // the blocks as one text, a line break between (the lab's mock counts it so)
  const tools = Array.isArray(body.tools) ? body.tools : [];
  const names: string[] = [];
  const digests: Record<string, string> = {};
  let schemaBytes = 0;
  tools.forEach((t, i) => {
    const name = isObj(t) && typeof t.name === 'string' ? t.name : `#${i}`;
    const spelled = JSON.stringify(plainBlock(t)) ?? '';
    names.push(name);
    digests[name] = digest(spelled).slice(0, 16);
    schemaBytes += bytesOf(spelled);
    marker(t, `tools[${i}]`, breakpoints);
  });
  const items = body.messages.map(shapeOf);
  const roles: Record<string, number> = {};
  for (const m of items) roles[m.role] = (roles[m.role] ?? 0) + 1;
  body.messages.forEach((m, i) => {
    if (isObj(m) && Array.isArray(m.content)) m.content.forEach((b, j) => marker(b, `messages[${i}].content[${j}]`, breakpoints));
  });
  const parameters: Record<string, unknown> = {};
  for (const k of PARAMETERS) if (body[k] !== undefined) parameters[k] = body[k];
  return {
    ...(typeof body.model === 'string' ? { model: body.model } : {}),
    system: { blocks: sys.length, chars: [...text].length, bytes: bytesOf(text), sha256: digest(text), text },
    tools: { count: tools.length, names, schema_bytes: schemaBytes, digests },
    messages: { count: items.length, roles, bytes: items.reduce((a, m) => a + m.bytes, 0), items },
    parameters,
    cache_breakpoints: breakpoints,
  };
}

/** The stop reason, usage and content kinds of a response body. */
export function describeResponse(body: unknown): OutputManifest | undefined {
  if (!isObj(body)) return undefined;
  const u = isObj(body.usage) ? body.usage : undefined;
  const n = (v: unknown) => (typeof v === 'number' ? v : undefined);
  return {
    ...(typeof body.id === 'string' ? { message_id: body.id } : {}),
    ...(typeof body.model === 'string' ? { model: body.model } : {}),
    ...(typeof body.stop_reason === 'string' ? { stop_reason: body.stop_reason } : {}),
    content: Array.isArray(body.content) ? body.content.map((b) => (isObj(b) && typeof b.type === 'string' ? b.type : typeof b)) : [],
    ...(u
      ? {
          usage: {
            input: n(u.input_tokens),
            output: n(u.output_tokens),
            cache_read: n(u.cache_read_input_tokens),
            cache_creation: n(u.cache_creation_input_tokens),
          },
        }
      : {}),
  };
}

/** What changed in the context from one call of a stream to the next. */
export function contextChange(prev: InputManifest, cur: InputManifest, previous: string): ContextChange {
  const a = prev.messages.items;
  const b = cur.messages.items;
  let kept = 0;
  while (kept < a.length && kept < b.length && a[kept]!.digest === b[kept]!.digest) kept++;
  const before = new Set(prev.tools.names);
  const after = new Set(cur.tools.names);
  const keys = new Set([...Object.keys(prev.parameters), ...Object.keys(cur.parameters)]);
  return {
    previous,
    messages_kept: kept,
    messages_added: b.length - kept,
    messages_dropped: a.length - kept,
    added: b.slice(kept).map(({ role, bytes, blocks }) => ({ role, bytes, blocks })),
    tools_added: cur.tools.names.filter((n) => !before.has(n)),
    tools_removed: prev.tools.names.filter((n) => !after.has(n)),
    tools_changed: cur.tools.names.filter((n) => before.has(n) && prev.tools.digests[n] !== cur.tools.digests[n]),
    system_changed: prev.system.sha256 !== cur.system.sha256,
    system_chars_delta: cur.system.chars - prev.system.chars,
    parameters_changed: [...keys].filter((k) => JSON.stringify(prev.parameters[k]) !== JSON.stringify(cur.parameters[k])).sort(),
  };
}
