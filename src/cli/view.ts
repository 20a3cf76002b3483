import { parseEndpoint, formatEndpoint } from '../config/reader.js';
import { validateViewConfig, type ViewConfig } from '../extensions/view/config.js';
import { FILL_HINT } from '../extensions/view/catalog.js';
import { ConfigError } from '../util/errors.js';
import { configFor, EXIT, type Io } from './context.js';

/**
 * `aszcol view [--listen ADDR] [--config FILE]`: serves the storage root's conversations until
 * SIGINT or SIGTERM. It only reads; the address is `--listen`, else `extensions.view.endpoint`,
 * else 127.0.0.1:8787.
 */
export async function runView(opts: { config?: string; listen?: string }, io: Io): Promise<number> {
  const cfg = configFor(opts.config, io);
  if (!cfg) return EXIT.config;
  let vc: ViewConfig;
  try {
    vc = validateViewConfig((cfg.raw.extensions as Record<string, unknown> | undefined)?.view, 'extensions.view');
    if (opts.listen !== undefined) vc = { ...vc, endpoint: formatEndpoint(parseEndpoint(opts.listen, '--listen')) };
  } catch (err) {
    if (err instanceof ConfigError) {
      io.err(`aszcol view: ${err.message}`);
      return EXIT.config;
    }
    throw err;
  }
  // Loaded here, so the other commands never load express.
  const { ViewExtension } = await import('../extensions/view/extension.js');
  const ext = new ViewExtension(vc, {
    storageRoot: cfg.storageRoot,
    log: (level, msg, fields) => {
      if (level === 'error' || level === 'warn') io.err(`aszcol view: ${msg}${fields ? ` ${JSON.stringify(fields)}` : ''}`);
    },
  });
  try {
    await ext.start();
  } catch (err) {
    io.err(`aszcol view: ${(err as Error).message}`);
    return EXIT.problem;
  }
  io.out(`aszcol view: serving ${cfg.storageRoot} at http://${ext.address()}/ (read only; Ctrl-C stops)`);
  if (!ext.catalog.ids().length) io.err(`aszcol view: no conversations under ${cfg.storageRoot} yet; ${FILL_HINT}. The page shows them as they arrive.`);
  await new Promise<void>((res) => {
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      res();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await ext.shutdown();
  return EXIT.ok;
}
