import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { cpSync, readFileSync, rmSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildView } from '../../src/formats/view/build.js';
import { loadViewInput, readLandedBytes, ViewUnavailable } from '../../src/extensions/view/load.js';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import type { ViewDocument, ViewNode } from '../../src/formats/view/types.js';
import { parseSession } from '../../src/processors/assembler/parse.js';
import { listRounds, roundsDir } from '../../src/storage/chain.js';
import { listLanded } from '../../src/storage/landed-files.js';
import { verifyChains } from '../../src/storage/verify-chain.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { writeLines } from '../helpers/transcript.js';
import { CHILD, SID, fixtureRoot } from '../helpers/view-fixture.js';
import { mainPath } from '../helpers/cc.js';
import { PROJECT } from '../helpers/collect.js';

afterAll(cleanupTemp);

const view = (root: string) => buildView(loadViewInput(root, SID));
const flat = (doc: ViewDocument) => {
  const o: ViewNode[] = [];
  const w = (n: ViewNode) => {
    o.push(n);
    (n.children ?? []).forEach(w);
  };
  doc.talks.forEach(w);
  doc.loose.forEach(w);
  return o;
};

/**
 * Verification is content, never an error in place of the document: what is missing makes the
 * state `incomplete`, what fails a digest `mismatch`, the fold stops before a broken round, and
 * the problems say which file. `aszcol verify` is the independent judge of the same damage.
 */
