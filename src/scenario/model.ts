/**
 * The scenario format: a short YAML conversation in the model's own words (the Go project's
 * `docs/en/guides/scenario.md` is the reference). Parsing refuses an unknown key with its path.
 */
import { AszError } from '../util/errors.js';
import { parseDuration } from '../util/units.js';
import { EDITING_TOOLS, type ScenarioChange } from './edit-outcome.js';

export class ScenarioError extends AszError {}

export interface Usage {
  in?: number;
  out?: number;
  cache_read?: number;
  cache_write?: number;
}
export interface ResultSpec {
  text: string;
  after?: number;
  failed?: boolean;
  string?: boolean;
  lost?: boolean;
}
export interface ToolSpec {
  id?: string;
  name: string;
  input?: unknown;
  result?: ResultSpec;
  changes?: ScenarioChange[];
  /** What the aszcol plugin's hooks saw of an MCP call: written as the hooks' observations (scenario/plugin-observations.ts). */
  execution?: ExecutionSpec;
}
/** An MCP call as the plugin's hooks see it (asz 0.6's `execution` block). */
export interface ExecutionSpec {
  server: string;
  /** Where Claude Code's configuration of the server came from: `user`, `project`, `local`, `dynamic` (`--mcp-config`) or `plugin`. */
  source?: 'user' | 'project' | 'local' | 'dynamic' | 'plugin';
  /** Empty follows the result: `failed` when it failed, `returned` otherwise. */
  outcome?: 'returned' | 'failed' | 'interrupted';
  duration?: number;
  /** What the server was sent, when a hook before the call changed it; the tool's own input otherwise. */
  arguments?: Record<string, unknown>;
  /** The runtime hands the hook after the call the same event twice: one call, two identical observations. */
  twice?: boolean;
}
export interface ChildSpec {
  name: string;
  prompt: string;
  after?: number;
  steps: Step[];
  notify?: boolean;
  lost?: boolean;
  /** What this child's own requests carry, when narrower than its parent's (provider bodies only). */
  systemPrompt?: string;
  tools?: ToolDefinition[];
}
/** A tool a request body advertises, as the Messages API takes it. */
export interface ToolDefinition {
  name: string;
  description?: string;
  input_schema?: Record<string, unknown>;
}
export interface CallSpec {
  thinking?: string;
  text?: string;
  tool?: ToolSpec;
  agent?: ChildSpec;
  skill?: { name: string; agent: string; steps: Step[]; lost?: boolean };
  /** `script_project`: the project directory the run's script is filed under, when the agent was in another one than the session's. */
  workflow?: { name: string; children: ChildSpec[]; script_project?: string };
  usage?: Usage;
}
export type StepBody =
  | { input: string }
  | { queued: { text: string; mode: string } }
  | { inject: { type: string; text?: string } & Record<string, unknown> }
  | { call: CallSpec }
  | { result: { of: string; text: string; after?: number; failed?: boolean; string?: boolean } }
  | { error: string }
  | { reset: { summary: string } }
  | { replay: number }
  | { system: { subtype: string; fields?: Record<string, unknown> } };
export type Step = StepBody & { after?: number; checkpoint?: string; lost?: boolean };

/** A tool call the aszcol plugin's hooks saw, as the generator placed it: what `plugin-observations.ts` turns into hook input. */
export interface PluginCall {
  /** `main`, or the child agent's id. */
  stream: string;
  toolUseId: string;
  tool: ToolSpec;
  /** When the model's tool_use landed (the hook before the call) and when its result did (the hook after); none for an unfinished tool. */
  usedAt: number;
  resultAt?: number;
}

/** A key the scenario wrote that the generator does not act on yet: the check reports it, never drops it. */
export interface IgnoredKey {
  path: string;
  reason: string;
}

export interface Scenario {
  name: string;
  /** Keys accepted but not generated yet; a check over this scenario is `incomplete` naming each. */
  ignored: IgnoredKey[];
  session?: string;
  project?: string;
  title?: string;
  /** What started the runtime, as it writes on every record: `cli` (the default), `sdk-cli`, `sdk-ts`, … */
  entrypoint?: string;
  interval: number;
  steps: Step[];
  /** Every call's request and response bodies are written as the runtime's raw API body dump. */
  providerBodies: boolean;
  systemPrompt?: string;
  tools?: ToolDefinition[];
}

const STEP_KINDS = ['input', 'queued', 'inject', 'call', 'result', 'error', 'reset', 'replay', 'system'] as const;
const TOP_KEYS = new Set([
  'session',
  'project',
  'title',
  'entrypoint',
  'interval',
  'steps',
  'provider_bodies',
  'system_prompt',
  'tools',
  'langchain',
  'langsmith',
]);

