/**
 * A document source (sidecar, manifest, script) landed, then killed before its cursor committed
 * (issue 13, M2): the next pass must not land the same content as a second version, and `verify`
 * counts a version identical to the one before it as re-landed.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { copyFileSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { bench, PROJECT, SID } from '../helpers/collect.js';
import { landedFiles } from '../helpers/root.js';
import { cleanupTemp } from '../helpers/tmp.js';
import { convertSidecar } from '../../src/adapters/claude-code/dialect.js';
import { landLines } from '../../src/storage/landing.js';
import { SessionCursors, sessionCursorsPath } from '../../src/storage/session-cursors.js';
import { verifyRoot } from '../../src/storage/verify.js';

afterAll(cleanupTemp);

const A1 = 'a687426e8a37aa323';

describe('a document source landed again after a kill', () => {
  test('a sidecar whose version landed but whose cursor never committed lands no second version', () => {
    const b = bench();
    const dir = join(b.src, PROJECT, SID, 'subagents');
    mkdirSync(dir, { recursive: true });
    const sidecar = join(dir, `agent-${A1}.meta.json`);
    const cursor = sessionCursorsPath(b.root, SID); // the session's cursors, this sidecar's among them
    writeFileSync(sidecar, JSON.stringify({ description: 'first' }));
    expect(b.pass().landedFiles).toBe(1);
    // The sidecar changes; the pass lands its version, then "dies" before the cursor commits:
    // the cursor on disk is the one from before the landing.
    writeFileSync(sidecar, JSON.stringify({ description: 'second' }));
    copyFileSync(cursor, `${cursor}.before`);
    expect(b.pass().landedFiles).toBe(1);
    renameSync(`${cursor}.before`, cursor);

    const again = b.pass();
    expect(again.landedFiles).toBe(0);
    expect(landedFiles(b.root, SID).map((f) => f.records[0]!.label)).toEqual(['first', 'second']);
    // The cursor now accounts for the version already on disk, and a real change still lands.
    expect(SessionCursors.read(b.root, SID).get(`streams/${A1}/meta`)).toMatchObject({ last_seq: 2, state: 'active' });
    writeFileSync(sidecar, JSON.stringify({ description: 'third' }));
    expect(b.pass().landedFiles).toBe(1);
    expect(verifyRoot(b.root)).toMatchObject({ problems: [], relanded: 0, files: 3 });
  });

  test('verify counts a version identical to the one before it as re-landed, not as a problem', () => {
    const b = bench();
    const doc = Buffer.from(JSON.stringify({ description: 'same' }));
    const target = {
      dir: join(b.root, SID, 'streams', A1),
      prefix: 'meta',
      stamp: '20260831T091204.481523000Z',
      at: '2026-08-31T09:12:04.481523000Z',
      header: {
        kind: 'agent_meta' as const,
        adapter: 'claude-code',
        dialect: 'cc/1',
        src: `${PROJECT}/${SID}/subagents/agent-${A1}.meta.json`,
        session: SID,
        stream: A1,
      },
    };
    for (const seq of [1, 2]) landLines(target, seq, [{ line: doc, off: 0, ord: 1 }], (d) => convertSidecar(d, A1));
    const v = verifyRoot(b.root);
    expect(v.problems).toEqual([]);
    expect(v.relanded).toBe(1);
  });
});
