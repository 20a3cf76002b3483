/**
 * Slots of memory shared by the request thread and the landing thread: what the request thread
 * keeps up to date for the landing thread without a message each time — the journal's synced
 * end, when a request last arrived (monotonicMs), and the position someone is waiting to see
 * landed (the service's pass, shutdown).
 */
export const PACE_DURABLE_END = 0;
export const PACE_LAST_ARRIVAL_MS = 1;
export const PACE_WANTED = 2;
export const PACE_SLOTS = 3;

/**
 * Milliseconds on the process's monotonic clock: the same in every thread (performance.now()
 * has a time origin per thread) and never stepped back by a change of the wall clock.
 */
export const monotonicMs = () => Number(process.hrtime.bigint() / 1_000_000n);
