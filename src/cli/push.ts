import type { Command } from 'commander';
import { parseDuration } from '../util/units.js';
import { configFor, EXIT, type Io } from './context.js';

interface PushOpts {
  config?: string;
  once?: boolean;
  exporter?: string;
  interval: string;
  json?: boolean;
}

/** `aszcol push [--once]`: send what is not yet sent to the configured otlp exporters. */
export function registerPushCommand(program: Command, io: Io, setCode: (code: number) => void): void {
  program
    .command('push')
    .description('send landed files, rounds and spooled metrics not yet sent, over OTLP; watch at the interval unless --once')
    .option('--config <file>', 'pipeline YAML (default: the embedded default)')
    .option('--once', 'one pass; exit non-zero when anything could not be sent')
    .option('--exporter <id>', 'only this otlp exporter (default: every otlp exporter a pipeline uses)')
    .option('--interval <duration>', 'time between passes when watching', '5s')
    .option('--json', 'one JSON line per exporter and pass')
    .action(async (o: PushOpts) => {
      setCode(await runPush(o, io));
    });
}

export async function runPush(o: PushOpts, io: Io): Promise<number> {
  const loaded = configFor(o.config, io);
  if (!loaded) return EXIT.config;
  const cfg = loaded;
  let intervalMs: number;
  try {
    intervalMs = parseDuration(o.interval);
  } catch (err) {
    io.err(`aszcol: push: --interval: ${(err as Error).message}`);
    return EXIT.config;
  }
  const { pushTargets, pushPass } = await import('../service/push.js');
  const { formatPush } = await import('../exporters/otlp/component.js');
  const { targets, error } = pushTargets(cfg, o.exporter);
  if (error) {
    io.err(`aszcol: push: ${error}`);
    return EXIT.config;
  }
  const report = (p: Awaited<ReturnType<typeof pushPass>>) => {
    io.out(o.json ? JSON.stringify({ exporter: p.id, ...p.push, ...(p.derived ? { derived: p.derived } : {}) }) : `${p.id}: ${formatPush(p.push)}`);
    for (const x of p.push.problems) io.err(`aszcol: ${p.id}: ${x}`);
    // Taken, so neither a problem nor resent; said once here, and listed by `aszcol verify` from push.state.
    for (const x of p.push.rejected.reasons) io.err(`aszcol: ${p.id}: taken with a partial success, its files recorded as rejected: ${x}`);
  };
  try {
    return await loop();
  } catch (err) {
    // A storage problem (push.state, the spool): the receiver's answers never throw.
    io.err(`aszcol: push: ${(err as Error).message}`);
    return EXIT.problem;
  } finally {
    for (const t of targets) t.pusher.close();
  }

  async function loop(): Promise<number> {
    if (o.once) {
      let ok = true;
      for (const t of targets) {
        const p = await pushPass(cfg, t, { once: true });
        report(p);
        if (p.push.problems.length || p.push.pending > 0 || p.push.skipped) ok = false;
      }
      return ok ? EXIT.ok : EXIT.problem;
    }
    const abort = new AbortController();
    let wake: (() => void) | undefined;
    const stop = () => {
      abort.abort();
      wake?.();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
    const waiting = new Map<string, number>();
    while (!abort.signal.aborted) {
      for (const t of targets) {
        const p = await pushPass(cfg, t, { once: false, waiting, signal: abort.signal });
        if (!p.push.skipped || p.push.skipped === 'busy') report(p);
      }
      if (abort.signal.aborted) break;
      // A target backing off (failures, a Retry-After longer than the interval) skips its passes until then.
      await new Promise<void>((res) => {
        const t = setTimeout(res, intervalMs);
        wake = () => {
          clearTimeout(t);
          res();
        };
      });
    }
    return EXIT.ok;
  }
}
