import type { AszConfig } from './config.js';
import type { Logger } from '../component/log.js';
import { Service } from './service.js';

export interface RunOptions {
  log: Logger;
  /**
   * Subscribes `stop` to whatever asks the service to stop, returning an unsubscribe; by
   * default SIGTERM and SIGINT. A second request while draining exits at once.
   */
  stopOn?: (stop: (signal: string) => void) => () => void;
  /** Called with the running service (tests, and the CLI's forced exit). */
  onStarted?: (svc: Service) => void;
}

/** Exit statuses: 0 drained cleanly, 1 could not start, failed, or did not drain in time. */
export const SERVICE_EXIT = { ok: 0, failed: 1 } as const;

const sleep = (ms: number) => new Promise<void>((res) => setTimeout(res, ms).unref());

/**
 * Drains within the shutdown timeout. Shortly before the deadline the stage in flight (of the
 * pass in flight, or of the final pass) is asked to stop at a safe point, which leaves the margin
 * for components to shut down; at the deadline we give up and report failure, leaving what is on
 * disk consistent (every landed file is whole; a session lock left behind is taken over as stale).
 */
export async function drain(svc: Service, timeoutMs: number, log: Logger): Promise<boolean> {
  const margin = Math.min(2000, Math.floor(timeoutMs / 5));
  const abortTimer = setTimeout(() => svc.abortPass(), timeoutMs - margin);
  abortTimer.unref();
  const done = await Promise.race([svc.shutdown().then(() => true), sleep(timeoutMs).then(() => false)]);
  clearTimeout(abortTimer);
  if (!done) log.error('shutdown did not finish within service.shutdown_timeout', { timeout_ms: timeoutMs });
  return done;
}

export function processSignals(signals: NodeJS.Signals[]): (stop: (signal: string) => void) => () => void {
  return (stop) => {
    for (const s of signals) process.on(s, stop);
    return () => {
      for (const s of signals) process.off(s, stop);
    };
  };
}

/**
 * Runs the service until SIGTERM or SIGINT (or a fatal error), then drains. Resolves with the
 * exit status; the caller exits the process with it.
 */
export async function runService(cfg: AszConfig, opts: RunOptions): Promise<number> {
  const log = opts.log;
  const svc = new Service(cfg, log.child({ component: 'service' }));
  const stopOn = opts.stopOn ?? processSignals(['SIGTERM', 'SIGINT']);
  let stopWith: ((why: { reason: string; fatal: boolean }) => void) | undefined;
  const stopped = new Promise<{ reason: string; fatal: boolean }>((res) => {
    stopWith = res;
  });
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) {
      log.error('second signal while draining: exiting now', { signal });
      process.exit(SERVICE_EXIT.failed);
    }
    stopping = true;
    log.info('signal received: draining', { signal, timeout_ms: cfg.service.shutdownTimeoutMs });
    stopWith!({ reason: signal, fatal: false });
  };
  const onFatal = (err: unknown) => {
    log.error('unexpected error: draining', { error: err instanceof Error ? { message: err.message, stack: err.stack } : String(err) });
    if (!stopping) {
      stopping = true;
      stopWith!({ reason: 'fatal error', fatal: true });
    }
  };
  const unsubscribe = stopOn(onSignal);
  process.on('uncaughtException', onFatal);
  process.on('unhandledRejection', onFatal);
  try {
    try {
      await svc.start();
    } catch (err) {
      log.error('service could not start', { error: (err as Error).message });
      await drain(svc, cfg.service.shutdownTimeoutMs, log);
      return SERVICE_EXIT.failed;
    }
    opts.onStarted?.(svc);
    const why = await stopped;
    const drained = await drain(svc, cfg.service.shutdownTimeoutMs, log);
    return drained && !why.fatal ? SERVICE_EXIT.ok : SERVICE_EXIT.failed;
  } finally {
    unsubscribe();
    process.off('uncaughtException', onFatal);
    process.off('unhandledRejection', onFatal);
  }
}
