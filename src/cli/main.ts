import type { Command } from 'commander';
import { readFileSync } from 'node:fs';
import { EXIT, stdio, type Io } from './context.js';
import { registerAssemblyCommands } from './assembly-commands.js';
import { newProgram, runProgram } from './program.js';
import { registerUsageCommand } from './usage.js';

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * Argument parsing only; each command's work lives in its own module, imported when that command
 * runs, so a command starts with its own modules only (the service's express and prom-client,
 * the scenarios' generator and the like stay unloaded for `collect` or `parse`).
 */
export async function main(argv: string[], io: Io = stdio): Promise<number> {
  let code: number = EXIT.ok;
  const program = newProgram(io).description('A collector for Claude Code telemetry. With no command, runs the service on the pipeline YAML.');
  const withConfig = (c: Command) => c.option('--config <file>', 'pipeline YAML (default: the embedded default)');

  withConfig(program.command('sources').description('list the sessions discovery finds under the source root'))
    .option('--json', 'one JSON document')
    .action(async (o) => {
      code = (await import('./sources.js')).runSources(o, io);
    });
  withConfig(program.command('collect').description('land what is new; watch at the interval unless --once'))
    .option('--once', 'one pass; exit non-zero when anything could not be done, was pending or in conflict')
    .option('--json', 'one JSON line per pass')
    .action(async (o) => {
      code = await (await import('./collect.js')).runCollect(o, io);
    });
  withConfig(program.command('verify [session]').description('check every landed file: digests, counts, contiguity'))
    .option('--json', 'one JSON document')
    .action(async (session, o) => {
      code = (await import('./verify.js')).runVerify(session, o, io);
    });
  withConfig(program.command('show [seq] [row]').description('print one landed record: by position, by its id, or the records of a tool use'))
    .requiredOption('--session <id>', 'the session the file was landed in')
    .option('--record <id>', "the record whose id this is (a transcript line's uuid)")
    .option('--tool-use <id>', 'the record calling this tool use, then each record carrying its result')
    .option('--pretty', 'indent the JSON')
    .action(async (seq, row, o) => {
      code = (await import('./show.js')).runShow(seq, row, o, io);
    });
  withConfig(program.command('validate').description('check the configuration without starting anything (exit 2 when it is not valid)'))
    .option('--json', 'one JSON document describing what would run')
    .action(async (o) => {
      code = (await import('./validate.js')).runValidate(o, io);
    });
  withConfig(
    program
      .command('setup')
      .description('connect a runtime to this configuration')
      .command('claude-code')
      .description("make Claude Code export its telemetry to this configuration's OTLP receiver (settings.json env)"),
  )
    .option('--print', 'print the settings block and the equivalent export lines; change nothing')
    .option('--protocol <p>', 'grpc or http', 'grpc')
    .option('--settings <file>', 'the settings file (default: $CLAUDE_CONFIG_DIR/settings.json or ~/.claude/settings.json)')
    .option('--prompts', 'include the prompt text in events (OTEL_LOG_USER_PROMPTS)')
    .option('--tool-details', 'include tool parameters and MCP names (OTEL_LOG_TOOL_DETAILS)')
    .option('--traces', 'send spans too (beta)')
    .option('--raw-bodies <dir>', 'write provider request and response bodies under DIR (OTEL_LOG_RAW_API_BODIES=file:DIR)')
    .action(async (o) => {
      code = (await import('./setup.js')).runSetupClaudeCode(o, io);
    });
  program
    .command('hook')
    .description("what the Claude Code plugin's hooks run: the event on stdin to the service, or the spool under the root (exit 0 always)")
    .option('--root <dir>', 'the storage root (default: $ASZCOL_ROOT)')
    .action(async (o: { root?: string }) => {
      code = await (await import('./hook.js')).hookMain(o.root ? ['--root', o.root] : []);
    });
  // With no command, aszcol runs as a service: the pipelines of the configuration (or the
  // embedded default) until SIGTERM or SIGINT, then it drains and exits 0.
  withConfig(program).action(async (o) => {
    code = await (await import('./serve.js')).runServe(o, io);
  });
  registerAssemblyCommands(program, io, (c) => {
    code = c;
  });
  registerUsageCommand(program, io, (c) => {
    code = c;
  });
  program
    .command('version')
    .description('print the version')
    .action(() => {
      io.out(`aszcol ${version()}`);
    });

  return runProgram(program, argv, () => code);
}
