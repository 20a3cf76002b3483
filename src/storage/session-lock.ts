/**
 * A session's lock as a writer of its evidence takes it: the lock file (`<session>/.lock`, lock.ts)
 * with the root's landing mark around it (landing-epoch.ts), so a parse with nothing new can trust
 * its stamps without looking at each session. Every writer that lands, replaces or removes a
 * session's landed files, cursors or session state takes it; one that only derives from them (the
 * index) takes the plain lock.
 */
import { sessionLockPath } from './layout.js';
import { LandingMark } from './landing-epoch.js';
import { FileLock } from './lock.js';
import type { BatchLandingMark } from './batch-landing-mark.js';

export class SessionLock extends FileLock {
  private mark: LandingMark | undefined;

  /** With `batch`, the lock is taken under the batch's mark, which its owner finishes after the batch's last release. */
  constructor(
    readonly root: string,
    readonly session: string,
    private readonly batch?: BatchLandingMark,
  ) {
    super(sessionLockPath(root, session));
  }

  /** The mark first: from here until release, no parse records the root's epoch. */
  override tryAcquire(): boolean {
    if (this.batch) {
      this.batch.enter();
      return super.tryAcquire();
    }
    const mark = LandingMark.begin(this.root);
    let taken = false;
    try {
      taken = super.tryAcquire();
    } finally {
      if (!taken) mark.abandon();
    }
    if (taken) this.mark = mark;
    return taken;
  }

  /** After the writer's last change: the lock goes, then a new epoch and the mark. */
  override release(): void {
    const mark = this.mark;
    this.mark = undefined;
    super.release();
    mark?.finish(this.root);
  }
}
