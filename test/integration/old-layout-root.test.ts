/**
 * A storage root written before cursors were kept in one file per session, before the index
 * dropped its `index.state` and before the local receiver kept the session's counter in the cursor
 * file's head: one cursor file per source beside its landed files, the counter in `session.state`,
 * and the index's state in a second file. This build must read such a root as it is — a pass with nothing new lands
 * nothing, verify finds nothing wrong, parse gives the same conversations — and land what is new in
 * it once. The old layout is made by hand from a root this build wrote, as the older build wrote it.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { LocalCollector } from '../../src/receivers/claude-code-local/pass.js';
import { formatCursor } from '../../src/storage/cursor.js';
import { SessionCursors, readCursorsHead, sessionCursorsPath } from '../../src/storage/session-cursors.js';
import { sessionStatePath } from '../../src/storage/layout.js';
import { INDEX_SCHEMA, loadIndex, readIndexState } from '../../src/storage/index.js';
import { verifyRoot } from '../../src/storage/verify.js';
import { parseSession } from '../../src/processors/assembler/parse.js';
import { foldOf } from '../helpers/parse.js';
import { landedFiles, recordsOf } from '../helpers/root.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { rec, writeLines } from '../helpers/transcript.js';

afterAll(cleanupTemp);

const SESSIONS = 6;
const sid = (i: number) => `0438c73b-5555-4666-8777-${String(i).padStart(12, '0')}`;
const agent = (i: number) => `a${String(i).padStart(16, '0')}`;
const projectOf = (src: string, i: number) => join(src, `-home-me-q${i % 2}`);

/** Six sessions, twelve sources; every other one has a helper's transcript and sidecar (three sources in two stream directories). */
function writeHistory(src: string): void {
  for (let i = 0; i < SESSIONS; i++) {
    const s = sid(i);
    const project = projectOf(src, i);
    writeLines(
      join(project, `${s}.jsonl`),
      Array.from({ length: 4 }, (_, j) => rec.user(s, `prompt ${j} of session ${i}`)),
    );
    if (i % 2 === 0) {
      mkdirSync(join(project, s, 'subagents'), { recursive: true });
      writeLines(join(project, s, 'subagents', `agent-${agent(i)}.jsonl`), [rec.user(s, 'helper task', { isSidechain: true, agentId: agent(i) })]);
      writeLines(join(project, s, 'subagents', `agent-${agent(i)}.meta.json`), [{ agentType: 'general-purpose', description: 'helper' }]);
    }
  }
}

const pass = (root: string, src: string) => new LocalCollector({ root, sourceRoot: src, filter: { include: [], exclude: [] }, maxDeltaBytes: 2 << 20 }).pass();

/** The counter the older layout's session.state holds for sid(1): above every file it landed. */
const STALE_AHEAD = 40;

/**
 * Rewrites a root into the older layout: each source's cursor in `<stream or run>/<prefix>.cursor`,
 * no `sources.cursor`, the session's counter in `session.state`, and `index/index.state` beside the
 * index, in the older build's words.
 */
function toOldLayout(root: string): void {
  for (let i = 0; i < SESSIONS; i++) {
    const s = sid(i);
    const cursors = SessionCursors.read(root, s);
    for (const { key, cursor } of cursors.all()) writeFileSync(join(root, s, `${key}.cursor`), formatCursor(cursor));
    // The counter in session.state, as the older build kept it; sid(1)'s ahead of its files, as after a writer that took numbers it never landed.
    const next = i === 1 ? STALE_AHEAD : cursors.counter.nextSeq!;
    writeFileSync(sessionStatePath(root, s), `schema     1\nnext_seq   ${next}\nliveness   unknown\nlast_scan  2026-11-30T05:14:12Z\n`);
    rmSync(sessionCursorsPath(root, s));
    const ix = loadIndex(root, s)!;
    const pad = (k: string) => k.padEnd('indexed_seq'.length + 2);
    writeFileSync(
      join(root, s, 'index', 'index.state'),
      `${pad('schema')}${INDEX_SCHEMA}\n${pad('indexed_seq')}${ix.indexedSeq}\n${pad('files')}${ix.files.length}\n${pad('entries')}${ix.entries.length}\n`,
    );
  }
}

/** Each session's conversation: its nodes' ids and kinds, after a parse. */
function conversations(root: string): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (let i = 0; i < SESSIONS; i++) {
    parseSession({ root, session: sid(i), maxRoundBytes: 2 << 20 });
    out[sid(i)] = foldOf(root, sid(i))
      .nodes.map((n) => `${n.kind} ${n.id}`)
      .sort();
  }
  return out;
}

