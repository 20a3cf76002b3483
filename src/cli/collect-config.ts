/**
 * What `aszcol collect` needs of its configuration: the storage root and the local receiver's
 * settings. A one-shot collect with nothing new is mostly the command's start, so the remembered
 * answer of the configuration (config-answers.ts, shared with `aszcol parse`) is used while
 * everything that decided it is the same; only without one are the YAML reader and the component
 * registry loaded, and the answer remembered for the next command.
 */
import type { LocalReceiverConfig } from '../receivers/claude-code-local/config.js';
import { buildIdentity, rememberedAnswer, watchConfig } from './config-answers.js';
import type { Io } from './io.js';

export interface CollectSettings {
  storageRoot: string;
  local: LocalReceiverConfig;
}

/**
 * A default source root chosen by whether `$XDG_CONFIG_HOME/claude/projects` exists is decided by
 * the filesystem, which no remembered answer records: such a configuration is loaded every time.
 */
const decidedByTheDisk = (local: LocalReceiverConfig, env: NodeJS.ProcessEnv) =>
  local.sourceRootFrom === 'XDG_CONFIG_HOME' || (local.sourceRootFrom === 'home' && !!env.XDG_CONFIG_HOME);

/** The settings for `--config given`: remembered, else loaded (a bad configuration is reported and gives undefined). */
export async function collectSettings(given: string | undefined, io: Io, env: NodeJS.ProcessEnv = process.env): Promise<CollectSettings | undefined> {
  const answer = rememberedAnswer(given, env);
  if (answer?.collect) return { storageRoot: answer.storageRoot, local: answer.collect };
  const [{ configFor }, { localReceiverConfig }, { roundBudget }] = await Promise.all([
    import('./context.js'),
    import('../service/pipelines.js'),
    import('./round-budget.js'),
  ]);
  const watch = watchConfig(given, env);
  const cfg = configFor(given, io, watch.env);
  if (!cfg) return undefined;
  const local = localReceiverConfig(cfg, watch.env);
  let maxRoundBytes: number | undefined;
  try {
    maxRoundBytes = roundBudget(cfg);
  } catch {
    // A round budget that does not read is parse's to report; nothing is remembered for either command.
  }
  if (maxRoundBytes !== undefined && !decidedByTheDisk(local, env)) watch.configured(cfg, maxRoundBytes, local);
  return { storageRoot: cfg.storageRoot, local };
}

/** This build, for the one-shot collector's memory of its last pass; a build that cannot say gets a memory of its own that no other reads. */
export function oneShotBuild(): string {
  try {
    return buildIdentity();
  } catch {
    return `unknown ${process.pid} ${Date.now()}`;
  }
}
