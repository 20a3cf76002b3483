/**
 * The project a session ran in, as the runtime filed it: the first directory of a transcript's
 * source path under its source root (Claude Code names it after the working directory). The list
 * row, and a usage report, both file a session under it.
 */
import { readFirstJsonLine } from './first-line.js';
import type { LandedFileRef } from './landed-files.js';

/** The project a transcript's source path names; undefined for a path with no directory. */
export const projectOfSource = (src: unknown): string | undefined =>
  typeof src === 'string' && src.includes('/') ? src.split('/')[0] || undefined : undefined;

/** The source path a landed file's header names; undefined when its first line cannot be read or parsed. */
export const sourceInHeader = (path: string): unknown => (readFirstJsonLine(path) as { src?: unknown } | null | undefined)?.src;

/** The first project a session's landed transcripts name, in sequence order, reading only their headers. */
export function projectOfLanded(files: readonly LandedFileRef[]): string | undefined {
  for (const f of files) {
    const project = f.prefix.startsWith('transcript') ? projectOfSource(sourceInHeader(f.path)) : undefined;
    if (project) return project;
  }
  return undefined;
}
