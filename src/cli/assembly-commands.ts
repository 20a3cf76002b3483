import type { Command } from 'commander';
import type { Io } from './context.js';
import { registerScenarioCommands } from './scenario.js';
import { registerPushCommand } from './push.js';
import { registerParseCommand } from './parse-command.js';

/** The commands that read and build the round chain: parse, conversation, glossary. Each loads its module when it runs. */
export function registerAssemblyCommands(program: Command, io: Io, setCode: (code: number) => void): void {
  const withConfig = (c: Command) => c.option('--config <file>', 'pipeline YAML (default: the embedded default)');
  registerParseCommand(program, io, setCode);
  withConfig(program.command('conversation <id>').description("fold a conversation's chain and print what it holds"))
    .option('--terms <mode>', 'unified (default), native or both', 'unified')
    .option('--json', 'the asz.view document the page serves, as JSON (with --calls or --tools: those rows as JSON)')
    .option('--yaml', 'the asz.view document, as YAML')
    .option('--fold', 'the folded entities and the head header, as JSON')
    .option('--calls', "one row per provider call: request id, duration, time to first token, cost, failed attempts, usage, each figure's source")
    .option('--tools', 'one row per tool use: execution time, success, permission decision and who made it, result size')
    .action(async (id, o: { config?: string; terms?: string; json?: boolean; yaml?: boolean; fold?: boolean; calls?: boolean; tools?: boolean }) => {
      setCode(
        o.calls || o.tools
          ? (await import('./conversation-figures.js')).runConversationFigures(id, o, io)
          : (await import('./conversation.js')).runConversation(id, o, io),
      );
    });
  withConfig(program.command('repack <dest>').description('copy the storage root into DEST, landed files re-cut at max_delta_bytes, chains assembled again'))
    .option('--session <id>', 'only this session')
    .option('--max-delta-bytes <size>', 'the largest landed file (default: the receiver setting, 2MiB)')
    .option('--json', 'one JSON document')
    .action(async (dest, o) => {
      setCode((await import('./repack.js')).runRepack(dest, o, io));
    });
  withConfig(program.command('index <session>').description("print a session's derived index; --rebuild builds it again from the landed files"))
    .option('--rebuild', 'discard the index and build it again, under the session lock')
    .option('--json', 'the whole index, entries included, as JSON')
    .action(async (session, o) => {
      setCode((await import('./index-command.js')).runIndex(session, o, io));
    });
  registerScenarioCommands(program, io, setCode);
  registerPushCommand(program, io, setCode);
  withConfig(program.command('view').description('serve the conversations as a page and a JSON API (read only)'))
    .option('--listen <addr>', 'host:port (default: extensions.view.endpoint, 127.0.0.1:8787)')
    .action(async (o) => {
      setCode(await (await import('./view.js')).runView(o, io));
    });
  program
    .command('glossary')
    .description('what Claude Code calls each name the model uses')
    .option('--json', 'as JSON')
    .action(async (o) => {
      setCode((await import('./glossary.js')).runGlossary(o, io));
    });
}
