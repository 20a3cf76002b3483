/**
 * Whether a landing failure can ever succeed by retrying. A permanent one is about the records'
 * own path (their session's name, or what already sits at that name) and fails the same way
 * every time, so its records are quarantined instead of holding the journal for ever; a
 * transient one is about the disk or the process (full, read-only, an I/O error, out of file
 * descriptors, permissions a person can fix), so its records stay in the journal and landing
 * retries, backing off, while health says landing is failing.
 *
 * Permanent:
 * - ENAMETOOLONG: a name or path longer than the filesystem allows.
 * - ENOTDIR: a path component that must be a directory is a file (`<root>/<session>` is a file).
 * - EISDIR: a directory where a file must go.
 * - EINVAL, EILSEQ: a name the filesystem refuses (bytes it cannot store).
 * - ELOOP: a symbolic link loop in the path.
 * - EEXIST from mkdir: a file sits where the session's directory must be. (EEXIST from a link is
 *   a name collision in this round's own files, and a retry takes a new name: transient.)
 * - an error with no errno: a bug in landing, which fails the same way next time.
 *
 * Everything else is transient, unknown errnos included: parking records is for what is sure to
 * fail again, and a transient failure is loud (health unavailable) rather than silent.
 */
export type FailureKind = 'permanent' | 'transient';

const PERMANENT = new Set(['ENAMETOOLONG', 'ENOTDIR', 'EISDIR', 'EINVAL', 'EILSEQ', 'ELOOP']);

export function failureKind(err: unknown): FailureKind {
  const e = err as NodeJS.ErrnoException;
  if (!e || typeof e.code !== 'string') return 'permanent';
  if (PERMANENT.has(e.code)) return 'permanent';
  if (e.code === 'EEXIST' && e.syscall === 'mkdir') return 'permanent';
  return 'transient';
}

/** The short word a failure is counted and parked under: its errno, or `internal` without one. */
export function failureReason(err: unknown): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : 'internal';
}

/** The path a failure names, when the error carries one. */
export function failurePath(err: unknown): string | undefined {
  const p = (err as NodeJS.ErrnoException)?.path;
  return typeof p === 'string' ? p : undefined;
}
