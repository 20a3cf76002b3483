/**
 * `aszcol parse` once its configuration is known: the named session, or every landed session of the
 * root through the settled stamps, printed as parse.ts always printed it. Apart from the loading of
 * the configuration so that a parse whose configuration's answer is remembered (config-answers.ts)
 * loads neither the YAML reader nor the component registry.
 */
import type { ParseResult } from '../processors/assembler/parse.js';
import { parseAll, parseOne, type SessionParse } from '../processors/assembler/parse-all.js';
import { landedSessions } from '../storage/landed-files.js';
import { EXIT, type Io } from './io.js';
import { noLandedSession, printParse } from './parse-report.js';

export interface RootParse {
  storageRoot: string;
  /** The configuration's name, for saying where a parse found nothing. */
  source: string;
  maxRoundBytes: number;
  /** One session the long way; undefined for the whole root. */
  session?: string;
  json?: boolean;
}

export async function parseRoot(o: RootParse, io: Io): Promise<number> {
  const { storageRoot: root, session, maxRoundBytes } = o;
  const sessions = session ? [session] : landedSessions(root);
  const results: ParseResult[] = [];
  let failed = 0;
  const report = (p: SessionParse) => {
    if ('error' in p) {
      failed++;
      io.err(`error: ${p.session}: ${p.error.message}`);
      return;
    }
    const r = p.result;
    if (r.status === 'empty') return;
    results.push(r);
    if (r.status === 'busy') {
      io.err(`error: ${p.session}: another parser holds this conversation's chain`);
      failed++;
    }
  };
  // One named session the long way; the whole root through the settled stamps, which only a whole-root parse keeps.
  if (session) {
    try {
      report({ session, result: await parseOne(root, session, maxRoundBytes) });
    } catch (err) {
      report({ session, error: err as Error });
    }
  } else await parseAll({ root, sessions, maxRoundBytes, usageCache: true }, report); // a later `usage` reads, not folds
  if (sessions.length === 0) io.err(noLandedSession(root, o.source));
  printParse(results, o.json, io);
  return failed ? EXIT.problem : EXIT.ok;
}
