/**
 * `aszcol usage …` started on its own (bin/aszcol.js comes here for it): only the usage command
 * and what it needs are loaded, so a report over a landed root does not pay for every other
 * command's modules. The same command `main` registers; the same exit statuses.
 */
import { Command, CommanderError } from 'commander';
import { EXIT, stdio, type Io } from './context.js';
import { registerUsageCommand } from './usage.js';

export async function usageMain(argv: string[], io: Io = stdio): Promise<number> {
  let code: number = EXIT.ok;
  const program = new Command('aszcol')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showHelpAfterError()
    .enablePositionalOptions();
  registerUsageCommand(program, io, (c) => {
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