function obj(v: unknown, path: string): Record<string, unknown> {
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new ScenarioError(`must be a mapping`, path);
  return v as Record<string, unknown>;
}

function allow(o: Record<string, unknown>, keys: string[], path: string): void {
  for (const k of Object.keys(o)) if (!keys.includes(k)) throw new ScenarioError(`unknown key "${k}" (allowed: ${keys.join(', ')})`, path);
}

const dur = (v: unknown, path: string): number | undefined => {
  if (v === undefined) return undefined;
  try {
    return parseDuration(typeof v === 'number' ? `${v}s` : v);
  } catch (e) {
    throw new ScenarioError((e as Error).message, path);
  }
};

function str(v: unknown, path: string): string {
  if (typeof v !== 'string') throw new ScenarioError('must be a string', path);
  return v;
}

function result(v: unknown, path: string): ResultSpec {
  if (typeof v === 'string') return { text: v };
  const o = obj(v, path);
  allow(o, ['text', 'after', 'failed', 'string', 'lost'], path);
  return {
    text: str(o.text ?? '', `${path}.text`),
    after: dur(o.after, `${path}.after`),
    failed: o.failed as boolean | undefined,
    string: o.string as boolean | undefined,
    lost: o.lost as boolean | undefined,
  };
}

const NOT_GENERATED: Record<'system_prompt' | 'tools', string> = {
  system_prompt: 'a system prompt is written only into provider bodies, and this scenario asks for none (provider_bodies is not true)',
  tools: 'tools are written only into provider bodies, and this scenario asks for none (provider_bodies is not true)',
};

const SOURCES = ['user', 'project', 'local', 'dynamic', 'plugin'];
const OUTCOMES = ['returned', 'failed', 'interrupted'];

function execution(v: unknown, tool: string, path: string): ExecutionSpec {
  const o = obj(v, path);
  allow(o, ['server', 'source', 'outcome', 'duration', 'arguments', 'twice'], path);
  if (!tool.startsWith('mcp__'))
    throw new ScenarioError(`an execution block describes a call to an MCP server, and ${tool} is not an mcp__<server>__<tool> name`, path);
  if (o.source !== undefined && !SOURCES.includes(o.source as string)) throw new ScenarioError(`must be one of ${SOURCES.join(', ')}`, `${path}.source`);
  if (o.outcome !== undefined && !OUTCOMES.includes(o.outcome as string)) throw new ScenarioError(`must be one of ${OUTCOMES.join(', ')}`, `${path}.outcome`);
  if (o.twice !== undefined && typeof o.twice !== 'boolean') throw new ScenarioError('must be true or false', `${path}.twice`);
  return {
    server: str(o.server, `${path}.server`),
    source: o.source as ExecutionSpec['source'],
    outcome: o.outcome as ExecutionSpec['outcome'],
    duration: dur(o.duration, `${path}.duration`),
    arguments: o.arguments === undefined ? undefined : obj(o.arguments, `${path}.arguments`),
    twice: o.twice as boolean | undefined,
  };
}

/** Keys of runtimes aszcol does not collect: reported, never generated, never failed for that alone. */
const OTHER_RUNTIME_KEYS = ['langchain', 'langsmith'] as const;
const RUNTIME_NOT_SUPPORTED = 'runtime not supported: aszcol collects Claude Code only';

/** Notes each key the generator does not act on, with why; `provider_bodies: false` asks for nothing. */
function noteIgnored(o: Record<string, unknown>, keys: (keyof typeof NOT_GENERATED)[], path: string, ignored: IgnoredKey[]): void {
  for (const k of keys) if (o[k] !== undefined && o[k] !== false) ignored.push({ path: `${path}.${k}`, reason: NOT_GENERATED[k] });
}

function changesOf(v: unknown, tool: string, path: string): ScenarioChange[] {
  if (!Array.isArray(v) || v.length === 0) throw new ScenarioError('must be a non-empty list of {path, before, after}', path);
  if (EDITING_TOOLS.has(tool) && v.length !== 1) throw new ScenarioError(`an ${tool} call changes one file, got ${v.length}`, path);
  return v.map((c, i) => {
    const o = obj(c, `${path}[${i}]`);
    allow(o, ['path', 'before', 'after'], `${path}[${i}]`);
    return { path: str(o.path, `${path}[${i}].path`), before: str(o.before ?? '', `${path}[${i}].before`), after: str(o.after ?? '', `${path}[${i}].after`) };
  });
}

