/**
 * `aszcol parse …` started on its own: a parse with nothing new is mostly the command's start, so
 * only the parse command and what it needs are loaded.
 */
import { stdio, type Io } from './context.js';
import { registerParseCommand } from './parse-command.js';
import { runSingleCommand } from './program.js';

export const parseMain = (argv: string[], io: Io = stdio): Promise<number> => runSingleCommand(registerParseCommand, argv, io);
