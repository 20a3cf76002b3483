/**
 * A group of sessions parsed together, their new rounds made durable in one sync batch: every
 * round is written unsynced, then all are synced side by side and installed (storage/sync-batch.ts),
 * and only then does each chain's state move and its lock go. The crash-safe order of a lone parse
 * (round durable before the state that names it) holds for the whole group, at a fraction of its
 * syncs: a first parse of a long history writes one or two rounds per session, and one sync each
 * was most of its time.
 */
import { SyncBatch } from '../../storage/sync-batch.js';
import type { DeferredRounds } from './parse.js';
import { parseOne, type SessionParse } from './parse-all.js';

/**
 * Parses `sessions` (each answered from its settled chain when it can be), committing their rounds
 * together. With `usageCache` (a parse for `aszcol usage`), each chain written is also worked out
 * into its usage cache here, on this thread, while the report's own thread waits for the others.
 */
export async function parseGroup(root: string, sessions: string[], maxRoundBytes: number, opts: { usageCache?: boolean } = {}): Promise<SessionParse[]> {
  const deferred: DeferredRounds = { batch: new SyncBatch(), after: [], release: [] };
  const usage = opts.usageCache ? await usageOfWritten(root, deferred) : undefined;
  const out: SessionParse[] = [];
  for (const session of sessions) {
    try {
      out.push({ session, result: await parseOne(root, session, maxRoundBytes, deferred) });
    } catch (err) {
      out.push({ session, error: err as Error });
    }
  }
  let failed: Error | undefined;
  try {
    await deferred.batch.commit();
    // Each chain's state only once its rounds are durable.
    for (const step of deferred.after) step();
  } catch (err) {
    failed = err as Error;
  } finally {
    for (const release of deferred.release) release();
  }
  if (!failed) {
    usage?.keep();
    return out;
  }
  // A round the batch held may not be on disk: every session that wrote one failed with it (the next parse takes it up again).
  const why = failed.message;
  return out.map((p) =>
    'result' in p && p.result.status === 'written' ? { session: p.session, error: new Error(`its rounds could not be made durable: ${why}`) } : p,
  );
}

/**
 * The usage of each chain the group writes, worked out from its fold as its parse leaves it (reading
 * the round back was a fifth of a first parse; holding every fold until the batch commits cost as much
 * in GC), then kept once the batch is durable, for the head it was worked out at. A chain that cannot
 * be worked out is left to the report, which says why.
 */
async function usageOfWritten(root: string, deferred: DeferredRounds): Promise<{ keep: () => void }> {
  const { usageOfFold, keepUsage } = await import('../../assemble/usage/load.js');
  const worked: { session: string; head: string; entry: ReturnType<typeof usageOfFold> }[] = [];
  deferred.written = (session, fold, head, index) => {
    try {
      worked.push({ session, head, entry: usageOfFold(root, session, fold, index) });
    } catch {
      /* see above */
    }
  };
  return { keep: () => worked.forEach((w) => keepUsage(root, w.session, w.head, w.entry)) };
}
