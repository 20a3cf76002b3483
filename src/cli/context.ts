import { loadConfig, type AszConfig } from '../service/config.js';
import { REGISTRY } from '../service/registry.js';
import { configProblems } from '../config/errors.js';
import { ConfigError } from '../util/errors.js';

/** Exit statuses a script can read. */
export const EXIT = { ok: 0, problem: 1, config: 2 } as const;

export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
}

export const stdio: Io = {
  out: (l) => process.stdout.write(l + '\n'),
  err: (l) => process.stderr.write(l + '\n'),
};

/** Loads the configuration for a command; a bad one is reported with its path and exits 2. */
export function configFor(file: string | undefined, io: Io): AszConfig | undefined {
  try {
    return loadConfig(file, process.env, REGISTRY);
  } catch (err) {
    if (err instanceof ConfigError) {
      for (const line of configProblems(err)) io.err(`aszcol: configuration error: ${line}`);
      return undefined;
    }
    throw err;
  }
}
