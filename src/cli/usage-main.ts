/**
 * `aszcol usage …` started on its own: a report over a landed root does not pay for every other
 * command's modules.
 */
import { stdio, type Io } from './context.js';
import { registerUsageCommand } from './usage.js';
import { runSingleCommand } from './program.js';
import { tierForOneShotParse } from './one-shot-tiering.js';

/** A report from scratch collects and parses the whole root in this process first. */
export function usageMain(argv: string[], io: Io = stdio): Promise<number> {
  tierForOneShotParse();
  return runSingleCommand(registerUsageCommand, argv, io);
}
