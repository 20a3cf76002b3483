/** The session's cursor file and the index's head: what they say back, and what a damaged one gives. */
import { afterAll, describe, expect, test } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AppendCursor, SnapshotCursor } from '../../src/storage/cursor.js';
import { SessionCursors, formatSessionCursors, parseCursorsHead, parseSessionCursors, sessionCursorsPath } from '../../src/storage/session-cursors.js';
import { indexFilePath, readIndexState } from '../../src/storage/index-file.js';
import { bench, SID } from '../helpers/collect.js';
import { rec, writeLines } from '../helpers/transcript.js';
import { cleanupTemp } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const append: AppendCursor = {
  kind: 'append',
  source: '-p/s.jsonl',
  dev: 7,
  ino: 42,
  offset: 1200,
  ord: 9,
  last_uuid: 'u-9',
  tail_sha256: 'ab'.repeat(32),
  size: 1200,
  mtime: 1_700_000_000,
  last_seq: 3,
  updated_at: '2026-06-01T09:00:00.000000000Z',
  state: 'active',
};
const snapshot: SnapshotCursor = {
  kind: 'snapshot',
  source: '-p/s/subagents/agent-a1.meta.json',
  content_sha256: 'cd'.repeat(32),
  size: 40,
  mtime: 1_700_000_001,
  last_seq: 2,
  updated_at: '2026-06-01T09:00:00.000000000Z',
  state: 'conflict',
  reason: 'two files\nwould land in one stream',
};

describe('the session cursor file', () => {
  test('gives back every cursor it was given, a reason over two lines kept on one', () => {
    const text = formatSessionCursors(
      new Map<string, AppendCursor | SnapshotCursor>([
        ['streams/main/transcript', append],
        ['streams/a1/meta', snapshot],
      ]),
    );
    const back = parseSessionCursors(text, 'here');
    expect([...back.keys()]).toEqual(['streams/a1/meta', 'streams/main/transcript']);
    expect(back.get('streams/main/transcript')).toEqual({ ...append, reason: undefined });
    expect(back.get('streams/a1/meta')).toEqual({ ...snapshot, reason: 'two files would land in one stream' });
    expect(parseSessionCursors(formatSessionCursors(new Map()), 'here').size).toBe(0);
  });

  test("carries the session's counter in its head, and a head from before the counter says nothing of it", () => {
    const text = formatSessionCursors(new Map([['streams/main/transcript', append]]), { nextSeq: 12, lastScan: '2026-06-01T09:00:00Z' });
    expect(text.split('\n\n')[0]).toBe('schema     1\nnext_seq   12\nlast_scan  2026-06-01T09:00:00Z');
    expect(parseCursorsHead(text)).toEqual({ nextSeq: 12, lastScan: '2026-06-01T09:00:00Z' });
    expect(parseSessionCursors(text, 'here').get('streams/main/transcript')).toEqual({ ...append, reason: undefined });
    expect(parseCursorsHead(formatSessionCursors(new Map([['streams/main/transcript', append]])))).toEqual({});
    expect(() => parseCursorsHead('schema 1\nnext_seq 0\n', '/r/s/sources.cursor')).toThrow('/r/s/sources.cursor: next_seq "0" is not a sequence number');
    expect(() => parseCursorsHead('schema 1\nnext_seq twelve\n', 'f')).toThrow('f: next_seq "twelve" is not a sequence number');
  });

  test('a file that is not one is an error naming it, and the session is reported, not landed again', () => {
    expect(() => parseSessionCursors('kind append\n', '/r/s/sources.cursor')).toThrow(
      '/r/s/sources.cursor: not a cursor file this build reads (schema missing, expected 1)',
    );
    expect(() => parseSessionCursors('schema 1\n\nkind append\n', 'f')).toThrow('f: cursor 1 names no source place (`at`)');
    const b = bench();
    writeLines(b.main, [rec.user(SID, 'one')]);
    expect(b.pass()).toMatchObject({ landedFiles: 1, errors: [] });
    writeFileSync(sessionCursorsPath(b.root, SID), 'garbage\n');
    writeLines(b.main, [rec.user(SID, 'two')], { append: true });
    const r = b.pass();
    expect(r.landedFiles).toBe(0);
    expect(r.errors).toEqual([{ where: join(b.root, SID), message: expect.stringContaining(`${sessionCursorsPath(b.root, SID)}: not a cursor file`) }]);
    expect(() => SessionCursors.read(b.root, SID)).toThrow('not a cursor file');
  });
});

describe("the index file's head", () => {
  test('says how far the index reaches; a damaged or missing head says nothing', () => {
    const b = bench();
    writeLines(b.main, [rec.user(SID, 'one')]);
    b.pass();
    writeLines(b.main, [rec.user(SID, 'two')], { append: true });
    b.pass();
    expect(readIndexState(b.root, SID)).toEqual({ schema: 7, indexedSeq: 2 });
    writeFileSync(indexFilePath(b.root, SID), Buffer.from('ASZI but not an index'));
    expect(readIndexState(b.root, SID)).toBeUndefined();
    expect(readIndexState(b.root, 'no-such-session')).toBeUndefined();
    // The next pass finds the index unreadable and builds it again from the landed files.
    expect(b.pass()).toMatchObject({ landedFiles: 0, errors: [] });
    expect(readIndexState(b.root, SID)).toEqual({ schema: 7, indexedSeq: 2 });
  });
});
