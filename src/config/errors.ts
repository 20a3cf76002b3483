import { ConfigError } from '../util/errors.js';

/**
 * Every problem a configuration has, each at its own path, so one run of `aszcol validate`
 * shows them all. It is a ConfigError (the first problem's path and reason) for callers that
 * only know the single kind; its message lists every problem, one per line.
 */
export class ConfigErrors extends ConfigError {
  constructor(readonly errors: ConfigError[]) {
    super(errors[0]!.path, errors[0]!.reason);
    this.message = errors.map((e) => `${e.path}: ${e.reason}`).join('\n');
  }
}

/** The problems in an error thrown by the loader: one per line, each `path: reason`. */
export function configProblems(err: ConfigError): string[] {
  return err instanceof ConfigErrors ? err.errors.map((e) => `${e.path}: ${e.reason}`) : [`${err.path}: ${err.reason}`];
}
