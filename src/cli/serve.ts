import { JsonLogger } from '../component/log.js';
import { runService } from '../service/run.js';
import { configFor, EXIT, type Io } from './context.js';

/** `aszcol [--config FILE]`: runs the service until SIGTERM/SIGINT, then drains. */
export async function runServe(opts: { config?: string }, io: Io): Promise<number> {
  const cfg = configFor(opts.config, io);
  if (!cfg) return EXIT.config;
  const log = new JsonLogger(cfg.service.telemetry.logs.level);
  const code = await runService(cfg, { log });
  // Everything is shut down; a handle some library left open must not keep the process alive
  // past the drain (the exit status is already decided).
  setTimeout(() => process.exit(code), code === 0 ? 100 : 0).unref();
  return code;
}
