import { discover } from '../adapters/claude-code/discovery.js';
import { localReceiverConfig } from '../service/pipelines.js';
import { configFor, EXIT, type Io } from './context.js';

export function runSources(opts: { config?: string; json?: boolean }, io: Io): number {
  const cfg = configFor(opts.config, io);
  if (!cfg) return EXIT.config;
  const local = localReceiverConfig(cfg);
  const d = discover(local.sourceRoot, { include: local.include, exclude: local.exclude });
  const rows = d.sessions.map((s) => {
    const count = (k: string) => s.sources.filter((x) => x.kind === k).length;
    return {
      session: s.id,
      primary_dir: s.primaryDir,
      dirs: s.dirs.length,
      main: s.sources.some((x) => x.kind === 'transcript' && x.stream === 'main'),
      streams: count('transcript'),
      sidecars: count('agent_meta'),
      journals: count('journal'),
      manifests: count('workflow_manifest'),
      scripts: count('workflow_script'),
    };
  });
  if (opts.json) {
    io.out(
      JSON.stringify({ source_root: d.root, from: local.sourceRootFrom, sessions: rows, filtered: d.filteredOut.length, errors: d.errors, skipped: d.skipped }),
    );
  } else {
    io.out(`source root  ${d.root}  (from ${local.sourceRootFrom})`);
    io.out(`filtered     ${d.filteredOut.length} session(s) kept out by include/exclude`);
    io.out('');
    io.out(['session'.padEnd(38), 'dirs', 'main', 'streams', 'sidecars', 'journals', 'manifests', 'scripts', 'primary directory'].join('  '));
    for (const r of rows) {
      io.out(
        [
          r.session.padEnd(38),
          String(r.dirs).padStart(4),
          (r.main ? 'yes' : 'no').padStart(4),
          String(r.streams).padStart(7),
          String(r.sidecars).padStart(8),
          String(r.journals).padStart(8),
          String(r.manifests).padStart(9),
          String(r.scripts).padStart(7),
          r.primary_dir,
        ].join('  '),
      );
    }
    io.out('');
    io.out(`total        ${rows.length} session(s), ${rows.reduce((a, r) => a + r.streams, 0)} stream(s)`);
    const spanning = d.sessions.filter((s) => s.dirs.length > 1);
    if (spanning.length) {
      io.out('spanning several directories:');
      for (const s of spanning) io.out(`  ${s.id}  ${s.dirs.length} directories: ${s.dirs.join(', ')}`);
    }
    for (const sk of d.skipped) io.out(`skipped      ${sk.path}: ${sk.why}`);
  }
  for (const e of d.errors) io.err(`aszcol: cannot read ${e.path}: ${e.message}`);
  return d.errors.length ? EXIT.problem : EXIT.ok;
}