describe('a damaged root still gives a document that says what is wrong', () => {
  let pristine = '';

  beforeAll(() => {
    const b = fixtureRoot();
    // Two more rounds: a new prompt each time, landed and parsed.
    for (const [n, text] of [
      [2, 'second turn'],
      [3, 'third turn'],
    ] as const) {
      writeLines(
        mainPath(b.src, PROJECT, SID),
        [
          {
            parentUuid: null,
            isSidechain: false,
            promptId: `px${n}`,
            origin: { kind: 'human' },
            type: 'user',
            message: { role: 'user', content: text },
            uuid: `m0000000-0000-4000-8000-00000000010${n}`,
            timestamp: `2026-11-30T12:0${n}:00.000Z`,
            sessionId: SID,
          },
        ],
        { append: true },
      );
      b.pass();
      parseSession({ root: b.root, session: SID, maxRoundBytes: 2 * 1024 * 1024 });
    }
    pristine = b.root;
  });

  const copy = () => {
    const root = join(tempDir('aszcol-view-damage-'), 'data');
    cpSync(pristine, root, { recursive: true });
    return root;
  };

  test('the pristine chain of three rounds verifies, and agrees with aszcol verify', () => {
    const doc = view(pristine);
    expect(doc.summary).toMatchObject({ state: 'verified', problems: [], rounds: 3 });
    expect(doc.head.round).toBe(3);
    expect(doc.rounds.map((r) => [r.round, r.verified, r.previous === undefined])).toEqual([
      [1, true, true],
      [2, true, false],
      [3, true, false],
    ]);
    expect(doc.rounds[1]!.previous).toBe(doc.rounds[0]!.digest);
    expect(doc.talks.map((t) => t.label)).toEqual(expect.arrayContaining(['second turn', 'third turn']));
    expect(verifyChains(pristine).problems).toEqual([]);
  });

  test('a landed file removed: incomplete, the rounds naming it unverified, its nodes without text', () => {
    const root = copy();
    const child = listLanded(root, SID).find((l) => l.rel.includes(`/streams/${CHILD}/transcript-`))!;
    unlinkSync(child.path);
    const doc = view(root);
    expect(doc.summary.state).toBe('incomplete');
    expect(doc.summary.problems).toEqual([expect.stringMatching(new RegExp(`r000001-.*names landed sequence ${child.seq}, which is not on disk`))]);
    expect(doc.rounds.map((r) => r.verified)).toEqual([false, true, true]);
    const msg = flat(doc).find((n) => n.stream === CHILD && n.kind === 'message.assistant')!;
    expect(msg.text).toBeUndefined();
    expect(msg.state).toBeUndefined();
    expect(doc.files.some((f) => f.seq === child.seq)).toBe(false);
    expect(verifyChains(root).problems.join('\n')).toMatch(`names landed sequence ${child.seq}`);
  });

  test('a landed byte changed: mismatch, the file unverified and named', () => {
    const root = copy();
    const main = listLanded(root, SID).find((l) => l.rel.includes('/streams/main/transcript-'))!;
    const text = readFileSync(main.path, 'utf8');
    writeFileSync(main.path, text.replace('build and check', 'build and chock'));
    const doc = view(root);
    expect(doc.summary.state).toBe('mismatch');
    expect(doc.summary.problems.join('\n')).toContain(main.path);
    expect(doc.summary.problems.join('\n')).toMatch(/digest mismatch/);
    expect(doc.files.find((f) => f.seq === main.seq)!.verified).toBe(false);
    expect(doc.rounds.find((r) => r.round === 1)!.verified).toBe(false); // its input digest no longer recomputes
    expect(doc.talks.find((t) => t.id === 'talk/main/p1')!.label).toBeUndefined(); // the record is not read as if it were sound
  });

  test('a round changed: mismatch, the fold stops before it, the rounds after it are listed and not verified', () => {
    const root = copy();
    const r2 = listRounds(root, SID)[1]!;
    writeFileSync(r2.path, readFileSync(r2.path, 'utf8').replaceAll('px2', 'py2')); // a run id rewritten
    const doc = view(root);
    expect(doc.summary.state).toBe('mismatch');
    expect(doc.head.round).toBe(1);
    expect(doc.rounds.map((r) => [r.round, r.verified])).toEqual([
      [1, true],
      [2, false],
      [3, false],
    ]);
    expect(doc.talks.some((t) => t.label === 'third turn')).toBe(false);
    expect(doc.summary.problems[0]).toMatch(/r000002-/);
  });

  test('a round missing: incomplete, the fold stops before the gap', () => {
    const root = copy();
    rmSync(listRounds(root, SID)[1]!.path);
    const doc = view(root);
    expect(doc.summary.state).toBe('incomplete');
    expect(doc.summary.problems).toContainEqual(expect.stringMatching(/round 2 is missing before round 3/));
    expect(doc.head.round).toBe(1);
    expect(doc.rounds.map((r) => [r.round, r.verified])).toEqual([
      [1, true],
      [3, false],
    ]);
  });

  test('a round still being written is named, for that read, and folded once it is whole', () => {
    const root = copy();
    const r3 = listRounds(root, SID)[2]!;
    const whole = readFileSync(r3.path);
    writeFileSync(r3.path, '');
    let doc = view(root);
    expect(doc.summary.state).toBe('mismatch');
    expect(doc.summary.problems).toEqual([expect.stringMatching(/round 3 is empty: it is still being written/)]);
    expect(doc.head.round).toBe(2);
    writeFileSync(r3.path, whole.subarray(0, 100));
    expect(view(root).head.round).toBe(2);
    writeFileSync(r3.path, whole);
    doc = view(root);
    expect(doc.summary.state).toBe('verified');
    expect(doc.head.round).toBe(3);
  });

  test('the view reads a landed file from its bytes by the same rules as the strict reader', () => {
    for (const l of listLanded(pristine, SID)) {
      const bytes = readFileSync(l.path);
      expect(readLandedBytes(l.path, bytes)).toEqual({ header: readSessionData(l.path).header, records: readSessionData(l.path).records });
      const lines = bytes.toString('utf8').split('\n');
      const bad: [what: string, bytes: Buffer, why: RegExp][] = [
        ['cut short', bytes.subarray(0, bytes.length - 1), /cut short/],
        ['no closing line', Buffer.from(lines.slice(0, -2).join('\n') + '\n'), /no closing line/],
        ['a record dropped', Buffer.from([lines[0], ...lines.slice(2)].join('\n')), /closing line says \d+ records/],
        ['empty', Buffer.alloc(0), /empty file/],
        ['not JSON', Buffer.from('{"h":1\n' + lines.slice(1).join('\n')), /not valid JSON/],
      ];
      for (const [, b, why] of bad) expect(() => readLandedBytes(l.path, b)).toThrow(why);
    }
  });

  test('no rounds at all is the one error: there is nothing to show', () => {
    const root = copy();
    expect(() => loadViewInput(root, 'not-a-conversation')).toThrow(ViewUnavailable);
    try {
      loadViewInput(root, 'not-a-conversation');
    } catch (err) {
      expect((err as ViewUnavailable).status).toBe(404);
    }
    for (const r of listRounds(root, SID)) writeFileSync(r.path, 'garbage\n');
    let caught: unknown;
    try {
      loadViewInput(root, SID);
    } catch (err) {
      caught = err;
    }
    expect(caught).toBeInstanceOf(ViewUnavailable);
    expect((caught as ViewUnavailable).status).toBe(422);
    expect((caught as ViewUnavailable).problems.length).toBeGreaterThan(0);
    rmSync(roundsDir(root, SID), { recursive: true });
    expect(() => loadViewInput(root, SID)).toThrow(/no such conversation/);
  });
});
