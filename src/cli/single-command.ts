/**
 * One command started on its own (bin/aszcol.js comes here for `parse` and `usage`): the program
 * holds only that command, so a short run does not pay for loading every other command's modules.
 * The same command `main` registers, with the same exit statuses.
 */
import { Command, CommanderError } from 'commander';
import { EXIT, type Io } from './context.js';

/** How a command module adds itself to a program; `done` receives the command's exit status. */
export type RegisterCommand = (program: Command, io: Io, done: (code: number) => void) => void;

export async function runSingleCommand(register: RegisterCommand, argv: string[], io: Io): Promise<number> {
  let code: number = EXIT.ok;
  const program = new Command('aszcol')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showHelpAfterError()
    .enablePositionalOptions();
  register(program, io, (c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.config;
    throw err;
  }
  return code;
}
