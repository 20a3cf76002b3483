import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { copyFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ViewCatalog } from '../../src/extensions/view/catalog.js';
import type { ViewDocument } from '../../src/formats/view/types.js';
import { listRounds, roundsDir } from '../../src/storage/chain.js';
import { listLanded } from '../../src/storage/landed-files.js';
import { landedName } from '../../src/storage/layout.js';
import { cleanupTemp } from '../helpers/tmp.js';
import { SID, fixtureRoot } from '../helpers/view-fixture.js';

afterAll(cleanupTemp);

/** The server's reading side, with its clock in the test's hand. */
describe('the view catalog: fold on demand, keep until the head moves', () => {
  let root = '';
  let clock = 1_000_000;
  let c: ViewCatalog;

  beforeAll(() => {
    root = fixtureRoot().root;
    c = new ViewCatalog(root, () => clock);
  });

  test('status moves only when a head round, or its size, changes', () => {
    const a = c.status();
    expect(a).toMatchObject({ mode: 'view', conversations: 1, generation: 1, last_refresh: new Date(clock).toISOString() });
    const r1 = listRounds(root, SID)[0]!;
    expect(a.heads[SID]).toBe(`${r1.name}:${statSync(r1.path).size}`);
    clock += 5000;
    expect(c.status()).toMatchObject({ generation: 1, last_refresh: a.last_refresh });
    const partial = join(roundsDir(root, SID), 'r000002-000000000000.sf');
    writeFileSync(partial, '');
    clock += 5000;
    const b = c.status();
    expect(b.generation).toBe(2);
    expect(b.heads[SID]).toBe('r000002-000000000000.sf:0');
    writeFileSync(partial, '{"t":"header"');
    expect(c.status().heads[SID]).toBe('r000002-000000000000.sf:13');
    expect(c.status().generation).toBe(3);
    rmSync(partial);
    expect(c.status().generation).toBe(4);
  });

  test('the document is built once per listing; a landed file that arrives is found within a second, not on every read', () => {
    const fresh = new ViewCatalog(root, () => clock);
    const first = fresh.view(SID);
    expect(first.cached).toBe(false);
    expect(fresh.view(SID).cached).toBe(true);
    // A file lands beside the others (a copy, so it carries the wrong sequence: the document will say so).
    const l = listLanded(root, SID).find((f) => f.prefix === 'transcript')!;
    const seq = Math.max(...listLanded(root, SID).map((f) => f.seq)) + 1;
    copyFileSync(l.path, join(dirname(l.path), landedName('transcript', '20261130T100000.000000000Z', seq)));
    clock += 500;
    expect(fresh.view(SID).cached).toBe(true);
    clock += 600;
    const again = fresh.view(SID);
    expect(again.cached).toBe(false);
    const doc = JSON.parse(again.json) as ViewDocument;
    expect(doc.files.some((f) => f.seq === seq && f.verified === false)).toBe(true);
    expect(doc.summary.problems.join('\n')).toMatch(`header seq ${l.seq} differs from the name's ${seq}`);
  });
});
