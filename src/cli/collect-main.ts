/**
 * `aszcol collect --once …` started on its own: a one-shot collect with nothing new is mostly the
 * command's start, so the plain one-shot form (`--once`, `--json`, `--config <file>`) runs without
 * commander or the other commands' modules, on the configuration's remembered answer when there is
 * one (collect-config.ts). Any other form (the watching collect, `--help`, a mistake) goes to the
 * whole CLI, which reads and reports it as always.
 */
import { stdio, type Io } from './io.js';

export interface OneShotCollect {
  once: true;
  json?: boolean;
  config?: string;
}

/** `argv` (from `collect` on) when it is the plain one-shot form; undefined for anything else, which commander reads. */
export function oneShotCollectArgs(argv: string[]): OneShotCollect | undefined {
  if (argv[0] !== 'collect') return undefined;
  const o: Partial<OneShotCollect> = {};
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--once') o.once = true;
    else if (a === '--json') o.json = true;
    else if (a === '--config' && i + 1 < argv.length && !argv[i + 1]!.startsWith('-') && argv[i + 1] !== '') o.config = argv[++i];
    else if (a.startsWith('--config=') && a.length > '--config='.length) o.config = a.slice('--config='.length);
    else return undefined;
  }
  return o.once ? (o as OneShotCollect) : undefined;
}

export async function collectMain(argv: string[], io: Io = stdio): Promise<number> {
  const once = oneShotCollectArgs(argv);
  if (once) return (await import('./collect.js')).runCollect(once, io);
  return (await import('./main.js')).main(argv, io);
}
