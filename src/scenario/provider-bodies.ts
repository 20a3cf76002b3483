/**
 * A scenario's raw API body dump, as Claude Code 2.1.328 writes it with
 * `OTEL_LOG_RAW_API_BODIES=file:DIR` (the shape measured in test/e2e/lab-provider-bodies.test.ts):
 * per call a `<uuid>.request.json` and a `<request id>.response.json`, and one `index.jsonl` line
 * naming both. Derived from the generated transcripts, so every body matches the call it belongs to.
 */
import { createHash } from 'node:crypto';
import type { Generated } from './generate.js';
import type { ChildSpec, Scenario, Step, ToolDefinition } from './model.js';

const MAX_TOKENS = 32000;
/** Calls the runtime made up itself never reached the provider, so they have no bodies. */
const SYNTHETIC_MODEL = '<synthetic>';

interface Line {
  type?: string;
  uuid?: string;
  timestamp?: string;
  requestId?: string;
  isCompactSummary?: boolean;
  message?: { id?: string; role?: string; model?: string; content?: unknown; stop_reason?: unknown; usage?: unknown };
}

interface Call {
  id: string;
  uuid: string;
  requestId: string;
  model: string;
  timestamp: string;
  blocks: unknown[];
  stop: unknown;
  usage: unknown;
  /** The conversation the request carried: every message of the stream before this call. */
  messages: { role: string; content: unknown }[];
}

interface Advertised {
  system?: string;
  tools?: ToolDefinition[];
}

function uuidOf(seed: string): string {
  const h = createHash('sha256').update(seed).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-8${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/** The children of a scenario by name, wherever they are started, so a child's stream finds its own system prompt and tools. */
function childrenByName(steps: Step[], out = new Map<string, ChildSpec>()): Map<string, ChildSpec> {
  for (const s of steps) {
    if (!('call' in s)) continue;
    const c = s.call;
    for (const child of [...(c.agent ? [c.agent] : []), ...(c.workflow?.children ?? [])]) {
      out.set(child.name, child);
      childrenByName(child.steps, out);
    }
    if (c.skill) childrenByName(c.skill.steps, out);
  }
  return out;
}

/** Each provider call of one transcript, in order, with the messages sent before it. */
function callsOf(text: string): Call[] {
  const calls: Call[] = [];
  const messages: { role: string; content: unknown }[] = [];
  let open: Call | undefined;
  for (const raw of text.split('\n')) {
    if (!raw.trim()) continue;
    const l = JSON.parse(raw) as Line;
    const m = l.message;
    if (l.type === 'assistant' && m?.id && m.model !== SYNTHETIC_MODEL) {
      if (open?.id !== m.id) {
        open = {
          id: m.id,
          uuid: l.uuid ?? '',
          requestId: l.requestId ?? `req_${m.id}`,
          model: m.model ?? '',
          timestamp: l.timestamp ?? '',
          blocks: [],
          stop: null,
          usage: undefined,
          messages: [...messages],
        };
        calls.push(open);
        messages.push({ role: 'assistant', content: open.blocks });
      }
      open.blocks.push(...(Array.isArray(m.content) ? (m.content as unknown[]) : []));
      open.stop = m.stop_reason ?? open.stop;
      open.usage = m.usage;
      open.timestamp = l.timestamp ?? open.timestamp;
    } else if (l.type === 'user' && m?.role === 'user') {
      open = undefined;
      messages.push({ role: 'user', content: m.content });
    }
  }
  return calls;
}

/** The dump's file name for a response: the request id, kept to the characters a file name can always hold. */
const responseName = (requestId: string) => `${requestId.replace(/[^A-Za-z0-9_-]/g, '_')}.response.json`;

/**
 * The body files of every call the generated session made, named relative to the dump directory.
 * Main's calls advertise the scenario's system prompt and tools; a child's its own when it has them.
 */
export function providerBodyFiles(scn: Scenario, g: Generated): Map<string, string> {
  const files = new Map<string, string>();
  if (!scn.providerBodies) return files;
  const main: Advertised = { system: scn.systemPrompt, tools: scn.tools };
  const children = childrenByName(scn.steps);
  const nameOfAgent = new Map([...g.agents].map(([name, id]) => [id, name]));
  const index: { at: string; line: string }[] = [];
  for (const [rel, text] of g.files) {
    if (!rel.endsWith('.jsonl') || rel.endsWith('journal.jsonl')) continue;
    const agent = /agent-([^/]+)\.jsonl$/.exec(rel)?.[1];
    if (!agent && !rel.endsWith(`${g.session}.jsonl`)) continue;
    const spec = agent ? children.get(nameOfAgent.get(agent) ?? '') : undefined;
    const advertised: Advertised = agent ? { system: spec?.systemPrompt ?? main.system, tools: spec?.tools ?? main.tools } : main;
    for (const c of callsOf(text)) {
      const requestFile = `${uuidOf(`${g.session}/${c.id}/request`)}.request.json`;
      const responseFile = responseName(c.requestId);
      const request = {
        model: c.model,
        messages: c.messages,
        ...(advertised.system !== undefined ? { system: [{ type: 'text', text: advertised.system }] } : {}),
        tools: advertised.tools ?? [],
        metadata: { user_id: JSON.stringify({ device_id: uuidOf(`device/${g.session}`), account_uuid: '', session_id: g.session }) },
        max_tokens: MAX_TOKENS,
        stream: true,
      };
      const response = {
        id: c.id,
        type: 'message',
        role: 'assistant',
        model: c.model,
        content: c.blocks,
        stop_reason: c.stop,
        stop_sequence: null,
        usage: c.usage,
      };
      files.set(requestFile, JSON.stringify(request));
      files.set(responseFile, JSON.stringify(response));
      index.push({
        at: c.timestamp,
        line: JSON.stringify({
          session_id: g.session,
          request_id: c.requestId,
          message_id: c.id,
          message_uuid: c.uuid,
          model: c.model,
          timestamp: c.timestamp,
          request_file: requestFile,
          response_file: responseFile,
        }),
      });
    }
  }
  // The runtime appends a line as each call finishes, so the index is in time order across streams.
  index.sort((a, b) => a.at.localeCompare(b.at));
  if (index.length) files.set('index.jsonl', index.map((l) => l.line + '\n').join(''));
  return files;
}
