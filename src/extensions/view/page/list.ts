/**
 * The list of conversations: one row each, from the head round's header and what the catalog
 * worked out once per head (first prompt, project, models, tokens, tools). A dash where a value is
 * unknown. Search, project filter and sort live in the URL (list-controls.ts).
 */
import type { Page } from './page.js';
import { clear, fmtCount, fmtDur, fmtTime, getJson, h, type Child } from './dom.js';
import { filterRows, firstDir, listSearch, readListQuery, sortRows, type ListQuery, type ListRow, type SortKey } from './list-controls.js';

interface ListAnswer {
  conversations: ListRow[];
  hint?: string;
  next?: string;
}

interface Column {
  key: string;
  label: string;
  sort?: SortKey;
  numeric?: boolean;
  /** Shown only when some row has a value: a figure another part of the service may not provide. */
  optional?: (r: ListRow) => unknown;
  cell: (r: ListRow) => Child;
}

const dash = () => h('span', { class: 'faint' }, '—');
const count = (v: number | undefined) => fmtCount(v);

const COLUMNS: Column[] = [
  { key: 'project', label: 'Project', sort: 'project', cell: (r) => (r.project ? h('span', { class: 'mono', title: r.project }, r.project) : dash()) },
  { key: 'models', label: 'Models', sort: 'models', cell: (r) => (r.models?.length ? r.models.map((m) => h('div', { class: 'mono' }, m)) : dash()) },
  { key: 'tokens_in', label: 'Tokens in', sort: 'tokens_in', numeric: true, cell: (r) => count(r.tokens_in) },
  { key: 'tokens_out', label: 'Tokens out', sort: 'tokens_out', numeric: true, cell: (r) => count(r.tokens_out) },
  { key: 'tokens_cache', label: 'Cache tokens', sort: 'tokens_cache', numeric: true, cell: (r) => count(r.tokens_cache) },
  {
    key: 'cost_usd',
    label: 'Cost',
    sort: 'cost_usd',
    numeric: true,
    optional: (r) => r.cost_usd,
    cell: (r) => (r.cost_usd === undefined ? dash() : `$${r.cost_usd.toFixed(r.cost_usd < 1 ? 4 : 2)}`),
  },
  {
    key: 'api_ms',
    label: 'API time',
    sort: 'api_ms',
    numeric: true,
    optional: (r) => r.api_ms,
    cell: (r) => (r.api_ms === undefined ? dash() : fmtDur(r.api_ms)),
  },
  { key: 'tools', label: 'Tools', sort: 'tools', numeric: true, cell: (r) => count(r.tools) },
  { key: 'subagents', label: 'Subagents', sort: 'subagents', numeric: true, cell: (r) => count(r.subagents) },
  {
    key: 'changes',
    label: 'Changes',
    sort: 'changes',
    numeric: true,
    cell: (r) =>
      r.changes === undefined
        ? '—'
        : [fmtCount(r.changes), r.changes ? h('div', { class: 'faint' }, `+${fmtCount(r.lines_added ?? 0)} −${fmtCount(r.lines_removed ?? 0)}`) : null],
  },
  { key: 'talks', label: 'Talks', sort: 'talks', numeric: true, cell: (r) => count(r.talks) },
  { key: 'llm_calls', label: 'Model calls', sort: 'llm_calls', numeric: true, cell: (r) => count(r.llm_calls) },
  { key: 'bash_runs', label: 'Bash runs', sort: 'bash_runs', numeric: true, cell: (r) => count(r.bash_runs) },
  { key: 'unresolved', label: 'Open unresolved', sort: 'unresolved', numeric: true, cell: (r) => count(r.unresolved) },
  { key: 'to', label: 'Last activity (UTC)', sort: 'to', cell: (r) => lastActivity(r) },
];

function lastActivity(r: ListRow): HTMLElement {
  if (r.to === undefined) return dash();
  return h('span', null, fmtTime(r.to, true), r.from !== undefined ? h('div', { class: 'faint' }, `over ${fmtDur(r.to - r.from)}`) : null);
}

function emptyRoot(list: ListAnswer): HTMLElement {
  return h(
    'div',
    { class: 'empty', 'data-testid': 'empty-root' },
    h('h1', null, 'No conversations yet'),
    h('p', { class: 'muted', 'data-testid': 'empty-hint' }, list.hint ?? 'The storage root holds no parsed conversation.'),
    list.next ? h('code', { 'data-testid': 'empty-next' }, list.next) : null,
    h('p', { class: 'faint' }, 'This page refreshes by itself when a conversation appears.'),
  );
}

function titleCell(r: ListRow): HTMLElement {
  return h(
    'td',
    { class: 'title-cell' },
    h('a', { href: `/c/${encodeURIComponent(r.id)}`, class: 'conv-link', 'data-title-from': r.title_from ?? 'none' }, r.title ?? r.id),
    r.title ? h('div', { class: 'faint mono' }, r.id) : null,
    r.unreadable ? h('div', { class: 'q-unresolved', 'data-testid': 'row-unreadable' }, `cannot be read: ${r.unreadable}`) : null,
  );
}

