/**
 * One Claude Code hook event, as the plugin's `aszcol hook` receives it on standard input, turned
 * into a runtime-neutral observation (`aszcol-hook/1`) of one tool call or of the session's start
 * or end. The only place that knows the hook's field names (`hook_event_name`, `tool_use_id`,
 * `tool_response`, `duration_ms`, `agent_id`, …; checked against Claude Code 2.1.328 in the lab).
 *
 * It keeps the size and the SHA-256 of the tool's input and answer, never their text: a hook sees
 * every file a tool read, and the transcript already holds what the model was shown. Input that
 * is not one JSON object (malformed, cut short, too large to parse in the budget) still becomes an
 * observation, with what could be read from it and the reason it may not be placeable.
 */
import { createHash } from 'node:crypto';

export const HOOK_SCHEMA = 'aszcol-hook/1';
/** Parsing more than this would not fit the hook's time budget; larger input is measured and searched, not parsed. */
export const MAX_PARSED_INPUT = 4 * 1024 * 1024;
const MAX_TEXT = 1024;
const SCAN_LIMIT = 256;

export type HookEventKind = 'tool_pre' | 'tool_post' | 'tool_failed' | 'session_start' | 'session_end' | 'other';
export type ExecutionOutcome = 'returned' | 'failed' | 'interrupted';

export interface Measured {
  state: 'size_only';
  bytes: number;
  sha256: string;
}

/** A shallow look at the working directory: its entries' size and modification time (best effort, see `shallowScan`). */
export interface DirScan {
  dir: string;
  /** name → `size:mtimeMs`; directories as `dir`. */
  entries: Record<string, string>;
  /** False when the directory held more entries than were looked at, or could not be read. */
  complete: boolean;
}

export interface HookObservation {
  schema: typeof HOOK_SCHEMA;
  /** The digest of the hook's input: the same event posted and also spooled is one observation. */
  id: string;
  event: HookEventKind;
  native_event?: string;
  session?: string;
  /** `main`, or the subagent's id when the event came from inside one. */
  stream: string;
  tool?: string;
  tool_name?: string;
  /**
   * The server and tool an `mcp__<server>__<tool>` name names. `source` is where Claude Code's
   * configuration of the server came from, in its own word (the input's `mcp_server.source`:
   * `local`, `project`, `user`, `dynamic` for `--mcp-config`, `plugin` for a plugin's server), else
   * looked up in the configuration files (mcp-server-source.ts); `name` is the runtime's name of the
   * server when it differs from the tool name's (a plugin's `plugin:<plugin>:<server>`).
   */
  mcp?: { server?: string; tool: string; source?: string; name?: string };
  outcome?: ExecutionOutcome;
  /** The runtime's own measure around the call (PostToolUse, PostToolUseFailure). */
  duration_ms?: number;
  /** When the hook ran, RFC 3339 with milliseconds. */
  time: string;
  arguments?: Measured;
  result?: Measured;
  error?: string;
  /** SessionStart's `source` or SessionEnd's `reason`. */
  reason?: string;
  cwd?: string;
  /** What a shell tool's own answer says, plus a shallow scan of the working directory (best effort). */
  shell?: { interrupted?: boolean; stdout_bytes?: number; stderr_bytes?: number; scan?: DirScan };
  input: { bytes: number; sha256: string; state: 'parsed' | 'malformed' | 'too_large' | 'empty' };
  /** Why the observation may not be placeable on a tool step. */
  problem?: string;
  /** The input's first characters, when it could not be parsed: the evidence kept. */
  head?: string;
}

/** Whether a landed value is one of these observations (a line of the spool, a record's `data`). */
export const isHookObservation = (v: unknown): v is HookObservation =>
  !!v && typeof v === 'object' && (v as { schema?: unknown }).schema === HOOK_SCHEMA && typeof (v as { id?: unknown }).id === 'string';

const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

/** Size and digest of a JSON value as compact JSON (what was sent, never its text). */
export function measure(v: unknown): Measured | undefined {
  if (v === undefined) return undefined;
  const text = JSON.stringify(v) ?? '';
  return { state: 'size_only', bytes: Buffer.byteLength(text), sha256: sha256(text) };
}

const KIND_OF: Record<string, HookEventKind> = {
  PreToolUse: 'tool_pre',
  PostToolUse: 'tool_post',
  PostToolUseFailure: 'tool_failed',
  SessionStart: 'session_start',
  SessionEnd: 'session_end',
};

