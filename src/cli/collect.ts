import { LocalCollector, type PassReport } from '../receivers/claude-code-local/pass.js';
import { defaultWorkers } from '../receivers/claude-code-local/session-pool.js';
import { collectSettings, oneShotBuild } from './collect-config.js';
import { EXIT, type Io } from './io.js';

export function formatPass(r: PassReport): string {
  return (
    `collect: sessions ${r.sessions} sources ${r.sources} landed ${r.landedFiles} file(s) ${r.landedRecords} record(s) ${r.landedBytes} byte(s)` +
    ` busy ${r.busy} pending ${r.pending} conflicts ${r.conflicts} gone ${r.sourceGone} filtered ${r.filteredOut} errors ${r.errors.length} (${r.durationMs} ms)`
  );
}

function reportPass(r: PassReport, io: Io, json: boolean): void {
  io.out(json ? JSON.stringify(r) : formatPass(r));
  for (const c of r.newConflicts) io.err(`aszcol: conflict: ${c.source}: ${c.reason}`);
  for (const e of r.errors) io.err(`aszcol: error: ${e.where}: ${e.message}`);
  for (const n of r.notes ?? []) io.err(`aszcol: note: ${n}`);
  // Not an error: the plugin's observations of a session not landed yet wait in the hook spool.
  for (const w of r.hooks?.waiting ?? []) io.err(`aszcol: waiting: _hooks/spool/${w.spool}: ${w.reason}`);
}

/** A pass is complete only with nothing left undone: no error, nothing pending, no conflict, no busy session. */
export function passIsClean(r: PassReport): boolean {
  return r.errors.length === 0 && r.pending === 0 && r.conflicts === 0 && r.busy === 0;
}

function crashAfterBodyFiles(setting: string | undefined): ((files: number) => void) | undefined {
  const after = Number(setting);
  if (!setting || !Number.isInteger(after) || after < 1) return undefined;
  return (files) => {
    if (files >= after) process.kill(process.pid, 'SIGKILL');
  };
}

export async function runCollect(opts: { config?: string; once?: boolean; json?: boolean }, io: Io): Promise<number> {
  // The configuration's remembered answer when nothing that decided it changed (collect-config.ts).
  const cfg = await collectSettings(opts.config, io);
  if (!cfg) return EXIT.config;
  const local = cfg.local;
  const collector = new LocalCollector({
    root: cfg.storageRoot,
    sourceRoot: local.sourceRoot,
    filter: { include: local.include, exclude: local.exclude },
    maxDeltaBytes: local.maxDeltaBytes,
    workers: local.workers || defaultWorkers(),
    providerBodies: local.providerBodies || undefined,
    batchSync: local.batchSync,
    // The crash test's hook: a real crash, between landing a file and committing its cursor.
    afterLand: process.env.ASZCOL_TEST_CRASH_AFTER_LAND ? () => process.kill(process.pid, 'SIGKILL') : undefined,
    // And between two provider_body files of one pass: the first installed, the next not begun.
    afterBodyFile: crashAfterBodyFiles(process.env.ASZCOL_TEST_CRASH_AFTER_BODY_FILES),
    // And between installing the plugin's observation files and moving their cursors.
    afterHookLand: process.env.ASZCOL_TEST_CRASH_AFTER_HOOK_LAND ? () => process.kill(process.pid, 'SIGKILL') : undefined,
    // One pass starts from what the last one left quiet, by a stat per source and session directory (remembered-quiet.ts).
    remember: opts.once ? oneShotBuild() : undefined,
    // And after a step of rotating a landed hook spool away: retired, switched or removed.
    afterHookTrim: process.env.ASZCOL_TEST_CRASH_AT_HOOK_TRIM
      ? (step) => {
          if (step === process.env.ASZCOL_TEST_CRASH_AT_HOOK_TRIM) process.kill(process.pid, 'SIGKILL');
        }
      : undefined,
  });
  if (opts.once) {
    try {
      const r = await collector.passAsync();
      reportPass(r, io, !!opts.json);
      return passIsClean(r) ? EXIT.ok : EXIT.problem;
    } catch (err) {
      // A disk that refuses writes (full, read-only): say which path, exit 1; nothing landed is lost.
      const e = err as NodeJS.ErrnoException;
      if (!e.code) throw err;
      io.err(`aszcol: collect: ${e.message}${e.path && !e.message.includes(e.path) ? ` (${e.path})` : ''}`);
      return EXIT.problem;
    } finally {
      await collector.close();
    }
  }
  let stopping = false;
  let wake: (() => void) | undefined;
  const stop = () => {
    stopping = true;
    wake?.();
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
  while (!stopping) {
    reportPass(await collector.passAsync(), io, !!opts.json);
    if (stopping) break;
    await new Promise<void>((res) => {
      wake = res;
      setTimeout(res, local.intervalMs).unref();
    });
  }
  await collector.close();
  return EXIT.ok;
}
