import type { Command } from 'commander';
import type { Io } from './context.js';

/** `aszcol parse`, registered by the whole CLI and by the parse-only entry (parse-main.ts); its module loads when it runs. */
export function registerParseCommand(program: Command, io: Io, setCode: (code: number) => void): void {
  program
    .command('parse [session]')
    .description('assemble landed sessions and append a round to each chain')
    .option('--config <file>', 'pipeline YAML (default: the embedded default)')
    .option('--json', 'one JSON document')
    .option('--max-round-bytes <size>', 'round byte budget (default: processors.assembler.max_round_bytes, 2MiB)')
    .action(async (session: string | undefined, o: { config?: string; json?: boolean; maxRoundBytes?: string }) => {
      setCode(await (await import('./parse.js')).runParse(session, o, io));
    });
}