function table(rows: ListRow[], columns: Column[], q: ListQuery, onSort: (key: SortKey) => void): HTMLElement {
  const sortHeader = (label: string, key: SortKey, numeric = false) =>
    h(
      'th',
      { class: numeric ? 'n' : '', 'aria-sort': q.sort === key ? (q.dir === 'asc' ? 'ascending' : 'descending') : 'none' },
      h('button', { class: 'sort', 'data-sort': key, onclick: () => onSort(key) }, label, q.sort === key ? (q.dir === 'asc' ? ' ▲' : ' ▼') : ''),
    );
  const body = h('tbody');
  for (const r of rows) {
    body.append(
      h(
        'tr',
        { class: 'conv-row', 'data-id': r.id },
        titleCell(r),
        columns.map((c) =>
          h('td', { class: `${c.numeric ? 'n' : ''}${c.key === 'unresolved' && r.unresolved ? ' q-unresolved' : ''}`, 'data-col': c.key }, c.cell(r)),
        ),
      ),
    );
  }
  const el = h(
    'table',
    { 'aria-label': 'Conversations' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        sortHeader('Title', 'title'),
        columns.map((c) => (c.sort ? sortHeader(c.label, c.sort, c.numeric) : h('th', null, c.label))),
      ),
    ),
    body,
  );
  // Arrow keys move between the rows' links, so the list reads without a mouse.
  el.addEventListener('keydown', (e) => {
    if ((e.target as HTMLElement).closest('button')) return;
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp' && e.key !== 'j' && e.key !== 'k') return;
    const links = [...el.querySelectorAll<HTMLAnchorElement>('a.conv-link')];
    const i = links.indexOf(document.activeElement as HTMLAnchorElement);
    const next = links[Math.max(0, Math.min(links.length - 1, i + (e.key === 'ArrowDown' || e.key === 'j' ? 1 : -1)))];
    if (next) {
      next.focus();
      e.preventDefault();
    }
  });
  return el;
}

export async function renderList(main: HTMLElement): Promise<Page> {
  const wrap = h('div', { class: 'list-wrap' });
  main.append(wrap);
  let query = readListQuery(location.search);
  let answer: ListAnswer | undefined;
  const heading = h('h1');
  const search = h('input', {
    type: 'search',
    class: 'search',
    placeholder: 'Search titles and prompts',
    'aria-label': 'Search titles and prompts',
    'data-testid': 'list-search',
  });
  const project = h('select', { 'aria-label': 'Project', 'data-testid': 'list-project' });
  const controls = h('div', { class: 'list-controls' }, search, project);
  const tableHost = h('div');

  /** The URL follows the list: a sort or a filter is a step Back undoes; typing replaces the entry instead of piling them up. */
  const commit = (next: ListQuery, push: boolean) => {
    query = next;
    const url = `${location.pathname}${listSearch(query, new URLSearchParams(location.search))}`;
    if (url !== `${location.pathname}${location.search}`) history[push ? 'pushState' : 'replaceState'](null, '', url);
    drawTable();
  };

  function drawControls(rows: ListRow[]): void {
    search.value = query.q;
    const projects = [...new Set(rows.map((r) => r.project).filter((p): p is string => !!p))].sort();
    if (query.project && !projects.includes(query.project)) projects.push(query.project);
    clear(project);
    project.append(h('option', { value: '' }, 'All projects'), ...projects.map((p) => h('option', { value: p }, p)));
    project.value = query.project;
  }

  function drawTable(): void {
    clear(tableHost);
    if (!answer) return;
    const all = answer.conversations;
    const shown = sortRows(filterRows(all, query), query.sort, query.dir);
    clear(heading);
    heading.append(
      'Conversations ',
      h('span', { class: 'faint', 'data-testid': 'list-count' }, shown.length === all.length ? `(${all.length})` : `(${shown.length} of ${all.length})`),
    );
    const columns = COLUMNS.filter((c) => !c.optional || all.some((r) => c.optional!(r) !== undefined));
    const onSort = (key: SortKey) => commit({ ...query, sort: key, dir: query.sort === key ? (query.dir === 'asc' ? 'desc' : 'asc') : firstDir(key) }, true);
    tableHost.append(
      shown.length
        ? table(shown, columns, query, onSort)
        : h('p', { class: 'muted', 'data-testid': 'list-none' }, 'No conversation matches the search and the project.'),
    );
  }

  search.addEventListener('input', () => commit({ ...query, q: search.value }, false));
  project.addEventListener('change', () => commit({ ...query, project: project.value }, true));
  window.addEventListener('popstate', () => {
    query = readListQuery(location.search);
    if (answer) drawControls(answer.conversations);
    drawTable();
  });

  const draw = async () => {
    const r = await getJson<ListAnswer>('/api/conversations');
    clear(wrap);
    if (r.status !== 200) {
      wrap.append(h('p', { class: 'q-unresolved' }, `The list could not be read: ${(r.body as unknown as { error?: string }).error ?? r.status}`));
      return;
    }
    answer = r.body;
    if (!answer.conversations.length) wrap.append(emptyRoot(answer));
    else {
      drawControls(answer.conversations);
      wrap.append(heading, controls, tableHost);
      drawTable();
    }
    document.body.dataset.ready = 'list';
  };
  await draw();
  (wrap.querySelector('a.conv-link') as HTMLElement | null)?.focus();
  let seen = -1;
  return {
    observe: async (status) => {
      if (seen !== -1 && status.generation !== seen) {
        // A redraw keeps what the reader was typing where it was.
        const typing = document.activeElement === search;
        await draw();
        if (typing) search.focus();
      }
      seen = status.generation;
    },
  };
}
