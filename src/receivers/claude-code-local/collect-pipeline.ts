/**
 * A worker's sessions collected into sync batches, one batch being made durable while the next is
 * built. Waiting for a batch's syncs was about a third of a worker's first pass (issue 19): with
 * the next batch converted meanwhile, that wait hides behind work. The crash-safe order is kept
 * across batches: a batch's syncs start only after the one before it moved its cursors, so at
 * any moment at most one batch has installed files no cursor counts yet.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import type { DiscoveredSession } from '../../adapters/claude-code/discovery.js';
import { BATCH_FILES, SyncBatch, type CommitStep } from '../../storage/sync-batch.js';
import { FilesystemSync } from '../../storage/filesystem-sync.js';
import { BatchLandingMark } from '../../storage/batch-landing-mark.js';
import { batchFailed, beginSession, finishSessions, releaseAll, type HeldSession, type LocalCollectOptions, type PassReport } from './session-collect.js';

/** Makes one batch durable in the crash-safe order, then releases its sessions' locks; failures are reported, never thrown. */
async function makeDurable(batch: SyncBatch, held: HeldSession[], mark: BatchLandingMark, o: LocalCollectOptions, report: PassReport): Promise<void> {
  try {
    await batch.commitAround(() => finishSessions(held, o, report, batch), o.afterLand);
  } catch (err) {
    batch.abort();
    batchFailed(held, o, report, err);
  } finally {
    releaseAll(held);
    // After the batch's last lock went: one new epoch for all its sessions.
    mark.finish();
  }
}

/**
 * The batches of one worker, made durable strictly one after another. Lives as long as the worker,
 * so the batch of one group of sessions syncs while the next group is collected.
 */
export class SyncChain {
  private syncing: Promise<void> = Promise.resolve();
  private whole: FilesystemSync | undefined;

  /** `step`: the crash tests' hook, handed to every batch synced whole. */
  constructor(private readonly step?: (at: CommitStep) => void) {}

  /** A new batch for `o`'s root, synced whole when the collector was told to (`batch_sync: filesystem`), else file by file. */
  newBatch(o: LocalCollectOptions): SyncBatch {
    if (o.batchSync !== 'filesystem') return new SyncBatch();
    if (this.whole?.root !== o.root) this.whole = new FilesystemSync(o.root);
    return new SyncBatch(this.whole, this.step);
  }

  /** Why this chain's batches went file by file, once (a missing or failing `sync -f`). */
  takeNote(): string | undefined {
    return this.whole?.takeNote();
  }

  /** Waits until no batch is syncing, then starts `batch` syncing; `durable` settles when it is durable. */
  async handOn(batch: SyncBatch, held: HeldSession[], mark: BatchLandingMark, o: LocalCollectOptions, report: PassReport): Promise<{ durable: Promise<void> }> {
    const before = this.syncing;
    const durable = before.then(() => makeDurable(batch, held, mark, o, report));
    this.syncing = durable;
    await before;
    return { durable };
  }

  /** Settles once every batch handed on so far is durable (or reported as failed). */
  idle(): Promise<void> {
    return this.syncing;
  }
}

/**
 * Collects `sessions` into batches of about `BATCH_FILES` landed files, each handed to `chain` to
 * sync while the sessions after it are collected. Resolves once the last batch has started
 * syncing, with the promise of its durability (which implies every earlier batch's).
 */
export async function collectSessionsPipelined(
  sessions: DiscoveredSession[],
  o: LocalCollectOptions,
  report: PassReport,
  chain: SyncChain,
): Promise<{ durable: Promise<void> }> {
  let batch = chain.newBatch(o);
  let held: HeldSession[] = [];
  // One landing mark per batch, not one per session (storage/batch-landing-mark.ts).
  let mark = new BatchLandingMark(o.root);
  let durable: Promise<void> = chain.idle();
  const phases = (report.phases ??= { discoverMs: 0, judgeMs: 0, collectMs: 0, finishMs: 0, buildMs: 0, stallMs: 0 });
  const handOn = async () => {
    const waited = performance.now();
    ({ durable } = await chain.handOn(batch, held, mark, o, report));
    phases.stallMs += performance.now() - waited;
    batch = chain.newBatch(o);
    held = [];
    mark = new BatchLandingMark(o.root);
  };
  for (const s of sessions) {
    const started = performance.now();
    const h = beginSession(s, o, report, batch, mark);
    phases.buildMs += performance.now() - started;
    if (h) held.push(h);
    if (batch.pendingFiles >= BATCH_FILES) await handOn();
    // A turn of the event loop between sessions, so the syncing batch moves on as its syncs finish.
    await nextTurn();
  }
  if (held.length > 0 || !batch.empty) await handOn();
  else {
    batch.abort();
    mark.finish();
  }
  return { durable };
}
