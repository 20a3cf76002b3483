/**
 * One landing mark for the session locks a collect worker takes together (one batch). Each
 * `SessionLock` on its own creates a mark file before its lock and writes a new epoch and removes the
 * mark after: three files created and freed per session, which on a journal-less ext4 slow every later
 * inode allocation (docs/first-collect-profile.md). Under a batch mark the protocol of landing-epoch.ts
 * holds for the batch as a whole: the mark is there before the first lock is taken and stays until
 * after the last is released; then the epoch moves once.
 */
import { LandingMark } from './landing-epoch.js';

export class BatchLandingMark {
  private mark: LandingMark | undefined;

  constructor(readonly root: string) {}

  /** Before a lock under this mark is taken: the mark is made on the first. */
  enter(): void {
    this.mark ??= LandingMark.begin(this.root);
  }

  /** After every lock taken under it was released: a new epoch, then the mark gone (nothing when no lock was tried). */
  finish(): void {
    const mark = this.mark;
    this.mark = undefined;
    mark?.finish(this.root);
  }
}
