import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { runSources } from './sources.js';
import { runCollect } from './collect.js';
import { runVerify } from './verify.js';
import { runShow } from './show.js';
import { EXIT, stdio, type Io } from './context.js';
import { registerAssemblyCommands } from './assembly-commands.js';

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/** Argument parsing only; each command's work lives in its own module. */
export async function main(argv: string[], io: Io = stdio): Promise<number> {
  let code: number = EXIT.ok;
  const program = new Command('aszcol')
    .description('Collects Claude Code transcripts into durable, verifiable Session Data.')
    .exitOverride()
    .configureOutput({ writeOut: (s) => io.out(s.trimEnd()), writeErr: (s) => io.err(s.trimEnd()) })
    .showHelpAfterError()
    // Options before a command belong to the service; after it, to the command.
    .enablePositionalOptions();
  const withConfig = (c: Command) => c.option('--config <file>', 'pipeline YAML (default: the embedded default)');

  withConfig(program.command('sources').description('list the sessions discovery finds under the source root'))
    .option('--json', 'one JSON document')
    .action((o) => { code = runSources(o, io); });
  withConfig(program.command('collect').description('land what is new; watch at the interval unless --once'))
    .option('--once', 'one pass; exit non-zero when anything could not be done, was pending or in conflict')
    .option('--json', 'one JSON line per pass')
    .action(async (o) => { code = await runCollect(o, io); });
  withConfig(program.command('verify [session]').description('check every landed file: digests, counts, contiguity'))
    .option('--json', 'one JSON document')
    .action((session, o) => { code = runVerify(session, o, io); });
  withConfig(program.command('show <seq> <row>').description('print one landed record'))
    .requiredOption('--session <id>', 'the session the file was landed in')
    .option('--pretty', 'indent the JSON')
    .action((seq, row, o) => { code = runShow(seq, row, o, io); });
  // With no command, aszcol runs as a service. Until the component host lands, the service is the
  // watching local collector on the configured (or embedded default) pipeline.
  withConfig(program).option('--json', 'one JSON line per pass').action(async (o) => { code = await runCollect({ ...o, once: false }, io); });
  registerAssemblyCommands(program, io, (c) => { code = c; });
  program.command('version').description('print the version').action(() => { io.out(`aszcol ${version()}`); });

  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? EXIT.ok : EXIT.config;
    throw err;
  }
  return code;
}
