/**
 * Where the local receiver keeps a session's sequence counter (issue 19): in the head of
 * `sources.cursor`, which a pass writes anyway, not in a `session.state` of its own (one inode and
 * one fsync less per new session). The counter must still never hand out a number twice, even when
 * the highest-numbered landed file is gone and the disk alone would give it out again, and the
 * other writers of the session (the plugin's landing here) must count on from it.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { LocalCollector } from '../../src/receivers/claude-code-local/pass.js';
import { parseKv } from '../../src/storage/kv-text.js';
import { sessionStatePath } from '../../src/storage/layout.js';
import { readCursorsHead, sessionCursorsPath } from '../../src/storage/session-cursors.js';
import { SequenceCounter, loadSessionState } from '../../src/storage/session-state.js';
import { landedFiles } from '../helpers/root.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { rec, writeLines } from '../helpers/transcript.js';

afterAll(cleanupTemp);

const SID = '7c0e5d2a-3333-4444-8555-000000000001';
const AGENT = 'a0000000000000001';
const AT = 1_764_633_600_123_456_789n;
const AT_TEXT = '2025-12-02T00:00:00.123456789Z';

function setUp(): { root: string; src: string; main: string; collect: () => ReturnType<LocalCollector['pass']> } {
  const base = tempDir('aszcol-counter-');
  const src = join(base, 'projects');
  const root = join(base, 'data');
  const main = join(src, '-home-me-c', `${SID}.jsonl`);
  writeLines(main, [rec.user(SID, 'first'), rec.user(SID, 'second')]);
  writeLines(join(src, '-home-me-c', SID, 'subagents', `agent-${AGENT}.jsonl`), [rec.user(SID, 'helper', { isSidechain: true, agentId: AGENT })]);
  const collect = () => new LocalCollector({ root, sourceRoot: src, filter: { include: [], exclude: [] }, maxDeltaBytes: 1 << 20, clock: () => AT }).pass();
  return { root, src, main, collect };
}

describe("the local receiver's sequence counter", () => {
  test('a first pass keeps it in the head of sources.cursor and writes no session.state', () => {
    const { root, collect } = setUp();
    expect(collect()).toMatchObject({ landedFiles: 2, errors: [] });
    expect(existsSync(sessionStatePath(root, SID))).toBe(false);
    expect(readCursorsHead(root, SID)).toEqual({ nextSeq: 3, lastScan: AT_TEXT });
    expect(readdirSync(join(root, SID)).sort()).toEqual(['index', 'sources.cursor', 'streams']);
    // Quiet from then on: nothing lands and nothing is written.
    const before = readFileSync(sessionCursorsPath(root, SID), 'utf8');
    expect(collect()).toMatchObject({ landedFiles: 0, errors: [] });
    expect(readFileSync(sessionCursorsPath(root, SID), 'utf8')).toBe(before);
  });

  test('never hands out a number again, even once the highest-numbered landed file is gone', () => {
    const { root, main, collect } = setUp();
    collect();
    const highest = landedFiles(root, SID).at(-1)!;
    expect(highest.seq).toBe(2);
    rmSync(highest.path, { force: true });
    // The disk alone now says 2 is free; the counter in the cursor file says 3.
    expect(new SequenceCounter(root, SID).peek()).toBe(3);
    writeLines(main, [rec.user(SID, 'third')], { append: true });
    expect(collect()).toMatchObject({ landedFiles: 1, errors: [] });
    expect(landedFiles(root, SID).map((f) => f.seq)).toEqual([1, 3]);
    expect(readCursorsHead(root, SID)?.nextSeq).toBe(4);
  });

  test('is the larger of its two places: session.state ahead of the head, or the head ahead of session.state', () => {
    const { root, main, collect } = setUp();
    collect();
    // Another writer (the OTLP receiver, the plugin's landing) moved the counter in session.state.
    const state = (n: number) => `schema     1\nnext_seq   ${n}\nliveness   unknown\n`;
    writeFileSync(sessionStatePath(root, SID), state(40));
    expect(loadSessionState(root, SID)?.next_seq).toBe(40);
    writeLines(main, [rec.user(SID, 'third')], { append: true });
    collect();
    expect(landedFiles(root, SID).map((f) => f.seq)).toEqual([1, 2, 40]);
    // The head now leads; a session.state left behind does not pull the counter back.
    expect(readCursorsHead(root, SID)?.nextSeq).toBe(41);
    expect(parseKv(readFileSync(sessionStatePath(root, SID), 'utf8')).get('next_seq')).toBe('40');
    expect(new SequenceCounter(root, SID).peek()).toBe(41);
  });
});
