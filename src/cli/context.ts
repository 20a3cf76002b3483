import { loadConfig, type AszConfig } from '../service/config.js';
import { REGISTRY } from '../service/registry.js';
import { configProblems } from '../config/errors.js';
import { ConfigError } from '../util/errors.js';
import type { Io } from './io.js';

export { EXIT, stdio, type Io } from './io.js';

/** Loads the configuration for a command; a bad one is reported with its path and exits 2. */
export function configFor(file: string | undefined, io: Io, env: NodeJS.ProcessEnv = process.env): AszConfig | undefined {
  try {
    return loadConfig(file, env, REGISTRY);
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const line of configProblems(err)) io.err(`aszcol: configuration error: ${line}`);
      return undefined;
    }
    throw err;
  }
}
