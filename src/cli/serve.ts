import { JsonLogger } from '../component/log.js';
import { bannerLines } from '../service/description.js';
import { runService } from '../service/run.js';
import { configFor, EXIT, type Io } from './context.js';

/** `aszcol [--config FILE]`: runs the service until SIGTERM/SIGINT, then drains. */
export async function runServe(opts: { config?: string }, io: Io, terminal: boolean = process.stdout.isTTY === true): Promise<number> {
  const cfg = configFor(opts.config, io);
  if (!cfg) return EXIT.config;
  const log = new JsonLogger(cfg.service.telemetry.logs.level);
  // A person at a terminal gets the page, the data and the next step in words; a pipe or a
  // container log gets only the JSON lines (the same facts are at /api/status).
  const onStarted = terminal ? (svc: { describe(): Parameters<typeof bannerLines>[0] }) => bannerLines(svc.describe()).forEach((l) => io.out(l)) : undefined;
  const code = await runService(cfg, { log, ...(onStarted ? { onStarted } : {}) });
  // Everything is shut down; a handle some library left open must not keep the process alive
  // past the drain (the exit status is already decided).
  setTimeout(() => process.exit(code), code === 0 ? 100 : 0).unref();
  return code;
}
