/**
 * `aszcol parse …` started on its own: a parse with nothing new is mostly the command's start, so
 * it is first answered from the settled stamps with nothing else loaded (parse-quick.ts); when a
 * session moved, a remembered configuration answer still spares loading the configuration; only
 * without one do the configuration, the parse command and what it needs load.
 */
import { stdio, type Io } from './io.js';
import { quickParse, wholeRootParseArgs } from './parse-quick.js';
import { tierForOneShotParse } from './one-shot-tiering.js';

export async function parseMain(argv: string[], io: Io = stdio, env: NodeJS.ProcessEnv = process.env): Promise<number> {
  const whole = wholeRootParseArgs(argv);
  if (whole) {
    const quick = quickParse(whole, io, env);
    if (quick && 'code' in quick) return quick.code;
    tierForOneShotParse();
    if (quick) {
      const { storageRoot, source, maxRoundBytes } = quick.answer;
      return (await import('./parse-root.js')).parseRoot({ storageRoot, source, maxRoundBytes, json: whole.json }, io);
    }
    // The long way, as commander would call it for these arguments, remembering the configuration's answer for the next parse.
    const [{ runParse }, { watchConfig }] = await Promise.all([import('./parse.js'), import('./config-answers.js')]);
    return runParse(undefined, whole, io, watchConfig(whole.config, env));
  }
  const [{ registerParseCommand }, { runSingleCommand }] = await Promise.all([import('./parse-command.js'), import('./program.js')]);
  return runSingleCommand(registerParseCommand, argv, io);
}