function toolDefinitions(v: unknown, path: string): ToolDefinition[] | undefined {
  if (v === undefined) return undefined;
  if (!Array.isArray(v)) throw new ScenarioError('must be a list of {name, description, input_schema}', path);
  return v.map((t, i) => {
    const o = obj(t, `${path}[${i}]`);
    allow(o, ['name', 'description', 'input_schema'], `${path}[${i}]`);
    const def: ToolDefinition = { name: str(o.name, `${path}[${i}].name`) };
    if (o.description !== undefined) def.description = str(o.description, `${path}[${i}].description`);
    if (o.input_schema !== undefined) def.input_schema = obj(o.input_schema, `${path}[${i}].input_schema`);
    return def;
  });
}

function child(v: unknown, path: string, ignored: IgnoredKey[]): ChildSpec {
  const o = obj(v, path);
  allow(o, ['name', 'prompt', 'after', 'steps', 'notify', 'lost', 'system_prompt', 'tools'], path);
  // Noted here; parseScenario takes the notes back when the scenario does write provider bodies.
  noteIgnored(o, ['system_prompt', 'tools'], path, ignored);
  return {
    systemPrompt: o.system_prompt === undefined ? undefined : str(o.system_prompt, `${path}.system_prompt`),
    tools: toolDefinitions(o.tools, `${path}.tools`),
    name: str(o.name, `${path}.name`),
    prompt: str(o.prompt ?? '', `${path}.prompt`),
    after: dur(o.after, `${path}.after`),
    steps: steps(o.steps ?? [], `${path}.steps`, ignored),
    notify: o.notify as boolean | undefined,
    lost: o.lost as boolean | undefined,
  };
}

function call(v: unknown, path: string, ignored: IgnoredKey[]): CallSpec {
  const o = obj(v, path);
  allow(o, ['thinking', 'text', 'tool', 'agent', 'skill', 'workflow', 'usage'], path);
  const c: CallSpec = {};
  if (o.thinking !== undefined) c.thinking = String(o.thinking);
  if (o.text !== undefined) c.text = str(o.text, `${path}.text`);
  if (o.tool !== undefined) {
    const t = obj(o.tool, `${path}.tool`);
    allow(t, ['id', 'name', 'input', 'result', 'changes', 'execution'], `${path}.tool`);
    const name = str(t.name, `${path}.tool.name`);
    c.tool = {
      id: t.id as string | undefined,
      name: str(t.name, `${path}.tool.name`),
      input: t.input,
      result: t.result === undefined ? undefined : result(t.result, `${path}.tool.result`),
      changes: t.changes === undefined ? undefined : changesOf(t.changes, name, `${path}.tool.changes`),
      execution: t.execution === undefined ? undefined : execution(t.execution, name, `${path}.tool.execution`),
    };
  }
  if (o.agent !== undefined) c.agent = child(o.agent, `${path}.agent`, ignored);
  if (o.skill !== undefined) {
    const s = obj(o.skill, `${path}.skill`);
    allow(s, ['name', 'agent', 'steps', 'lost'], `${path}.skill`);
    c.skill = {
      name: str(s.name, `${path}.skill.name`),
      agent: str(s.agent, `${path}.skill.agent`),
      steps: steps(s.steps ?? [], `${path}.skill.steps`, ignored),
      lost: s.lost as boolean | undefined,
    };
  }
  if (o.workflow !== undefined) {
    const w = obj(o.workflow, `${path}.workflow`);
    allow(w, ['name', 'children', 'script_project'], `${path}.workflow`);
    c.workflow = {
      name: str(w.name, `${path}.workflow.name`),
      children: ((w.children as unknown[]) ?? []).map((x, i) => child(x, `${path}.workflow.children[${i}]`, ignored)),
    };
    if (w.script_project !== undefined) c.workflow.script_project = projectDirName(w.script_project, `${path}.workflow.script_project`);
  }
  const kinds = ['tool', 'agent', 'skill', 'workflow'].filter((k) => o[k] !== undefined);
  if (kinds.length > 1) throw new ScenarioError(`a call has at most one of tool, agent, skill, workflow (got ${kinds.join(', ')})`, path);
  if (o.usage !== undefined) {
    const u = obj(o.usage, `${path}.usage`);
    allow(u, ['in', 'out', 'cache_read', 'cache_write'], `${path}.usage`);
    c.usage = u as Usage;
  }
  return c;
}