const sourceCursorFiles = (root: string, s: string) => {
  const out: string[] = [];
  const walk = (d: string) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith('.cursor') && d !== join(root, s)) out.push(join(d, e.name).slice(root.length + 1));
    }
  };
  walk(join(root, s, 'streams'));
  return out.sort();
};

describe('a root in the layout before one cursor file per session', () => {
  test('is read as it is, verifies, parses to the same conversations, and lands new lines once', () => {
    const base = tempDir('aszcol-old-layout-');
    const src = join(base, 'projects');
    const old = join(base, 'old');
    const fresh = join(base, 'fresh');
    writeHistory(src);
    expect(pass(old, src)).toMatchObject({ landedFiles: 12, errors: [] });
    toOldLayout(old);
    expect(sourceCursorFiles(old, sid(0))).toEqual([
      `${sid(0)}/streams/${agent(0)}/meta.cursor`,
      `${sid(0)}/streams/${agent(0)}/transcript.cursor`,
      `${sid(0)}/streams/main/transcript.cursor`,
    ]);
    expect(existsSync(sessionCursorsPath(old, sid(0)))).toBe(false);

    // Nothing new: every source is found where its old cursor says; a build that did not read them would land all twelve again.
    expect(pass(old, src)).toMatchObject({ sessions: SESSIONS, sources: 12, landedFiles: 0, conflicts: 0, errors: [] });
    expect(verifyRoot(old)).toMatchObject({ problems: [], files: 12, relanded: 0 });
    expect(readIndexState(old, sid(1))).toEqual({ schema: INDEX_SCHEMA, indexedSeq: 1 });

    // The same conversations as a root this build lands from nothing.
    expect(pass(fresh, src)).toMatchObject({ landedFiles: 12, errors: [] });
    expect(conversations(old)).toEqual(conversations(fresh));

    // New lines in a main transcript and in a helper's: each lands once, after the line its old cursor counted.
    writeLines(join(projectOf(src, 0), `${sid(0)}.jsonl`), [rec.user(sid(0), 'one more main')], { append: true });
    writeLines(
      join(projectOf(src, 2), sid(2), 'subagents', `agent-${agent(2)}.jsonl`),
      [rec.user(sid(2), 'one more helper', { isSidechain: true, agentId: agent(2) })],
      {
        append: true,
      },
    );
    expect(pass(old, src)).toMatchObject({ landedFiles: 2, landedRecords: 2, errors: [] });
    expect(recordsOf(landedFiles(old, sid(0)), (h) => h.stream === 'main').map((r) => r.ord)).toEqual([1, 2, 3, 4, 5]);
    expect(landedFiles(old, sid(0)).map((f) => f.seq)).toEqual([1, 2, 3, 4]);
    expect(readCursorsHead(old, sid(0))?.nextSeq).toBe(5); // the counter moves into the cursor file's head with the cursors
    expect(verifyRoot(old)).toMatchObject({ problems: [], files: 14, relanded: 0 });
    // The touched sessions keep their cursors in the one file now, and the index's old state file is gone.
    expect([...SessionCursors.read(old, sid(0)).keys({ oldLayout: false })]).toEqual(['streams/main/transcript']);
    expect(existsSync(join(old, sid(0), 'index', 'index.state'))).toBe(false);
    expect(existsSync(join(old, sid(1), 'index', 'index.state'))).toBe(true); // untouched: left as it was
    expect(readIndexState(old, sid(0))?.indexedSeq).toBe(4);

    // A root half in each layout is quiet again, and still the same conversations as the fresh root once it has the lines too.
    expect(pass(old, src)).toMatchObject({ landedFiles: 0, conflicts: 0, errors: [] });
    expect(pass(fresh, src)).toMatchObject({ landedFiles: 2, errors: [] });
    expect(conversations(old)).toEqual(conversations(fresh));
    expect(dirname(sessionCursorsPath(old, sid(0)))).toBe(join(old, sid(0)));

    // The old session.state's counter is honoured: a new line of sid(1) takes the number it gave, not the one the disk alone would give.
    writeLines(join(projectOf(src, 1), `${sid(1)}.jsonl`), [rec.user(sid(1), 'one more after the counter')], { append: true });
    expect(pass(old, src)).toMatchObject({ landedFiles: 1, errors: [] });
    expect(landedFiles(old, sid(1)).map((f) => f.seq)).toEqual([1, STALE_AHEAD]);
    expect(readCursorsHead(old, sid(1))?.nextSeq).toBe(STALE_AHEAD + 1);
    expect(verifyRoot(old)).toMatchObject({ problems: [], relanded: 0 });
  });
});
