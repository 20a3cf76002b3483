/**
 * Where a command writes and the statuses it exits with: apart from context.ts (which loads the
 * configuration reader and every component's factory) so that the parse-only entry's quick answer
 * loads neither.
 */

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
