/**
 * Claude Code's telemetry switches, as environment in its `settings.json` (`env` block): which
 * variables make the runtime export OTLP to a receiver, and a merge that changes only those keys.
 * Pure text in, text out; reading and writing the file is the command's job.
 */

export type OtlpProtocol = 'grpc' | 'http/protobuf';

export interface TelemetryChoice {
  /** The receiver's base URL, such as `http://127.0.0.1:4317`; the runtime appends `/v1/logs` for HTTP. */
  endpoint: string;
  protocol: OtlpProtocol;
  /** The prompt text in `user_prompt` events (otherwise only its length). */
  prompts?: boolean;
  /** Tool parameters (MCP server and tool names, bash commands) in `tool_result` events. */
  toolDetails?: boolean;
  /** Spans (interaction, LLM request, tool) through the beta tracing switch. */
  traces?: boolean;
  /** The provider request and response bodies, written as files under this directory. */
  rawBodiesDir?: string;
}

/** One variable and why it is set; the README's table is written from the same list. */
export interface TelemetryVariable {
  name: string;
  value: string;
  why: string;
}

export function telemetryVariables(c: TelemetryChoice): TelemetryVariable[] {
  const vars: TelemetryVariable[] = [
    { name: 'CLAUDE_CODE_ENABLE_TELEMETRY', value: '1', why: 'turns the OpenTelemetry export on' },
    { name: 'OTEL_LOGS_EXPORTER', value: 'otlp', why: 'events (API requests, tool results, decisions) as OTLP logs' },
    { name: 'OTEL_METRICS_EXPORTER', value: 'otlp', why: 'token, cost and time counters as OTLP metrics' },
    { name: 'OTEL_EXPORTER_OTLP_PROTOCOL', value: c.protocol, why: 'the port it is sent to speaks this protocol' },
    { name: 'OTEL_EXPORTER_OTLP_ENDPOINT', value: c.endpoint, why: "aszcol's claude_code_otlp receiver" },
  ];
  if (c.prompts) vars.push({ name: 'OTEL_LOG_USER_PROMPTS', value: '1', why: 'the prompt text, not only its length' });
  if (c.toolDetails) vars.push({ name: 'OTEL_LOG_TOOL_DETAILS', value: '1', why: 'MCP server and tool names and tool parameters' });
  if (c.traces) {
    vars.push({ name: 'CLAUDE_CODE_ENHANCED_TELEMETRY_BETA', value: '1', why: 'spans (beta)' });
    vars.push({ name: 'OTEL_TRACES_EXPORTER', value: 'otlp', why: 'spans as OTLP traces' });
  }
  if (c.rawBodiesDir !== undefined)
    vars.push({ name: 'OTEL_LOG_RAW_API_BODIES', value: `file:${c.rawBodiesDir}`, why: 'provider request and response bodies as files' });
  return vars;
}

export interface SettingChange {
  name: string;
  /** Absent when the variable was not set before. */
  before?: string;
  after: string;
}

export class SettingsFileError extends Error {}

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

/**
 * The settings text with `vars` set in its `env` block, every other key kept as it was, and the
 * list of what changed (empty: nothing to write). Throws SettingsFileError when the text is not a
 * JSON object or its `env` is not an object of strings, rather than overwrite what it cannot read.
 */
export function mergeTelemetrySettings(
  existing: string | undefined,
  vars: readonly TelemetryVariable[],
  file: string,
): { text: string; changes: SettingChange[] } {
  let doc: { [k: string]: Json } = {};
  if (existing !== undefined && existing.trim() !== '') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(existing);
    } catch (err) {
      throw new SettingsFileError(`${file}: not valid JSON (${(err as Error).message}); fix it or move it away, nothing was changed`);
    }
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed))
      throw new SettingsFileError(`${file}: expected a JSON object at the top, nothing was changed`);
    doc = parsed as { [k: string]: Json };
  }
  const envRaw = doc.env ?? {};
  if (envRaw === null || typeof envRaw !== 'object' || Array.isArray(envRaw))
    throw new SettingsFileError(`${file}: "env" must be an object of strings, nothing was changed`);
  const env = { ...envRaw };
  const changes: SettingChange[] = [];
  for (const v of vars) {
    const before = env[v.name];
    if (before !== undefined && typeof before !== 'string') throw new SettingsFileError(`${file}: env.${v.name} must be a string, nothing was changed`);
    if (before === v.value) continue;
    changes.push(before === undefined ? { name: v.name, after: v.value } : { name: v.name, before, after: v.value });
    env[v.name] = v.value;
  }
  return { text: JSON.stringify({ ...doc, env }, null, 2) + '\n', changes };
}

/** `export NAME='value'` lines for a shell, single-quoted so a path with spaces or `$` stays literal. */
export function exportLines(vars: readonly TelemetryVariable[]): string[] {
  return vars.map((v) => `export ${v.name}='${v.value.replace(/'/g, `'\\''`)}'`);
}
