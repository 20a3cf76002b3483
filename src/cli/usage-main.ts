/**
 * `aszcol usage …` started on its own: a report over a landed root does not pay for every other
 * command's modules.
 */
import { stdio, type Io } from './context.js';
import { registerUsageCommand } from './usage.js';
import { runSingleCommand } from './program.js';

export const usageMain = (argv: string[], io: Io = stdio): Promise<number> => runSingleCommand(registerUsageCommand, argv, io);
