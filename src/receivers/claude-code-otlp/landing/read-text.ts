import { readFileSync } from 'node:fs';

/** A file's text, or empty when it cannot be read (absent): state files are compared as text. */
export function readTextOrEmpty(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
