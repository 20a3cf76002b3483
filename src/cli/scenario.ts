import type { Command } from 'commander';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { CheckResult } from '../scenario/check.js';
import type { Format } from '../scenario/run.js';
import { parseDuration } from '../util/units.js';
import { parseRemovalPolicy, type RemovalPolicy } from '../storage/scenario-marker.js';
import { EXIT, type Io } from './context.js';

/** A scenario whose checks all passed but some keys could not be checked in this build. */
export const EXIT_INCOMPLETE = 3;

function formatsOf(v: string): Format[] | undefined {
  if (v === 'all') return ['claude-code', 'sd'];
  if (v === 'claude-code' || v === 'sd') return [v];
  return undefined;
}

export function registerScenarioCommands(program: Command, io: Io, setCode: (c: number) => void): void {
  const sc = program.command('scenario').description('build Claude Code files from a scenario, or check what comes out');
  sc.command('build <files...>')
    .description('write the files a real session leaves behind (or Session Data with --format sd)')
    .requiredOption('--out <dir>', 'the directory; it ends as a storage root with its own aszcol.yaml')
    .option('--format <format>', 'claude-code or sd', 'claude-code')
    .option('--at <time>', 'the base time, RFC 3339, or now', 'now')
    .option('--scale <factor>', 'multiplies every delta', '1')
    .option('--interval <duration>', 'overrides the scenario interval')
    .option('--repeat <n>', 'sessions end to end on the clock')
    .option('--every <duration>', 'keep building: one session every duration of wall clock')
    .option('--pick <mode>', 'cycle or random through several scenarios', 'cycle')
    .option('--seed <n>', 'seeds --pick random', '0')
    .option('--through <checkpoint>', 'only the steps up to this checkpoint')
    .option(
      '--remove <policy>',
      'claude-code only: when a pipeline removes a session once all of it is sent, immediately (default) or a duration such as 24h or 7d',
    )
    .action(async (files: string[], o) => {
      const fmt = formatsOf(o.format);
      if (!fmt || fmt.length !== 1) {
        io.err('aszcol scenario build: --format is claude-code or sd');
        setCode(EXIT.config);
        return;
      }
      let remove: RemovalPolicy | undefined;
      try {
        remove = o.remove === undefined ? undefined : parseRemovalPolicy(String(o.remove), parseDuration);
        if (remove !== undefined && fmt[0] !== 'claude-code')
          throw new Error('--remove is for --format claude-code only: an sd build writes no source files to remove');
      } catch (err) {
        io.err(`aszcol scenario build: ${(err as Error).message}`);
        setCode(EXIT.config);
        return;
      }
      let stopping = false;
      const stop = () => {
        stopping = true;
      };
      process.once('SIGINT', stop);
      process.once('SIGTERM', stop);
      // Loaded here, not at the top: the generator is large and only these two commands use it.
      const [{ buildScenarios }, { listScenarioFiles }] = await Promise.all([import('../scenario/build.js'), import('../scenario/files.js')]);
      try {
        await buildScenarios(
          listScenarioFiles(files),
          {
            format: fmt[0]!,
            out: resolve(o.out),
            at: o.at,
            scale: Number(o.scale),
            interval: o.interval ? parseDuration(o.interval) : undefined,
            repeat: o.repeat ? Number(o.repeat) : undefined,
            everyMs: o.every ? parseDuration(o.every) : undefined,
            pick: o.pick === 'random' ? 'random' : 'cycle',
            seed: Number(o.seed),
            through: o.through,
            remove,
          },
          (s) => {
            io.out(`built ${s.session} from ${s.scenario}: ${s.bytes} bytes${s.records ? `, ${s.records} records landed` : ''}`);
            for (const n of s.notGenerated) io.out(`  not generated: ${n}`);
          },
          () => stopping,
        );
        setCode(EXIT.ok);
      } catch (err) {
        io.err(`aszcol scenario build: ${(err as Error).message}`);
        setCode(EXIT.problem);
      }
    });
  sc.command('check <paths...>')
    .description('build, collect, parse and compare each scenario with NAME.expect.yaml')
    .option('--format <format>', 'claude-code, sd or all', 'all')
    .option('--out <dir>', 'keep the roots here')
    .option('--json', 'one JSON document')
    .action(async (paths: string[], o) => {
      const formats = formatsOf(o.format);
      if (!formats) {
        io.err('aszcol scenario check: --format is claude-code, sd or all');
        setCode(EXIT.config);
        return;
      }
      for (const p of paths)
        if (!existsSync(p)) {
          io.err(`aszcol scenario check: ${p} does not exist`);
          setCode(EXIT.config);
          return;
        }
      const [{ formatFailures, ScenarioChecker }, { listScenarioFiles }] = await Promise.all([import('../scenario/check.js'), import('../scenario/files.js')]);
      const results: CheckResult[] = [];
      let errors = 0;
      for (const file of listScenarioFiles(paths)) {
        try {
          results.push(...new ScenarioChecker(file, { out: o.out ? resolve(o.out) : undefined, formats }).run());
        } catch (err) {
          errors++;
          io.err(`error: ${file}: ${(err as Error).message}`);
        }
      }
      if (o.json) io.out(JSON.stringify(results));
      else {
        for (const r of results) {
          io.out(`${r.status.padEnd(10)} ${r.scenario} (${r.format})${r.unchecked.length ? `  not checked yet: ${r.unchecked.join(', ')}` : ''}`);
          for (const line of formatFailures(r)) io.out(line);
        }
        const by = (s: string) => results.filter((r) => r.status === s).length;
        for (const f of [...formats, ...(formats.length > 1 ? (['all'] as const) : [])]) {
          const of = results.filter((r) => r.format === f);
          const n = (st: string) => of.filter((r) => r.status === st).length;
          io.out(`${f}: ${of.length} checked, ${n('passed')} passed, ${n('failed')} failed, ${n('incomplete')} incomplete`);
        }
        io.out(`scenarios: ${by('passed')} passed, ${by('failed') + errors} failed, ${by('incomplete')} incomplete`);
      }
      setCode(errors || results.some((r) => r.status === 'failed') ? EXIT.problem : results.some((r) => r.status === 'incomplete') ? EXIT_INCOMPLETE : EXIT.ok);
    });
}
