/**
 * `aszcol index SESSION`: prints a session's derived index (what assembly reads: ids and roles of
 * every landed record, never text) and, with --rebuild, discards it and builds it again from the
 * landed files under the session's lock, the way a parse would after a schema change.
 */
import { discardIndex, loadIndex, readIndexState, updateIndex, INDEX_SCHEMA, type IndexEntry, type SessionIndex } from '../storage/index.js';
import { landedSessions } from '../storage/landed-files.js';
import { sessionLockPath } from '../storage/layout.js';
import { FileLock } from '../storage/lock.js';
import { configFor, EXIT, type Io } from './context.js';

function rebuild(root: string, session: string): { index: SessionIndex; problems: string[] } | 'busy' {
  const lock = new FileLock(sessionLockPath(root, session));
  if (!lock.tryAcquire()) return 'busy';
  try {
    discardIndex(root, session);
    return updateIndex(root, session);
  } finally {
    lock.release();
  }
}

const ENTRY_FIELDS = [
  'seq',
  'row',
  'fileKind',
  'stream',
  'fileBatch',
  'id',
  'parent',
  'call',
  'run',
  'continues',
  'tool',
  'child',
  'batch',
  'started_by',
  'label',
  'from',
  'time',
  'trigger',
  'flags',
  'parts',
] as const;

/** A loaded entry reads its fields from the index's columns on access; spreading it would copy none. */
function plainEntry(e: IndexEntry): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of ENTRY_FIELDS) if (e[k] !== undefined) out[k] = e[k];
  return out;
}

export function runIndex(session: string, opts: { config?: string; rebuild?: boolean; json?: boolean }, io: Io): number {
  const cfg = configFor(opts.config, io);
  if (!cfg) return EXIT.config;
  const root = cfg.storageRoot;
  if (!landedSessions(root).includes(session)) {
    io.err(`aszcol index: ${session}: no landed session of that id under ${root}`);
    return EXIT.problem;
  }
  let index: SessionIndex | undefined;
  if (opts.rebuild) {
    const r = rebuild(root, session);
    if (r === 'busy') {
      io.err(`aszcol index: ${session}: another process holds the session's lock; nothing was rebuilt`);
      return EXIT.problem;
    }
    for (const p of r.problems) io.err(`aszcol index: ${session}: stopped at a landed file that does not read: ${p}`);
    if (r.problems.length) return EXIT.problem;
    index = r.index;
  } else {
    const state = readIndexState(root, session);
    index = loadIndex(root, session);
    if (!index || state?.schema !== INDEX_SCHEMA) {
      io.err(`aszcol index: ${session}: no current index (schema ${state?.schema ?? 'none'}, this build reads ${INDEX_SCHEMA}); run with --rebuild`);
      return EXIT.problem;
    }
  }
  if (opts.json) {
    io.out(JSON.stringify({ session, schema: INDEX_SCHEMA, indexed_seq: index.indexedSeq, files: index.files, entries: index.entries.map(plainEntry) }));
    return EXIT.ok;
  }
  io.out(
    `index ${session}  schema ${INDEX_SCHEMA}  through seq ${index.indexedSeq}  files ${index.files.length}  entries ${index.entries.length}${opts.rebuild ? '  (rebuilt)' : ''}`,
  );
  io.out(`${'SEQ'.padEnd(6)} ${'KIND'.padEnd(18)} ${'RECORDS'.padEnd(8)} ${'STREAM'.padEnd(18)} FILE`);
  for (const f of index.files)
    io.out(`${String(f.seq).padEnd(6)} ${f.kind.padEnd(18)} ${String(f.records).padEnd(8)} ${(f.stream ?? f.batch ?? '-').padEnd(18)} ${f.rel}`);
  return EXIT.ok;
}
