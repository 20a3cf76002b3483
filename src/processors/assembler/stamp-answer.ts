/**
 * What a whole-root parse reports for a session answered from its settled stamp: the same result a
 * parse finding it unchanged prints, taken from the stamp alone. Shared by parse-all.ts and the CLI's
 * quick answer (cli/parse-quick.ts), which must print byte for byte what the long way prints.
 */
import type { SettledStamp } from '../../storage/settled-stamps-read.js';
import type { ParseResult } from './parse.js';

export const resultFromStamp = (session: string, s: SettledStamp): ParseResult => ({
  session,
  status: 'unchanged',
  rounds: [],
  throughSeq: s.through_seq,
  head: s.head,
  headDigest: s.head_digest,
  summary: s.summary,
});
