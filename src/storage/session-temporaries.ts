/**
 * A killed writer's temporaries, swept from every directory a landing into one session writes:
 * its landed-file directories, the session directory, the index and the metrics directory.
 * The transcript collector and the plugin-observation landing both land there, so both sweep all of it.
 */
import { join } from 'node:path';
import { indexDir } from './index.js';
import { landedDirs } from './layout.js';
import { removeDeadTemporaries } from './write-once.js';

export function sweepSessionTemporaries(root: string, session: string): void {
  for (const { dir } of landedDirs(root, session)) removeDeadTemporaries(dir);
  removeDeadTemporaries(join(root, session));
  removeDeadTemporaries(indexDir(root, session));
  removeDeadTemporaries(join(root, session, 'metrics'));
}
