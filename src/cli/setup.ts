import { copyFileSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import {
  exportLines,
  mergeTelemetrySettings,
  SettingsFileError,
  telemetryVariables,
  type OtlpProtocol,
  type TelemetryChoice,
} from '../adapters/claude-code/telemetry-settings.js';
import type { OtlpReceiverConfig } from '../receivers/claude-code-otlp/config.js';
import { replaceAtomically } from '../storage/write-once.js';
import type { AszConfig } from '../service/config.js';
import { configFor, EXIT, type Io } from './context.js';

export interface SetupOptions {
  config?: string;
  print?: boolean;
  protocol?: string;
  settings?: string;
  prompts?: boolean;
  toolDetails?: boolean;
  traces?: boolean;
  rawBodies?: string;
}

/** Where Claude Code reads its user settings: `$CLAUDE_CONFIG_DIR/settings.json`, else `~/.claude/settings.json`. */
export function claudeSettingsPath(env: NodeJS.ProcessEnv): string {
  const dir = env.CLAUDE_CONFIG_DIR && env.CLAUDE_CONFIG_DIR.trim() !== '' ? env.CLAUDE_CONFIG_DIR : join(env.HOME ?? homedir(), '.claude');
  return join(dir, 'settings.json');
}

/** The URL the runtime should send to: the configured port of `protocol`, with a wildcard host made loopback. */
function receiverUrl(cfg: AszConfig, protocol: OtlpProtocol): string | { error: string } {
  const receiver = cfg.components.find((c) => c.kind === 'receiver' && c.type === 'claude_code_otlp');
  if (!receiver) return { error: `${cfg.source} has no claude_code_otlp receiver: nothing would receive what Claude Code sends (add one, see the README)` };
  const otlp = receiver.config as OtlpReceiverConfig;
  const ep = (protocol === 'grpc' ? otlp.grpc : otlp.http) ?? otlp.endpoint;
  if (!ep) return { error: `receivers.${receiver.id} in ${cfg.source} has no ${protocol === 'grpc' ? 'gRPC' : 'HTTP'} port; choose the other --protocol` };
  const host = ep.host === '0.0.0.0' || ep.host === '' ? '127.0.0.1' : ep.host === '::' ? '::1' : ep.host;
  return `http://${host.includes(':') ? `[${host}]` : host}:${ep.port}`;
}

function protocolOf(raw: string | undefined): OtlpProtocol | undefined {
  if (raw === undefined || raw === 'grpc') return 'grpc';
  if (raw === 'http' || raw === 'http/protobuf') return 'http/protobuf';
  return undefined;
}

/**
 * `aszcol setup claude-code`: points Claude Code's telemetry at this configuration's OTLP receiver by
 * merging the variables into its settings.json (a backup first, only changed keys, idempotent), or
 * with --print shows the block and the equivalent shell lines without writing.
 */
export function runSetupClaudeCode(opts: SetupOptions, io: Io, env: NodeJS.ProcessEnv = process.env): number {
  const protocol = protocolOf(opts.protocol);
  if (!protocol) {
    io.err(`aszcol: --protocol ${opts.protocol}: expected grpc or http`);
    return EXIT.config;
  }
  const cfg = configFor(opts.config, io);
  if (!cfg) return EXIT.config;
  const url = receiverUrl(cfg, protocol);
  if (typeof url !== 'string') {
    io.err(`aszcol: ${url.error}`);
    return EXIT.config;
  }
  const choice: TelemetryChoice = {
    endpoint: url,
    protocol,
    prompts: opts.prompts,
    toolDetails: opts.toolDetails,
    traces: opts.traces,
    rawBodiesDir: opts.rawBodies,
  };
  const vars = telemetryVariables(choice);
  if (opts.print) {
    io.out(JSON.stringify({ env: Object.fromEntries(vars.map((v) => [v.name, v.value])) }, null, 2));
    io.out('');
    io.out('# or, for one shell:');
    for (const line of exportLines(vars)) io.out(line);
    return EXIT.ok;
  }
  const file = opts.settings ?? claudeSettingsPath(env);
  let existing: string | undefined;
  try {
    existing = existsSync(file) ? readFileSync(file, 'utf8') : undefined;
  } catch (err) {
    io.err(`aszcol: cannot read ${file}: ${(err as Error).message}`);
    return EXIT.problem;
  }
  let merged: ReturnType<typeof mergeTelemetrySettings>;
  try {
    merged = mergeTelemetrySettings(existing, vars, file);
  } catch (err) {
    if (!(err instanceof SettingsFileError)) throw err;
    io.err(`aszcol: ${err.message}`);
    return EXIT.problem;
  }
  if (merged.changes.length === 0) {
    io.out(`${file} already sends Claude Code's telemetry to ${url} (${protocol}); nothing changed`);
    return EXIT.ok;
  }
  try {
    if (existing !== undefined) {
      const backup = `${file}.aszcol-backup-${new Date().toISOString().replace(/[:.]/g, '-')}`;
      copyFileSync(file, backup);
      io.out(`backup: ${backup}`);
    } else {
      mkdirSync(dirname(file), { recursive: true });
    }
    replaceAtomically(file, merged.text, { sync: true });
  } catch (err) {
    io.err(`aszcol: cannot write ${file}: ${(err as Error).message}`);
    return EXIT.problem;
  }
  io.out(`${file}: env`);
  for (const c of merged.changes) io.out(c.before === undefined ? `  + ${c.name}=${c.after}` : `  ~ ${c.name}: ${c.before} -> ${c.after}`);
  io.out(`Claude Code sessions started from now on send their telemetry to ${url} (${protocol}).`);
  return EXIT.ok;
}