/** `mcp__<server>__<tool>` split as the OAP's rule does: not exactly one server and one tool keeps the whole name as the tool. */
export function mcpTarget(name: string | undefined): { server?: string; tool: string } | undefined {
  if (!name?.startsWith('mcp__')) return undefined;
  const rest = name.slice(5).split('__');
  return rest.length === 2 && rest[0] && rest[1] ? { server: rest[0], tool: rest[1] } : { tool: name };
}

const str = (v: unknown) => (typeof v === 'string' && v !== '' ? v : undefined);
const clip = (s: string) => (s.length > MAX_TEXT ? s.slice(0, MAX_TEXT) + '…' : s);

/** A field's string value found by text, for input too large or too broken to parse: first match in the head, else the tail. */
function fieldByText(text: string, field: string): string | undefined {
  const re = new RegExp(`"${field}"\\s*:\\s*"((?:[^"\\\\]|\\\\.){1,200})"`);
  const m = re.exec(text);
  if (!m) return undefined;
  try {
    return JSON.parse(`"${m[1]}"`) as string;
  } catch {
    return undefined;
  }
}

function outcomeOf(kind: HookEventKind, ev: Record<string, unknown>): ExecutionOutcome | undefined {
  if (kind === 'tool_failed') return ev.is_interrupt === true ? 'interrupted' : 'failed';
  if (kind !== 'tool_post') return undefined;
  const r = ev.tool_response as Record<string, unknown> | undefined;
  if (r && typeof r === 'object' && r.interrupted === true) return 'interrupted';
  return 'returned';
}

function shellFacts(ev: Record<string, unknown>): HookObservation['shell'] {
  const r = ev.tool_response as Record<string, unknown> | undefined;
  if (!r || typeof r !== 'object') return undefined;
  const out: NonNullable<HookObservation['shell']> = {};
  if (typeof r.interrupted === 'boolean') out.interrupted = r.interrupted;
  if (typeof r.stdout === 'string') out.stdout_bytes = Buffer.byteLength(r.stdout);
  if (typeof r.stderr === 'string') out.stderr_bytes = Buffer.byteLength(r.stderr);
  return out;
}

/**
 * The observation of one hook's input. `time` is when the hook ran. Never throws: input it cannot
 * read is an observation with a `problem`.
 */
export function observeHookInput(raw: Buffer, time: string): HookObservation {
  const input = { bytes: raw.length, sha256: sha256(raw) };
  const base = { schema: HOOK_SCHEMA, id: input.sha256.slice(0, 32), time, stream: 'main' } as const;
  if (raw.length === 0 || raw.toString('utf8').trim() === '') {
    return { ...base, event: 'other', input: { ...input, state: 'empty' }, problem: 'the hook received no input' };
  }
  if (raw.length > MAX_PARSED_INPUT) {
    // Too large to parse in the budget: the identifiers are found by text in the head and the tail (`tool_use_id` comes after the response).
    const text = raw.subarray(0, 64 * 1024).toString('utf8') + '\n' + raw.subarray(Math.max(0, raw.length - 64 * 1024)).toString('utf8');
    const native = fieldByText(text, 'hook_event_name');
    const name = fieldByText(text, 'tool_name');
    const obs: HookObservation = {
      ...base,
      event: (native && KIND_OF[native]) || 'other',
      input: { ...input, state: 'too_large' },
      problem: `input of ${raw.length} bytes is over ${MAX_PARSED_INPUT}: measured and searched for its identifiers, not parsed; no duration or outcome`,
    };
    return withIds(obs, native, fieldByText(text, 'session_id'), fieldByText(text, 'agent_id'), fieldByText(text, 'tool_use_id'), name);
  }
  let ev: unknown;
  try {
    ev = JSON.parse(raw.toString('utf8'));
  } catch (err) {
    const text = raw.subarray(0, 64 * 1024).toString('utf8');
    const native = fieldByText(text, 'hook_event_name');
    const obs: HookObservation = {
      ...base,
      event: (native && KIND_OF[native]) || 'other',
      input: { ...input, state: 'malformed' },
      problem: `the hook's input is not JSON (${(err as Error).message}); identifiers were searched for by text`,
      head: clip(text.slice(0, 512)),
    };
    return withIds(
      obs,
      native,
      fieldByText(text, 'session_id'),
      fieldByText(text, 'agent_id'),
      fieldByText(text, 'tool_use_id'),
      fieldByText(text, 'tool_name'),
    );
  }
  if (!ev || typeof ev !== 'object' || Array.isArray(ev)) {
    return {
      ...base,
      event: 'other',
      input: { ...input, state: 'malformed' },
      problem: "the hook's input is JSON but not an object",
      head: clip(raw.toString('utf8').slice(0, 512)),
    };
  }
  const e = ev as Record<string, unknown>;
  const native = str(e.hook_event_name);
  const kind = (native && KIND_OF[native]) || 'other';
  const obs: HookObservation = { ...base, event: kind, input: { ...input, state: 'parsed' } };
  if (str(e.cwd)) obs.cwd = str(e.cwd);
  if (kind === 'tool_pre' || kind === 'tool_post' || kind === 'tool_failed') {
    obs.arguments = measure(e.tool_input);
    if (kind === 'tool_post') obs.result = measure(e.tool_response);
    const outcome = outcomeOf(kind, e);
    if (outcome) obs.outcome = outcome;
    if (typeof e.duration_ms === 'number' && Number.isFinite(e.duration_ms) && e.duration_ms >= 0) obs.duration_ms = Math.round(e.duration_ms);
    if (kind === 'tool_failed' && e.error !== undefined) obs.error = clip(typeof e.error === 'string' ? e.error : JSON.stringify(e.error));
    if (str(e.tool_name) === 'Bash' && kind === 'tool_post') obs.shell = shellFacts(e);
  }
  if (kind === 'session_start') obs.reason = str(e.source);
  if (kind === 'session_end') obs.reason = str(e.reason);
  if (kind === 'other') obs.problem = native ? `a hook event this plugin does not hook: ${native}` : 'the input names no hook event';
  const out = withIds(obs, native, str(e.session_id), str(e.agent_id), str(e.tool_use_id), str(e.tool_name));
  if (out.mcp) out.mcp = withRuntimeServer(out.mcp, e.mcp_server);
  return out;
}

