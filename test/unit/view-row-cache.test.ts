/**
 * The list's row facts kept on disk between starts: a fresh catalog (a restarted server) answers
 * the first list read from the stored entries, without building a conversation, and an entry is
 * worked out again once the session's landed files or its rounds move. An entry written by hand
 * stands in for "what the last start worked out", so a hit is told from a rebuild by its content.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { copyFileSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { ViewCatalog } from '../../src/extensions/view/catalog.js';
import { defaultRowFactsDir, RowFactsStore } from '../../src/extensions/view/row-facts-store.js';
import { listLanded } from '../../src/storage/landed-files.js';
import { landedName } from '../../src/storage/layout.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { SID, fixtureRoot } from '../helpers/view-fixture.js';

afterAll(cleanupTemp);

describe("the list's row facts, kept between starts", () => {
  let root = '';
  let cache = '';
  const entry = () => join(cache, `${encodeURIComponent(SID)}.json`);

  beforeAll(() => {
    root = fixtureRoot().root;
    cache = join(tempDir('aszcol-row-cache-'), 'view');
  });

  test('the first start works the facts out and stores them; the next start reads them back instead of building', () => {
    const first = new ViewCatalog(root, Date.now, new RowFactsStore(cache)).rows();
    expect(first).toHaveLength(1);
    expect(first[0]!.first_prompt).toBeTruthy();
    expect(readdirSync(cache)).toEqual([`${encodeURIComponent(SID)}.json`]);
    const stored = JSON.parse(readFileSync(entry(), 'utf8')) as { key: string; facts: Record<string, unknown> };
    expect(stored.facts.first_prompt).toBe(first[0]!.first_prompt);

    // What the last start worked out, marked: a restarted catalog shows the mark, so it built nothing.
    writeFileSync(entry(), JSON.stringify({ ...stored, facts: { ...stored.facts, first_prompt: 'FROM THE CACHE' } }));
    const restarted = new ViewCatalog(root, Date.now, new RowFactsStore(cache)).rows();
    expect(restarted[0]!.first_prompt).toBe('FROM THE CACHE');
    const { first_prompt: _a, title: _b, title_from: _c, ...rest } = restarted[0]!;
    const { first_prompt: _d, title: _e, title_from: _f, ...expected } = first[0]!;
    expect(rest).toEqual(expected);
  });

  test('a file landing in the session invalidates the entry: the facts are worked out again and stored under the new key', () => {
    const before = JSON.parse(readFileSync(entry(), 'utf8')) as { key: string };
    const l = listLanded(root, SID).find((f) => f.prefix === 'transcript')!;
    const seq = Math.max(...listLanded(root, SID).map((f) => f.seq)) + 1;
    const extra = join(dirname(l.path), landedName('transcript', '20261130T100000.000000000Z', seq));
    copyFileSync(l.path, extra);
    try {
      const rows = new ViewCatalog(root, Date.now, new RowFactsStore(cache)).rows();
      expect(rows[0]!.first_prompt).not.toBe('FROM THE CACHE');
      const after = JSON.parse(readFileSync(entry(), 'utf8')) as { key: string; facts: Record<string, unknown> };
      expect(after.key).not.toBe(before.key);
      expect(after.facts.first_prompt).toBe(rows[0]!.first_prompt);
    } finally {
      rmSync(extra);
    }
  });

  test('a cache that cannot be written costs the speed, never the rows, and says why', () => {
    const blocked = join(tempDir('aszcol-row-cache-'), 'a-file');
    writeFileSync(blocked, 'not a directory');
    const c = new ViewCatalog(root, Date.now, new RowFactsStore(join(blocked, 'view')));
    const rows = c.rows();
    expect(rows).toEqual(new ViewCatalog(root).rows());
    expect(c.cacheProblem()).toMatch(/cannot be written/);
  });

  test('by default the cache sits under the XDG cache directory, one directory per storage root', () => {
    const a = defaultRowFactsDir('/data/a', { XDG_CACHE_HOME: '/c' });
    expect(a).toMatch(/^\/c\/aszcol\/view\/[0-9a-f]{16}$/);
    expect(defaultRowFactsDir('/data/b', { XDG_CACHE_HOME: '/c' })).not.toBe(a);
  });
});
