/**
 * Lowers the CPU priority of the calling thread only, so that background work (landing what the
 * receiver journaled, say) yields to the threads that answer requests when the cores are busy,
 * and runs at full speed when they are not.
 *
 * Node has no call for a thread's priority. On Linux a thread's id is a valid target of
 * setpriority(2) and changes that thread alone, and `/proc/thread-self` names the calling thread's
 * id; elsewhere this does nothing and says why.
 */
import { readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Sets this thread's nice value to `nice` (1–19, higher yields more); returns why not, if it could not. */
export function lowerThreadPriority(nice: number): string | undefined {
  if (process.platform !== 'linux') return `thread priorities are only set on Linux, not on ${process.platform}`;
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    if (!Number.isSafeInteger(tid) || tid <= 0) return 'the thread id could not be read from /proc/thread-self';
    setPriority(tid, nice);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}
