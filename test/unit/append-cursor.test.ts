import { afterAll, describe, expect, test } from '@jest/globals';
import { appendFileSync, copyFileSync, readFileSync, renameSync, rmSync, statSync, truncateSync, writeFileSync, openSync, writeSync, closeSync } from 'node:fs';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { loadCursor } from '../../src/storage/cursor.js';
import { SessionCursors, sessionCursorsPath } from '../../src/storage/session-cursors.js';
import { verifyRoot } from '../../src/storage/verify.js';
import { bench, SID } from '../helpers/collect.js';
import { landedFiles, recordsOf } from '../helpers/root.js';
import { rec, writeLines } from '../helpers/transcript.js';
import { cleanupTemp } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const cursorOf = (root: string) => SessionCursors.read(root, SID).get('streams/main/transcript')!;
const lines = (n: number, from = 0) => Array.from({ length: n }, (_, i) => rec.user(SID, `line ${from + i}`));

describe('append cursors, step by step', () => {
  test('first pass lands every line once; a pass with nothing new reads nothing and rewrites nothing', () => {
    const b = bench();
    writeLines(b.main, lines(5));
    const r1 = b.pass();
    expect(r1).toMatchObject({ landedFiles: 1, landedRecords: 5, errors: [] });
    const c1 = readFileSync(sessionCursorsPath(b.root, SID), 'utf8');
    const r2 = b.pass();
    expect(r2).toMatchObject({ landedFiles: 0, landedRecords: 0 });
    // Step 3: same size, same inode: the cursor is not even rewritten.
    expect(readFileSync(sessionCursorsPath(b.root, SID), 'utf8')).toBe(c1);
  });

  test('a line nested 5,000 deep (fuzz seed F1) lands whole as an unknown part with the reason; the lines around it land as usual', () => {
    const b = bench();
    // Written as text: JSON.stringify of such a value would overflow here too.
    const deep = `{"type":"user","uuid":"f1-deep","sessionId":"${SID}","message":{"role":"user","content":[${'['.repeat(5000)}${']'.repeat(5000)}]}}`;
    writeLines(b.main, [rec.user(SID, 'before'), deep, rec.user(SID, 'after')]);
    const r = b.pass();
    expect(r).toMatchObject({ landedRecords: 3, errors: [], conflicts: 0 });
    const recs = recordsOf(landedFiles(b.root, SID));
    expect(recs.map((x) => x.parts[0]!.k)).toEqual(['text', 'unknown', 'text']);
    expect(recs[1]!.parts[0]).toMatchObject({
      text: expect.stringMatching(/could not be converted or written: Maximum call stack/),
      data: deep,
      bytes: deep.length,
    });
    expect(b.pass()).toMatchObject({ landedRecords: 0, errors: [] });
  });

  test('a line that is not JSON lands as an unknown part holding its bytes, and collection goes on', () => {
    const b = bench();
    writeLines(b.main, [rec.user(SID, 'before'), '{"type":"user","message":{"content":"cut', rec.user(SID, 'after')]);
    const r = b.pass();
    expect(r).toMatchObject({ landedRecords: 3, errors: [] });
    const recs = recordsOf(landedFiles(b.root, SID));
    expect(recs[1]!.parts).toEqual([
      {
        k: 'unknown',
        state: 'available',
        bytes: '{"type":"user","message":{"content":"cut'.length,
        text: 'the record is not valid JSON',
        data: '{"type":"user","message":{"content":"cut',
      },
    ]);
    expect(recs[2]!.parts[0]!.text).toBe('after');
  });

  test('records carry the line number, byte offset, size and digest of their source line', () => {
    const b = bench();
    writeLines(b.main, lines(3));
    b.pass();
    const src = readFileSync(b.main);
    const recs = recordsOf(landedFiles(b.root, SID));
    let off = 0;
    for (const [i, r] of recs.entries()) {
      const end = src.indexOf(10, off);
      expect(r).toMatchObject({ ord: i + 1, off, bytes: end - off });
      expect(r.sha).toBe(createHash('sha256').update(src.subarray(off, end)).digest('hex').slice(0, 12));
      off = end + 1;
    }
  });

  test('step 1: a file gone after it was read sets source_gone and the landed files stay', () => {
    const b = bench();
    writeLines(b.main, lines(2));
    b.pass();
    rmSync(b.main);
    const r = b.pass();
    expect(r.sourceGone).toBe(1);
    expect(cursorOf(b.root).state).toBe('source_gone');
    expect(recordsOf(landedFiles(b.root, SID))).toHaveLength(2);
    expect(verifyRoot(b.root).problems).toEqual([]);
  });

  test('a whole pruned session: its cursors become source_gone, its landed data outlives it', () => {
    const b = bench();
    writeLines(b.main, lines(2));
    b.pass();
    rmSync(join(b.src, '-Users-me-work'), { recursive: true });
    const r = b.pass();
    expect(r.sourceGone).toBe(1);
    expect(cursorOf(b.root).state).toBe('source_gone');
    expect(recordsOf(landedFiles(b.root, SID))).toHaveLength(2);
  });

  test('a restored source goes back to active and continues from its offset', () => {
    const b = bench();
    writeLines(b.main, lines(2));
    b.pass();
    const saved = readFileSync(b.main);
    rmSync(b.main);
    b.pass();
    writeFileSync(b.main, saved);
    writeLines(b.main, lines(1, 2), { append: true });
    const r = b.pass();
    expect(r).toMatchObject({ landedRecords: 1, conflicts: 0 });
    expect(cursorOf(b.root).state).toBe('active');
  });

  test('step 2: a file shorter than the offset is a conflict, kept and counted on later passes', () => {
    const b = bench();
    writeLines(b.main, lines(4));
    b.pass();
    truncateSync(b.main, 10);
    const r = b.pass();
    expect(r.conflicts).toBe(1);
    expect(r.newConflicts[0]!.reason).toMatch(/shorter/);
    expect(cursorOf(b.root).state).toBe('conflict');
    writeLines(b.main, lines(10));
    const again = b.pass();
    expect(again).toMatchObject({ conflicts: 1, landedRecords: 0 });
    expect(again.newConflicts).toEqual([]); // named once, then only counted
  });

  test('step 4: rewritten consumed bytes are a conflict', () => {
    const b = bench();
    writeLines(b.main, lines(3));
    b.pass();
    const fd = openSync(b.main, 'r+');
    writeSync(fd, 'X', 5);
    closeSync(fd);
    writeLines(b.main, lines(1, 3), { append: true });
    const r = b.pass();
    expect(r.newConflicts[0]!.reason).toMatch(/rewritten/);
    expect(r.landedRecords).toBe(0);
  });

  test('the same bytes behind a new inode continue; different bytes behind a new inode are a conflict', () => {
    const b = bench();
    writeLines(b.main, lines(3));
    b.pass();
    const ino1 = statSync(b.main).ino;
    copyFileSync(b.main, b.main + '.copy');
    appendFileSync(b.main + '.copy', JSON.stringify(rec.user(SID, 'after the copy')) + '\n');
    renameSync(b.main + '.copy', b.main);
    expect(statSync(b.main).ino).not.toBe(ino1);
    const r = b.pass();
    expect(r).toMatchObject({ landedRecords: 1, conflicts: 0 });
    expect(cursorOf(b.root)).toMatchObject({ ino: statSync(b.main).ino, ord: 4 });

    writeLines(b.main + '.other', lines(6, 100));
    renameSync(b.main + '.other', b.main);
    expect(b.pass().conflicts).toBe(1);
  });

  test('step 5: windows end at the last complete newline; a partial last line waits, then lands once', () => {
    const b = bench();
    writeLines(b.main, lines(2));
    const partial = JSON.stringify(rec.user(SID, 'in progress'));
    appendFileSync(b.main, partial.slice(0, 20));
    expect(b.pass().landedRecords).toBe(2);
    expect(b.pass().landedRecords).toBe(0);
    appendFileSync(b.main, partial.slice(20) + '\n');
    expect(b.pass().landedRecords).toBe(1);
    const recs = recordsOf(landedFiles(b.root, SID));
    expect(recs.map((r) => r.ord)).toEqual([1, 2, 3]);
    expect(recs[2]!.parts[0]!.text).toBe('in progress');
    expect(verifyRoot(b.root).problems).toEqual([]);
  });

  test('step 5: max_delta_bytes cuts files; a single line longer than the budget is read whole', () => {
    const b = bench();
    const big = rec.user(SID, 'x'.repeat(5 * 1024 * 1024)); // a 5 MB line
    writeLines(b.main, [...lines(50), big, ...lines(50, 50)]);
    const r = b.pass({ maxDeltaBytes: 4096 });
    expect(r.errors).toEqual([]);
    expect(r.landedRecords).toBe(101);
    const files = landedFiles(b.root, SID);
    expect(files.length).toBeGreaterThan(3);
    for (const f of files) {
      const size = f.records.reduce((a, x) => a + x.bytes + 1, 0);
      if (f.records.length > 1) expect(size).toBeLessThanOrEqual(4096);
    }
    const bigRec = recordsOf(files).find((x) => x.bytes > 5 * 1024 * 1024)!;
    expect(bigRec.parts[0]!.text!.length).toBe(5 * 1024 * 1024);
    expect(verifyRoot(b.root).problems).toEqual([]);
  });

  test('step 8: at most 65 windows per source per pass, then pending; the next pass carries on', () => {
    const b = bench();
    const many = lines(400);
    writeLines(b.main, many);
    const lineSize = JSON.stringify(many[0]).length + 1;
    const budget = 1024;
    const r1 = b.pass({ maxDeltaBytes: budget });
    expect(r1.landedFiles).toBe(65);
    expect(r1.pending).toBe(1);
    const perWindow = Math.floor(budget / lineSize);
    expect(r1.landedRecords).toBe(65 * perWindow);
    let total = r1.landedRecords;
    for (let i = 0; i < 10 && total < 400; i++) total += b.pass({ maxDeltaBytes: budget }).landedRecords;
    expect(total).toBe(400);
    expect(b.pass({ maxDeltaBytes: budget }).pending).toBe(0);
    expect(verifyRoot(b.root).problems).toEqual([]);
  });

  test('the tail digest covers the 1 MiB before the offset', () => {
    const b = bench();
    writeLines(b.main, [rec.user(SID, 'y'.repeat(1_500_000)), ...lines(2)]);
    b.pass();
    const c = cursorOf(b.root);
    if (c.kind !== 'append') throw new Error('append cursor expected');
    const src = readFileSync(b.main);
    expect(c.tail_sha256).toBe(
      createHash('sha256')
        .update(src.subarray(src.length - (1 << 20)))
        .digest('hex'),
    );
    // A rewrite inside the window is caught ...
    const fd = openSync(b.main, 'r+');
    writeSync(fd, 'Z', src.length - 1000);
    closeSync(fd);
    appendFileSync(b.main, JSON.stringify(rec.user(SID, 'more')) + '\n');
    expect(b.pass().conflicts).toBe(1);
  });
});

describe('cursors of other adapters', () => {
  test("a pass leaves the OTLP receiver's cursor alone: it names no file this adapter reads", async () => {
    const { mkdirSync, writeFileSync: write } = await import('node:fs');
    const b = bench();
    writeLines(b.main, lines(1));
    b.pass();
    const otlp = join(b.root, SID, 'otlp');
    mkdirSync(otlp, { recursive: true });
    write(join(otlp, 'otlp_log.cursor'), 'schema 1\nkind append\nsource otlp/logs\noffset 0\nord 0\nstate active\n');
    const r = b.pass();
    expect(r.sourceGone).toBe(0);
    expect(loadCursor(join(otlp, 'otlp_log.cursor'))!.state).toBe('active');
  });
});
