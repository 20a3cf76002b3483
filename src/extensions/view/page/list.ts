/** The list of conversations: one row each, from the head round's header; a dash where a count is unknown. */
import type { ConversationRow } from '../catalog.js';
import type { Page } from './page.js';
import { clear, fmtCount, fmtDur, fmtTime, getJson, h } from './dom.js';

interface ListAnswer {
  conversations: ConversationRow[];
  hint?: string;
  next?: string;
}

const COLUMNS: [keyof ConversationRow, string][] = [
  ['talks', 'Talks'],
  ['steps', 'Steps'],
  ['llm_calls', 'Model calls'],
  ['subagents', 'Subagents'],
  ['bash_runs', 'Bash runs'],
  ['unresolved', 'Open unresolved'],
];

function span(r: ConversationRow): HTMLElement {
  if (r.from === undefined || r.to === undefined) return h('span', { class: 'faint' }, '—');
  return h(
    'span',
    null,
    `${fmtTime(r.from, true)} → ${fmtTime(r.to, true).slice(r.to - r.from < 86_400_000 ? 11 : 0)}`,
    h('span', { class: 'faint' }, ` · ${fmtDur(r.to - r.from)}`),
  );
}

function rowsOf(list: ListAnswer): HTMLElement {
  if (!list.conversations.length) {
    return h(
      'div',
      { class: 'empty', 'data-testid': 'empty-root' },
      h('h1', null, 'No conversations yet'),
      h('p', { class: 'muted', 'data-testid': 'empty-hint' }, list.hint ?? 'The storage root holds no parsed conversation.'),
      list.next ? h('code', { 'data-testid': 'empty-next' }, list.next) : null,
      h('p', { class: 'faint' }, 'This page refreshes by itself when a conversation appears.'),
    );
  }
  const body = h('tbody');
  for (const r of list.conversations) {
    body.append(
      h(
        'tr',
        { class: 'conv-row', 'data-id': r.id },
        h(
          'td',
          null,
          h('a', { href: `/c/${encodeURIComponent(r.id)}`, class: 'conv-link' }, r.title ?? r.id),
          r.title ? h('div', { class: 'faint mono' }, r.id) : null,
        ),
        h('td', null, span(r)),
        COLUMNS.map(([k]) => {
          const v = r[k] as number | undefined;
          return h('td', { class: `n${k === 'unresolved' && v ? ' q-unresolved' : ''}`, 'data-col': k }, fmtCount(v));
        }),
      ),
    );
  }
  const table = h(
    'table',
    { 'aria-label': 'Conversations' },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        h('th', null, 'Title'),
        h('th', null, 'Time span (UTC)'),
        COLUMNS.map(([, label]) => h('th', { class: 'n' }, label)),
      ),
    ),
    body,
  );
  // Arrow keys move between the rows' links, so the list reads without a mouse.
  table.addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowDown' && e.key !== 'ArrowUp' && e.key !== 'j' && e.key !== 'k') return;
    const links = [...table.querySelectorAll<HTMLAnchorElement>('a.conv-link')];
    const i = links.indexOf(document.activeElement as HTMLAnchorElement);
    const next = links[Math.max(0, Math.min(links.length - 1, i + (e.key === 'ArrowDown' || e.key === 'j' ? 1 : -1)))];
    if (next) {
      next.focus();
      e.preventDefault();
    }
  });
  return table;
}

export async function renderList(main: HTMLElement): Promise<Page> {
  const wrap = h('div', { class: 'list-wrap' });
  main.append(wrap);
  const draw = async () => {
    const r = await getJson<ListAnswer>('/api/conversations');
    clear(wrap);
    if (r.status !== 200) {
      wrap.append(h('p', { class: 'q-unresolved' }, `The list could not be read: ${(r.body as unknown as { error?: string }).error ?? r.status}`));
      return;
    }
    const n = r.body.conversations.length;
    if (n) wrap.append(h('h1', null, `Conversations `, h('span', { class: 'faint' }, `(${n})`)));
    wrap.append(rowsOf(r.body));
    document.body.dataset.ready = 'list';
  };
  await draw();
  (wrap.querySelector('a.conv-link') as HTMLElement | null)?.focus();
  let seen = -1;
  return {
    observe: async (status) => {
      if (seen !== -1 && status.generation !== seen) await draw();
      seen = status.generation;
    },
  };
}