export function steps(v: unknown, path: string, ignored: IgnoredKey[]): Step[] {
  if (!Array.isArray(v)) throw new ScenarioError('must be a list of steps', path);
  return v.map((raw, i) => {
    const p = `${path}[${i}]`;
    const o = obj(raw, p);
    const kinds = STEP_KINDS.filter((k) => o[k] !== undefined);
    if (kinds.length !== 1) throw new ScenarioError(`a step is exactly one of ${STEP_KINDS.join(', ')}`, p);
    allow(o, [kinds[0]!, 'after', 'checkpoint', 'lost'], p);
    const k = kinds[0]!;
    const step: Record<string, unknown> = { after: dur(o.after, `${p}.after`) };
    if (o.checkpoint !== undefined) step.checkpoint = str(o.checkpoint, `${p}.checkpoint`);
    if (o.lost !== undefined) step.lost = o.lost === true;
    const b = o[k];
    switch (k) {
      case 'input':
        step.input = str(b, `${p}.input`);
        break;
      case 'error':
        step.error = str(b, `${p}.error`);
        break;
      case 'replay':
        step.replay = Number(b);
        break;
      case 'call':
        step.call = call(b, `${p}.call`, ignored);
        break;
      case 'queued': {
        const q = obj(b, `${p}.queued`);
        allow(q, ['text', 'mode'], `${p}.queued`);
        step.queued = { text: str(q.text, `${p}.queued.text`), mode: str(q.mode ?? 'prompt', `${p}.queued.mode`) };
        break;
      }
      case 'inject': {
        const q = obj(b, `${p}.inject`);
        step.inject = { ...q, type: str(q.type, `${p}.inject.type`) };
        break;
      }
      case 'result': {
        const q = obj(b, `${p}.result`);
        allow(q, ['of', 'text', 'after', 'failed', 'string'], `${p}.result`);
        step.result = {
          of: str(q.of, `${p}.result.of`),
          text: str(q.text ?? '', `${p}.result.text`),
          after: dur(q.after, `${p}.result.after`),
          failed: q.failed,
          string: q.string,
        };
        break;
      }
      case 'reset': {
        const q = obj(b, `${p}.reset`);
        allow(q, ['summary'], `${p}.reset`);
        step.reset = { summary: str(q.summary ?? '', `${p}.reset.summary`) };
        break;
      }
      case 'system': {
        const q = obj(b, `${p}.system`);
        allow(q, ['subtype', 'fields'], `${p}.system`);
        step.system = { subtype: str(q.subtype, `${p}.system.subtype`), fields: q.fields as Record<string, unknown> | undefined };
        break;
      }
    }
    return step as Step;
  });
}

export function parseScenario(doc: unknown, name: string): Scenario {
  const o = obj(doc, name);
  for (const k of Object.keys(o)) if (!TOP_KEYS.has(k)) throw new ScenarioError(`unknown key "${k}"`, name);
  const ignored: IgnoredKey[] = [];
  if (o.provider_bodies !== undefined && typeof o.provider_bodies !== 'boolean') throw new ScenarioError('must be true or false', `${name}.provider_bodies`);
  const providerBodies = o.provider_bodies === true;
  noteIgnored(o, ['system_prompt', 'tools'], name, ignored);
  for (const k of OTHER_RUNTIME_KEYS) if (o[k] !== undefined) ignored.push({ path: `${name}.${k}`, reason: RUNTIME_NOT_SUPPORTED });
  const parsedSteps = steps(o.steps, `${name}.steps`, ignored);
  const bodyOnly = (i: IgnoredKey) => i.reason === NOT_GENERATED.system_prompt || i.reason === NOT_GENERATED.tools;
  return {
    name,
    ignored: providerBodies ? ignored.filter((i) => !bodyOnly(i)) : ignored,
    session: o.session as string | undefined,
    project: o.project as string | undefined,
    title: o.title as string | undefined,
    entrypoint: o.entrypoint === undefined ? undefined : str(o.entrypoint, `${name}.entrypoint`),
    interval: dur(o.interval, `${name}.interval`) ?? 1000,
    steps: parsedSteps,
    providerBodies,
    systemPrompt: o.system_prompt === undefined ? undefined : str(o.system_prompt, `${name}.system_prompt`),
    tools: toolDefinitions(o.tools, `${name}.tools`),
  };
}

/** A project directory's name as Claude Code makes one: one path segment, never `.` or `..`. */
function projectDirName(v: unknown, path: string): string {
  const name = str(v, path);
  if (!name || name === '.' || name === '..' || ['/', '\\', '\0'].some((c) => name.includes(c)))
    throw new ScenarioError(`"${name}" is not a project directory name (one path segment)`, path);
  return name;
}
