/**
 * The CLI's program, shared by the whole CLI (main.ts) and by the commands started on their own
 * (`parse`, `usage`: bin/aszcol.js comes to parse-main.ts / usage-main.ts for them), so a short
 * run does not pay for loading every other command's modules. The same settings, the same exit statuses.
 */
import { Command, CommanderError } from 'commander';
import { EXIT, type Io } from './context.js';

/** How a command module adds itself to a program; `done` receives the command's exit status. */
export type RegisterCommand = (program: Command, io: Io, done: (code: number) => void) => void;

/** An empty `aszcol` program writing to `io`; options before a command belong to the program, after it to the command. */
export function newProgram(io: Io): Command {
  return new Command('aszcol')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showHelpAfterError()
    .enablePositionalOptions();
}

/** Runs `program` on `argv`: the status the command set (`code()`), or commander's own for help, version and usage errors. */
export async function runProgram(program: Command, argv: string[], code: () => number): Promise<number> {
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.config;
    throw err;
  }
  return code();
}

export async function runSingleCommand(register: RegisterCommand, argv: string[], io: Io): Promise<number> {
  let code: number = EXIT.ok;
  const program = newProgram(io);
  register(program, io, (c) => {
    code = c;
  });
  return runProgram(program, argv, () => code);
}
