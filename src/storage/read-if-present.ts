import { readFileSync } from 'node:fs';

/** A state file's text, or undefined when it does not exist (yet): any other failure is an error to report. */
export function readTextIfPresent(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}
