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

export class SessionLock extends FileLock {
  private mark: LandingMark | undefined;

  constructor(
    readonly root: string,
    readonly session: string,
  ) {
    super(sessionLockPath(root, session));
  }

  /** The mark first: from here until release, no parse records the root's epoch. */
  override tryAcquire(): boolean {
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
