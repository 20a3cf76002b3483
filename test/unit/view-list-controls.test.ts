import { describe, expect, test } from '@jest/globals';
import { filterRows, listSearch, readListQuery, sortRows, type ListRow } from '../../src/extensions/view/page/list-controls.js';
import { conversationSearch, readConversationUrl } from '../../src/extensions/view/page/url-state.js';
import { QUALITY_LABELS } from '../../src/extensions/view/page/labels.js';
import { trimPrompt, TITLE_CHARS } from '../../src/extensions/view/row-facts.js';
import { TERMS } from '../../src/adapters/claude-code/glossary.js';
import { GLOSSARY_ELEMENT_ID, pageHtml } from '../../src/extensions/view/page-html.js';

const rows: ListRow[] = [
  { id: 'a', rounds: 1, title: 'Fix the parser', project: '-home-me-aszcol', tokens_in: 500, prompts: ['Fix the parser', 'now run the tests'] },
  { id: 'b', rounds: 1, title: 'add a light theme', project: '-home-me-site', tokens_in: 2000 },
  { id: 'c', rounds: 1, project: '-home-me-site' },
];

describe('the list query a reader shares as a link', () => {
  test('a title from a prompt is one line of about eighty characters, cut at a word', () => {
    expect(trimPrompt('  fix\n\n the   parser\t please ')).toBe('fix the parser please');
    const long = trimPrompt('word '.repeat(40));
    expect(long.length).toBeLessThanOrEqual(TITLE_CHARS);
    expect(long).toMatch(/word…$/);
    expect(trimPrompt('x'.repeat(200))).toBe('x'.repeat(TITLE_CHARS - 1) + '…');
  });

  test('the default list is a bare URL; a sort, a search and a project survive the round trip through the query', () => {
    expect(listSearch(readListQuery(''), new URLSearchParams())).toBe('');
    const q = { q: 'light theme', project: '-home-me-site', sort: 'tokens_in' as const, dir: 'asc' as const };
    expect(readListQuery(listSearch(q, new URLSearchParams('poll=250')))).toEqual(q);
    expect(listSearch(q, new URLSearchParams('poll=250'))).toContain('poll=250');
    // A sort the page does not know falls back to the last activity rather than failing.
    expect(readListQuery('?sort=nonsense')).toMatchObject({ sort: 'to', dir: 'desc' });
  });

  test('a row without the sorted value goes last in either direction', () => {
    expect(sortRows(rows, 'tokens_in', 'desc').map((r) => r.id)).toEqual(['b', 'a', 'c']);
    expect(sortRows(rows, 'tokens_in', 'asc').map((r) => r.id)).toEqual(['a', 'b', 'c']);
    expect(sortRows(rows, 'title', 'asc').map((r) => r.id)).toEqual(['b', 'c', 'a']);
  });

  test('every word of a search must appear in the title, a later prompt, the project or the id; the project filter is exact', () => {
    const q = { q: '', project: '', sort: 'to' as const, dir: 'desc' as const };
    expect(filterRows(rows, { ...q, q: 'RUN tests' }).map((r) => r.id)).toEqual(['a']);
    expect(filterRows(rows, { ...q, q: 'light parser' })).toEqual([]);
    expect(filterRows(rows, { ...q, project: '-home-me-site' }).map((r) => r.id)).toEqual(['b', 'c']);
  });

  test("a conversation's URL names the talk, the step and a tab other than the first; anything else is kept", () => {
    const s = conversationSearch({ talk: 'talk/main/p1', step: 'tool/tu_1', tab: 'evidence' }, '?poll=250');
    expect(readConversationUrl(s)).toEqual({ talk: 'talk/main/p1', step: 'tool/tu_1', tab: 'evidence' });
    expect(s).toContain('poll=250');
    expect(conversationSearch({ talk: 'talk/main/p1', step: 'talk/main/p1', tab: 'details' }, '')).toBe('?talk=talk%2Fmain%2Fp1');
    expect(readConversationUrl('?tab=bogus')).toEqual({});
  });

  test("the page carries the glossary's definitions from the server, word for word, and every plain label has one", () => {
    const html = pageHtml();
    const block = new RegExp(`<script type="application/json" id="${GLOSSARY_ELEMENT_ID}">(.*?)</script>`).exec(html);
    expect(block).not.toBeNull();
    const sent = JSON.parse(block![1]!) as { definitions: Record<string, string> };
    for (const term of Object.keys(QUALITY_LABELS)) expect(sent.definitions[term]).toBe(TERMS[term]?.note);
    for (const [term, t] of Object.entries(TERMS)) expect(sent.definitions[term]).toBe(t.note ?? t.where);
    // The labels module holds words only: no second copy of a definition to drift.
    for (const label of Object.values(QUALITY_LABELS)) expect(typeof label).toBe('string');
  });
});
