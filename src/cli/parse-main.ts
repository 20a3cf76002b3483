/**
 * `aszcol parse …` started on its own (bin/aszcol.js comes here for it): a parse with nothing new
 * is mostly the command's start, so it loads the parse command and what it needs, never every
 * other command's modules. The same command `main` registers; the same exit statuses.
 */
import { Command, CommanderError } from 'commander';
import { EXIT, stdio, type Io } from './context.js';
import { registerParseCommand } from './parse-command.js';

export async function parseMain(argv: string[], io: Io = stdio): Promise<number> {
  let code: number = EXIT.ok;
  const program = new Command('aszcol')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showHelpAfterError()
    .enablePositionalOptions();
  registerParseCommand(program, io, (c) => {
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
