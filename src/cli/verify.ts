import { verifyRoot } from '../storage/verify.js';
import { verifyChains } from '../storage/verify-chain.js';
import { PushState, type RejectedFile } from '../storage/push-state.js';
import { configFor, EXIT, type Io } from './context.js';

const TEMP_WRITER = { alive: 'its writer is running', gone: 'its writer is gone', unknown: 'no writer named' } as const;

export function runVerify(session: string | undefined, opts: { config?: string; json?: boolean }, io: Io): number {
  const cfg = configFor(opts.config, io);
  if (!cfg) return EXIT.config;
  const r = verifyRoot(cfg.storageRoot, session);
  const c = verifyChains(cfg.storageRoot, session);
  const pushed = rejectedFiles(cfg.storageRoot, session);
  c.problems.push(...pushed.problems);
  if (opts.json) io.out(JSON.stringify({ ...r, chains: c.chains, rounds: c.rounds, rejected: pushed.rejected, problems: [...r.problems, ...c.problems] }));
  else {
    io.out(`checked ${r.sessions} session(s), ${r.streams} stream(s), ${r.files} file(s), ${r.records} record(s) under ${cfg.storageRoot}`);
    io.out(`checked ${c.chains} conversation chain(s), ${c.rounds} round(s)`);
    const q = r.quarantine;
    if (q.files)
      io.out(
        `${q.records} record(s) in ${q.files} batch(es) are quarantined in ${q.dir}, by reason: ${Object.entries(q.reasons)
          .map(([k, n]) => `${k} ${n}`)
          .join(', ')}`,
      );
    if (r.relanded)
      io.out(
        `${r.relanded} record(s) landed more than once by an interrupted pass (a line at the byte it landed at before, or a document version identical to the one before it); assembly reads each once`,
      );
    for (const t of r.temporaries) io.out(`warning: temporary file ${t.path} (${TEMP_WRITER[t.writer]}${t.pid === undefined ? '' : `, pid ${t.pid}`})`);
    if (r.temporaries.length) io.out(`${r.temporaries.length} temporary file(s) found`);
    // Receivers took these files with a partial success: not a fault of the data, not sent again, worth a person's look.
    if (pushed.rejected.length) io.out(`${pushed.rejected.length} file(s) a receiver took with a partial success and rejected part of (push.state):`);
    for (const x of pushed.rejected) io.out(`  rejected by ${x.endpoint}: ${x.rel}: ${x.reason}`);
    if (r.problems.length === 0 && c.problems.length === 0) io.out('all landed data is contiguous and matches its digests; every round chain verifies');
    for (const p of [...r.problems, ...c.problems]) io.err(`problem: ${p}`);
  }
  return r.problems.length || c.problems.length ? EXIT.problem : EXIT.ok;
}

/** The files push.state records as rejected by a receiver, of one session or all. */
function rejectedFiles(root: string, session: string | undefined): { rejected: RejectedFile[]; problems: string[] } {
  try {
    const all = new PushState(root).allRejected();
    return { rejected: session ? all.filter((x) => x.rel.startsWith(`${session}/`)) : all, problems: [] };
  } catch (err) {
    return { rejected: [], problems: [`push.state: ${(err as Error).message}`] };
  }
}
