import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join as joinPath, resolve } from 'node:path';
import { ConfigError } from '../../util/errors.js';
import { DURABILITY_MODES, type DurabilityMode } from '../../storage/filesystem-sync.js';
import { bool, bytes, duration, int, join, mapping, parseEndpoint, str, strList } from '../../config/reader.js';

/** The `receivers.claude_code_local` section, typed. */
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
  /** Where Claude Code writes its raw API bodies (`OTEL_LOG_RAW_API_BODIES=file:DIR`); empty collects none. */
  providerBodies: string;
  /** Where the plugin's hooks hand observations over (loopback `host:port`, port 0 for any); empty turns the intake off. */
  hookEndpoint: string;
  /** Inside the service: watch the source directories and collect a moved session at once, not at the next interval. */
  watch: boolean;
  /**
   * How a worker makes a batch of landed files durable: `files` (an fsync each, side by side) or `filesystem` (two
   * syncfs per batch). `files` by default: on a disk other programs write to, syncfs waits for their writes too.
   */
  batchSync: DurabilityMode;
}

export const LOCAL_RECEIVER_KEYS = [
  'source_root',
  'include',
  'exclude',
  'interval',
  'max_delta_bytes',
  'workers',
  'provider_bodies',
  'hook_endpoint',
  'watch',
  'batch_sync',
] as const;

export function resolveSourceRoot(configured: string, env: NodeJS.ProcessEnv): { root: string; from: string } {
  if (configured) return { root: resolve(configured), from: 'config' };
  if (env.CLAUDE_CONFIG_DIR) return { root: resolve(env.CLAUDE_CONFIG_DIR, 'projects'), from: 'CLAUDE_CONFIG_DIR' };
  if (env.XDG_CONFIG_HOME) {
    const xdg = resolve(env.XDG_CONFIG_HOME, 'claude', 'projects');
    if (existsSync(xdg)) return { root: xdg, from: 'XDG_CONFIG_HOME' };
  }
  return { root: joinPath(env.HOME || homedir(), '.claude', 'projects'), from: 'home' };
}

export function validateLocalReceiverConfig(raw: unknown, path: string, env: NodeJS.ProcessEnv): LocalReceiverConfig {
  const m = mapping(raw, path, LOCAL_RECEIVER_KEYS);
  const at = (k: string) => join(path, k);
  const src = resolveSourceRoot(str(m.source_root, at('source_root'), ''), env);
  const exclude = strList(m.exclude, at('exclude'), ['/private/tmp/**']);
  const include = strList(m.include, at('include'), []);
  const intervalMs = duration(m.interval, at('interval'), 5000);
  if (intervalMs < 100) throw new ConfigError(at('interval'), 'must be at least 100ms');
  const maxDeltaBytes = bytes(m.max_delta_bytes, at('max_delta_bytes'), 2 * 1024 * 1024);
  if (maxDeltaBytes < 1024) throw new ConfigError(at('max_delta_bytes'), 'must be at least 1KiB');
  const workers = int(m.workers, at('workers'), 0, { min: 0, max: 64 });
  // asz 0.6's default: `asz/provider-bodies` beside the runtime's `projects`; nothing happens while it does not exist.
  const bodies = str(m.provider_bodies, at('provider_bodies'), joinPath(dirname(src.root), 'asz', 'provider-bodies'));
  const providerBodies = bodies === '' ? '' : resolve(bodies);
  const hookEndpoint = str(m.hook_endpoint, at('hook_endpoint'), '127.0.0.1:0');
  if (hookEndpoint !== '') {
    const ep = parseEndpoint(hookEndpoint, at('hook_endpoint'));
    // The intake takes whatever a hook posts: it answers on this machine only.
    if (!['127.0.0.1', '::1', 'localhost'].includes(ep.host))
      throw new ConfigError(at('hook_endpoint'), `${JSON.stringify(hookEndpoint)} is not a loopback address; use 127.0.0.1:<port> or [::1]:<port>`);
  }
  const watch = bool(m.watch, at('watch'), true);
  const batchSync = str(m.batch_sync, at('batch_sync'), 'files') as DurabilityMode;
  if (!DURABILITY_MODES.includes(batchSync))
    throw new ConfigError(at('batch_sync'), `${JSON.stringify(batchSync)} is not one of ${DURABILITY_MODES.join(', ')}`);
  return {
    sourceRoot: src.root,
    sourceRootFrom: src.from,
    include,
    exclude,
    intervalMs,
    maxDeltaBytes,
    workers,
    providerBodies,
    hookEndpoint,
    watch,
    batchSync,
  };
}
