/**
 * The list's search, project filter and sort, and how they live in the URL's query
 * (`?q=…&project=…&sort=…&dir=…`), so Back, a reload and a shared link show the same list.
 */
import type { ConversationRow } from '../catalog.js';

export interface ListQuery {
  q: string;
  project: string;
  sort: SortKey;
  dir: 'asc' | 'desc';
}

/** Columns a reader can sort by; `to` is the last activity. */
export const SORT_KEYS = [
  'title',
  'project',
  'models',
  'tokens_in',
  'tokens_out',
  'tokens_cache',
  'cost_usd',
  'api_ms',
  'tools',
  'subagents',
  'changes',
  'talks',
  'bash_runs',
  'llm_calls',
  'unresolved',
  'to',
] as const;
export type SortKey = (typeof SORT_KEYS)[number];

export const DEFAULT_QUERY: ListQuery = { q: '', project: '', sort: 'to', dir: 'desc' };

/** Text sorts A→Z first; numbers and times largest first: what a reader clicking a header wants first. */
export const firstDir = (key: SortKey): 'asc' | 'desc' => (key === 'title' || key === 'project' || key === 'models' ? 'asc' : 'desc');

export function readListQuery(search: string): ListQuery {
  const p = new URLSearchParams(search);
  const sort = (SORT_KEYS as readonly string[]).includes(p.get('sort') ?? '') ? (p.get('sort') as SortKey) : DEFAULT_QUERY.sort;
  const dir =
    p.get('dir') === 'asc' || p.get('dir') === 'desc' ? (p.get('dir') as 'asc' | 'desc') : sort === DEFAULT_QUERY.sort ? DEFAULT_QUERY.dir : firstDir(sort);
  return { q: p.get('q') ?? '', project: p.get('project') ?? '', sort, dir };
}

/** The query string for a list state; what equals the default is left out, so the plain list stays `/`. */
export function listSearch(q: ListQuery, keep: URLSearchParams): string {
  const p = new URLSearchParams(keep);
  for (const k of ['q', 'project', 'sort', 'dir']) p.delete(k);
  if (q.q) p.set('q', q.q);
  if (q.project) p.set('project', q.project);
  if (q.sort !== DEFAULT_QUERY.sort || q.dir !== DEFAULT_QUERY.dir) {
    p.set('sort', q.sort);
    p.set('dir', q.dir);
  }
  const s = p.toString();
  return s ? `?${s}` : '';
}

/** Extra figures another part of the service may add to a row; shown only when a row has them. */
export type ListRow = ConversationRow & { cost_usd?: number; api_ms?: number };

function sortValue(r: ListRow, key: SortKey): string | number | undefined {
  switch (key) {
    case 'title':
      return (r.title ?? r.id).toLowerCase();
    case 'project':
      return r.project?.toLowerCase();
    case 'models':
      return r.models?.join(' ').toLowerCase();
    default:
      return r[key];
  }
}

/** Sorted by one column; a row without the value goes last in either direction, ties by id. */
export function sortRows(rows: ListRow[], key: SortKey, dir: 'asc' | 'desc'): ListRow[] {
  const sign = dir === 'asc' ? 1 : -1;
  return [...rows].sort((a, b) => {
    const x = sortValue(a, key),
      y = sortValue(b, key);
    if (x === undefined || y === undefined) return x === y ? (a.id < b.id ? -1 : 1) : x === undefined ? 1 : -1;
    if (x < y) return -sign;
    if (x > y) return sign;
    return a.id < b.id ? -1 : 1;
  });
}

/** Every word of the search must appear in the title, a prompt, the project or the id; case does not matter. */
export function filterRows(rows: ListRow[], q: ListQuery): ListRow[] {
  const words = q.q.toLowerCase().split(/\s+/).filter(Boolean);
  return rows.filter((r) => {
    if (q.project && r.project !== q.project) return false;
    if (!words.length) return true;
    const hay = [r.title ?? '', ...(r.prompts ?? []), r.project ?? '', r.id].join('\n').toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}
