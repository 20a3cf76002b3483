/**
 * The quick answer of `aszcol parse` over a whole root with nothing new: when the configuration's
 * answer is remembered (config-answers.ts) and every landed session still holds its settled stamp
 * (when no writer landed since a parse recorded the root's landing epoch with them,
 * storage/landing-epoch.ts, each by one stat of its index directory; else each by a stat of all its directories), the parse prints from the stamps what the long way would print, having loaded neither the
 * configuration reader, the component registry, commander nor the assembly. When a session moved
 * (or has no stamp, or a stamp's session is gone) the remembered answer still spares the
 * configuration: the long way runs on its root (parse-root.ts), checking every stamp again.
 */
import { PARSER, POLICY } from '../formats/session-flow/types.js';
import { resultFromStamp } from '../processors/assembler/stamp-answer.js';
import { landingNow } from '../storage/landing-epoch.js';
import { landedSessions } from '../storage/landed-files.js';
import { indexHolds, loadSettledStamps, stampHolds, type SettledStamps } from '../storage/settled-stamps-read.js';
import type { ParseResult } from '../processors/assembler/parse.js';
import { rememberedAnswer, type ConfigAnswer } from './config-answers.js';
import { EXIT, type Io } from './io.js';
import { noLandedSession, printParse } from './parse-report.js';

/** `aszcol parse` with only `--json` and `--config <file>` (the whole root); what commander would read from them. */
export interface WholeRootParse {
  config?: string;
  json?: boolean;
}

/** `argv` (from `parse` on) when it is a whole-root parse with only those options; undefined for anything else, which commander reads. */
export function wholeRootParseArgs(argv: string[]): WholeRootParse | undefined {
  if (argv[0] !== 'parse') return undefined;
  const o: WholeRootParse = {};
  for (let i = 1; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '--json') o.json = true;
    else if (a === '--config' && i + 1 < argv.length && !argv[i + 1]!.startsWith('-') && argv[i + 1] !== '') o.config = argv[++i];
    else if (a.startsWith('--config=') && a.length > '--config='.length) o.config = a.slice('--config='.length);
    else return undefined;
  }
  return o;
}

/**
 * The whole-root parse answered from the stamps (`code`, printed), or the remembered configuration
 * answer to parse the long way with (nothing printed); undefined when no answer is remembered.
 */
export function quickParse(args: WholeRootParse, io: Io, env: NodeJS.ProcessEnv = process.env): { code: number } | { answer: ConfigAnswer } | undefined {
  const answer = rememberedAnswer(args.config, env);
  if (!answer) return undefined;
  const results = fromStamps(answer.storageRoot);
  if (!results) return { answer };
  if (results.length === 0) io.err(noLandedSession(answer.storageRoot, answer.source));
  printParse(results, args.json, io);
  return { code: EXIT.ok };
}

/** Every landed session of `root` answered from its stamp, or undefined when one of them cannot be. */
function fromStamps(root: string): ParseResult[] | undefined {
  const sessions = landedSessions(root);
  // No stamps are kept of an empty root (the long way only writes an empty file), so nothing is answered from them.
  const stamps: Pick<SettledStamps, 'sessions' | 'landed'> | undefined =
    loadSettledStamps(root, PARSER, POLICY) ?? (sessions.length === 0 ? { sessions: {} } : undefined);
  if (!stamps) return undefined;
  // A stamp of a session no longer landed: the long way drops it from the file.
  if (Object.keys(stamps.sessions).length !== sessions.length) return undefined;
  // No writer landing and the epoch a parse recorded with these stamps: nothing landed since, and of each session only its index is looked at.
  const recorded = stamps.landed;
  const now = recorded ? landingNow(root) : undefined;
  const untouched = !!recorded && !!now && now.writers.length === 0 && now.epoch === recorded.epoch && now.boot === recorded.boot;
  const results: ParseResult[] = [];
  try {
    for (const session of sessions) {
      const stamp = Object.hasOwn(stamps.sessions, session) ? stamps.sessions[session] : undefined;
      if (!stamp || !(untouched ? indexHolds(root, session, stamp) : stampHolds(root, session, stamp))) return undefined;
      results.push(resultFromStamp(session, stamp));
    }
  } catch {
    return undefined; // a directory that cannot be looked at: the long way reports it
  }
  return results;
}
