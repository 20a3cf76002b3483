import { verifyRoot } from '../storage/verify.js';
import { configFor, EXIT, type Io } from './context.js';

export function runVerify(session: string | undefined, opts: { config?: string; json?: boolean }, io: Io): number {
  const cfg = configFor(opts.config, io);
  if (!cfg) return EXIT.config;
  const r = verifyRoot(cfg.storageRoot, session);
  if (opts.json) io.out(JSON.stringify(r));
  else {
    io.out(`checked ${r.sessions} session(s), ${r.streams} stream(s), ${r.files} file(s), ${r.records} record(s)`);
    if (r.relanded) io.out(`${r.relanded} record(s) landed more than once by an interrupted pass; assembly removes them`);
    if (r.problems.length === 0) io.out('all landed data is contiguous and matches its digests');
    for (const p of r.problems) io.err(`problem: ${p}`);
  }
  return r.problems.length ? EXIT.problem : EXIT.ok;
}
