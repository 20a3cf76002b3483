import { join } from 'node:path';
import { LocalCollector, type PassReport } from '../../src/receivers/claude-code-local/pass.js';
import { tempDir } from './tmp.js';

export const SID = '0438c73b-1111-4222-8333-444455556666';
export const PROJECT = '-Users-me-work';

export interface Bench {
  root: string;
  src: string;
  main: string;
  collector: (over?: Partial<ConstructorParameters<typeof LocalCollector>[0]>) => LocalCollector;
  pass: (over?: Partial<ConstructorParameters<typeof LocalCollector>[0]>) => PassReport;
}

/** A storage root and a source root side by side, with the main transcript's path for session SID. */
export function bench(): Bench {
  const base = tempDir();
  const root = join(base, 'data');
  const src = join(base, 'projects');
  const main = join(src, PROJECT, `${SID}.jsonl`);
  const collector = (over = {}) => new LocalCollector({ root, sourceRoot: src, filter: { include: [], exclude: [] }, maxDeltaBytes: 2 * 1024 * 1024, ...over });
  return { root, src, main, collector, pass: (over = {}) => collector(over).pass() };
}
