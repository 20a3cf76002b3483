import { readFileSync, existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseDocument } from 'yaml';
import { Ajv, type ErrorObject } from 'ajv';
import { configSchema } from './schema.js';
import { expandEnv } from './env.js';
import { ConfigError } from '../util/errors.js';
import { parseBytes, parseDuration } from '../util/units.js';

export interface LocalReceiverConfig {
  sourceRoot: string;
  /** Where the source root came from: `config`, `CLAUDE_CONFIG_DIR`, `XDG_CONFIG_HOME` or `home`. */
  sourceRootFrom: string;
  include: string[];
  exclude: string[];
  intervalMs: number;
  maxDeltaBytes: number;
  /** Worker threads for a pass; 0 means one per core (at most four). */
  workers: number;
}

export interface AszConfig {
  storageRoot: string;
  local: LocalReceiverConfig;
  /** The parsed document, for sections later components read. */
  raw: Record<string, unknown>;
}

/** The embedded default: what `aszcol` runs with no `--config`. */
export const DEFAULT_CONFIG_YAML = `storage:
  root: ./data
receivers:
  claude_code_local:
    source_root: ""
    include: []
    exclude: ["/private/tmp/**"]
    interval: 5s
    max_delta_bytes: 2MiB
`;

function pathOf(err: ErrorObject): string {
  const parts = err.instancePath.split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (err.keyword === 'additionalProperties') parts.push(String((err.params as { additionalProperty: string }).additionalProperty));
  return parts.join('.') || '(root)';
}

function messageOf(err: ErrorObject): string {
  if (err.keyword === 'additionalProperties') return 'unknown key';
  if (err.keyword === 'type') return `must be ${(err.params as { type: string | string[] }).type}`;
  return err.message ?? 'is not valid';
}

const ajv = new Ajv({ allErrors: true, strict: false });
const validate = ajv.compile(configSchema);

export function resolveSourceRoot(configured: string, env: NodeJS.ProcessEnv): { root: string; from: string } {
  if (configured) return { root: resolve(configured), from: 'config' };
  if (env.CLAUDE_CONFIG_DIR) return { root: resolve(env.CLAUDE_CONFIG_DIR, 'projects'), from: 'CLAUDE_CONFIG_DIR' };
  if (env.XDG_CONFIG_HOME) {
    const xdg = resolve(env.XDG_CONFIG_HOME, 'claude', 'projects');
    if (existsSync(xdg)) return { root: xdg, from: 'XDG_CONFIG_HOME' };
  }
  return { root: join(env.HOME || homedir(), '.claude', 'projects'), from: 'home' };
}

/** Parses, expands `${env:…}`, validates and applies defaults. Every error names its exact path. */
export function parseConfig(text: string, env: NodeJS.ProcessEnv = process.env, file = '(embedded default)'): AszConfig {
  const doc = parseDocument(text, { uniqueKeys: true });
  if (doc.errors.length) throw new ConfigError(file, `YAML: ${doc.errors[0]!.message}`);
  const parsed = (doc.toJS() ?? {}) as unknown;
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new ConfigError('(root)', 'the configuration must be a mapping');
  const raw = expandEnv(parsed, env) as Record<string, unknown>;
  if (!validate(raw)) {
    const errs = validate.errors ?? [];
    const first = errs.find((e) => e.keyword === 'additionalProperties') ?? errs[0]!;
    throw new ConfigError(pathOf(first), messageOf(first));
  }
  const storage = (raw.storage ?? {}) as { root?: string };
  const receivers = (raw.receivers ?? {}) as Record<string, Record<string, unknown> | null>;
  const local = (receivers.claude_code_local ?? {}) as Record<string, unknown>;
  const at = (key: string, fn: (v: unknown) => number, v: unknown, def: number) => {
    if (v === undefined) return def;
    try {
      return fn(v);
    } catch (err) {
      throw new ConfigError(`receivers.claude_code_local.${key}`, (err as Error).message);
    }
  };
  const maxDeltaBytes = at('max_delta_bytes', parseBytes, local.max_delta_bytes, 2 * 1024 * 1024);
  if (maxDeltaBytes < 1024) throw new ConfigError('receivers.claude_code_local.max_delta_bytes', 'must be at least 1KiB');
  const intervalMs = at('interval', parseDuration, local.interval, 5000);
  if (intervalMs < 100) throw new ConfigError('receivers.claude_code_local.interval', 'must be at least 100ms');
  const src = resolveSourceRoot(typeof local.source_root === 'string' ? local.source_root : '', env);
  return {
    storageRoot: resolve(storage.root ?? './data'),
    local: {
      sourceRoot: src.root,
      sourceRootFrom: src.from,
      include: (local.include as string[] | undefined) ?? [],
      exclude: (local.exclude as string[] | undefined) ?? ['/private/tmp/**'],
      intervalMs,
      maxDeltaBytes,
      workers: typeof local.workers === 'number' ? local.workers : 0,
    },
    raw,
  };
}

export function loadConfig(file: string | undefined, env: NodeJS.ProcessEnv = process.env): AszConfig {
  if (!file) return parseConfig(DEFAULT_CONFIG_YAML, env);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ConfigError(file, `cannot read the configuration: ${(err as Error).message}`);
  }
  return parseConfig(text, env, file);
}
