import type { Logger } from '../component/log.js';
import type { FinalPass, PassScheduler, Scheduled } from './scheduler.js';

/** What every line about an unfinished final pass tells the reader: nothing is lost, only later. */
const LEFT_FOR_NEXT_START = 'what was not landed or sent stays on disk for the next start';

/**
 * The final pass on shutdown. Finishing the pass in flight is not enough for a sidecar being
 * stopped: transcript lines written after it, and OTLP requests a receiver accepted after it, would
 * wait for the next start. So, once the pass in flight has finished, every component that takes
 * input between passes stops its intake (`stopIntake`; a component without one just keeps going
 * until `shutdown`), then one last full pass lands, parses, derives and sends what is there.
 *
 * It is bounded by what remains of `service.shutdown_timeout`: it shares the passes' abort signal,
 * which the drain aborts shortly before the deadline, so its stages stop at a safe point and the
 * components still have the rest of the budget to shut down. It never fails the shutdown: skipped,
 * cut short, failed or with problems, it is logged with what that leaves for the next start.
 */
export async function runFinalPass(parts: readonly Scheduled[], scheduler: PassScheduler, log: Logger): Promise<void> {
  const signal = scheduler.signal;
  if (signal.aborted) {
    log.warn(`final pass skipped: service.shutdown_timeout is nearly reached; ${LEFT_FOR_NEXT_START}`);
    return;
  }
  await stopIntake(parts, signal);
  if (signal.aborted) {
    log.warn(`final pass skipped: stopping intake took until service.shutdown_timeout was nearly reached; ${LEFT_FOR_NEXT_START}`);
    return;
  }
  log.info('final pass: landing and sending what arrived since the last pass');
  let outcome: FinalPass;
  try {
    outcome = await scheduler.runFinal();
  } catch (err) {
    // runPass keeps a stage's error inside the pass; this is the scheduler itself failing.
    log.error(`final pass failed; ${LEFT_FOR_NEXT_START}`, { error: err });
    return;
  }
  const { status, cut } = outcome;
  const fields = { pass: status.pass, duration_ms: status.durationMs, ...(status.problems.length ? { problems: status.problems } : {}) };
  if (cut) log.warn(`final pass cut short by service.shutdown_timeout; ${LEFT_FOR_NEXT_START}`, fields);
  else if (!status.ok) log.warn(`final pass finished with problems; ${LEFT_FOR_NEXT_START}`, fields);
}

/**
 * Every component's `stopIntake` at once (no receiver keeps taking input while another drains),
 * each failure logged and passed over. Once the signal is aborted we stop waiting: there is no
 * time left for the final pass, and `shutdown` stops the component anyway.
 */
async function stopIntake(parts: readonly Scheduled[], signal: AbortSignal): Promise<void> {
  const taking = parts.filter((p) => typeof p.component.stopIntake === 'function');
  if (!taking.length) return;
  const all = Promise.all(
    taking.map(async (p) => {
      try {
        await p.component.stopIntake!(signal);
        p.log.info('intake stopped');
      } catch (err) {
        p.log.error('could not stop intake; the final pass runs anyway', { error: err });
      }
    }),
  );
  let onAbort: (() => void) | undefined;
  const aborted = new Promise<void>((res) => {
    onAbort = res;
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    await Promise.race([all, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort!);
  }
}