/** A word the runtime uses for a configuration scope: short and plain, or it is not kept. */
const SCOPE_WORD = /^[a-z][a-z0-9_-]{0,31}$/;

/**
 * What the runtime itself says of the server (Claude Code 2.1.328 sends `mcp_server: {name,
 * source}` to every hook of an MCP tool; measured in the lab for all five scopes). Its word wins
 * over any lookup, since it is the scope the runtime actually loaded the server from.
 */
function withRuntimeServer(mcp: NonNullable<HookObservation['mcp']>, given: unknown): NonNullable<HookObservation['mcp']> {
  if (!given || typeof given !== 'object' || Array.isArray(given)) return mcp;
  const { name, source } = given as { name?: unknown; source?: unknown };
  const out = { ...mcp };
  if (typeof source === 'string' && SCOPE_WORD.test(source)) out.source = source;
  if (typeof name === 'string' && name !== '' && name !== mcp.server) out.name = clip(name);
  return out;
}

function withIds(obs: HookObservation, native?: string, session?: string, agent?: string, tool?: string, toolName?: string): HookObservation {
  if (native) obs.native_event = native;
  if (session) obs.session = session;
  else obs.problem ??= 'the input names no session';
  if (agent) obs.stream = agent;
  if (tool) obs.tool = tool;
  else if (obs.event.startsWith('tool_')) obs.problem ??= 'a tool event that names no tool use';
  if (toolName) {
    obs.tool_name = toolName;
    const mcp = mcpTarget(toolName);
    if (mcp) obs.mcp = mcp;
  }
  return orderKeys(obs);
}

/** Fixed key order, so the same input always gives the same bytes. */
function orderKeys(o: HookObservation): HookObservation {
  const keys: (keyof HookObservation)[] = [
    'schema',
    'id',
    'event',
    'native_event',
    'session',
    'stream',
    'tool',
    'tool_name',
    'mcp',
    'outcome',
    'duration_ms',
    'time',
    'arguments',
    'result',
    'error',
    'reason',
    'cwd',
    'shell',
    'input',
    'problem',
    'head',
  ];
  const out: Record<string, unknown> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out as unknown as HookObservation;
}

/** Whether a shell tool's hook should look at the working directory (a cheap, shallow look). */
export const wantsScan = (obs: HookObservation) => obs.tool_name === 'Bash' && (obs.event === 'tool_pre' || obs.event === 'tool_post') && obs.cwd !== undefined;

export { SCAN_LIMIT };
