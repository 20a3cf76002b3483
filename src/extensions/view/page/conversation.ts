/**
 * One conversation as a console: the summary and its verification, the timeline, the transcript
 * (and the streams, relations, unresolved entries, rounds and files beside it), the inspector.
 * Everything is drawn from the one `asz.view` document; the only other requests are the glossary
 * and a landed record when the reader opens one.
 */
import type { ViewDocument } from '../../../formats/view/types.js';
import type { ViewStatus } from '../catalog.js';
import type { Page } from './page.js';
import { badge, clear, fmtBytes, fmtCount, fmtDur, fmtIso, fmtTime, getJson, h, quality, short, type Child } from './dom.js';
import { Inspector, type Glossary } from './inspector.js';
import { indexDoc, type Model, type UiState } from './model.js';
import { Timeline } from './timeline.js';
import { Transcript } from './transcript.js';
import { changesPanel } from './changes.js';
import type { ChangesAnswer } from '../changes.js';

import { totalsStrip } from './totals.js';
import { readConversationUrl, recordSelection, type ConversationUrl } from './url-state.js';

const LEFT_TABS: [UiState['leftTab'], string][] = [
  ['transcript', 'Transcript'],
  ['changes', 'Changes'],
  ['streams', 'Streams'],
  ['relations', 'Relations'],
  ['unresolved', 'Unresolved'],
  ['files', 'Rounds & files'],
];

declare global {
  interface Window {
    __aszView?: { firstRenderMs?: number; renders: number };
  }
}

function stat(label: string, v: Child): HTMLElement {
  return h('span', { class: 'stat' }, `${label} `, h('b', null, v));
}

export async function openConversation(id: string, main: HTMLElement, crumbs: HTMLElement): Promise<Page> {
  crumbs.append(h('a', { href: '/' }, 'Conversations'), h('span', { class: 'sep' }, '›'));
  const crumb = h('span', { class: 'mono' }, id);
  crumbs.append(crumb);
  const first = await getJson<ViewDocument & { error?: string; problems?: string[] }>(`/api/c/${encodeURIComponent(id)}/view`);
  if (first.status !== 200) {
    main.append(
      h(
        'div',
        { class: 'list-wrap' },
        h(
          'div',
          { class: 'empty' },
          h('h1', null, first.status === 404 ? 'No such conversation' : 'This conversation cannot be shown'),
          h('p', { class: 'muted' }, first.body.error ?? `The server answered ${first.status}.`),
          (first.body.problems ?? []).map((p) => h('p', { class: 'q-unresolved mono' }, p)),
          h('p', null, h('a', { href: '/' }, 'Back to the list')),
        ),
      ),
    );
    document.body.dataset.ready = 'missing';
    // It may appear: the page that said so reloads when a parse writes its first round.
    return {
      observe: async (status) => {
        if (status.heads[id] !== undefined) location.reload();
      },
    };
  }
  let model: Model = indexDoc(id, first.body);
  let glossary: Glossary | undefined;
  let changes: ChangesAnswer | undefined;
  const loadChanges = async () => {
    const r = await getJson<ChangesAnswer>(`/api/c/${encodeURIComponent(id)}/changes`);
    if (r.status !== 200) return;
    changes = r.body;
    drawLeftTabs();
    if (state.leftTab === 'changes') drawLeft();
  };
  const state: UiState = { open: new Set(), closed: new Set(), inspectorTab: 'details', leftTab: 'transcript', evidence: 0 };

  const host = {
    model: () => model,
    state,
    glossary: () => glossary,
    select: (target: string, opts: { reveal?: boolean; focus?: boolean } = {}) => select(target, opts),
  };
  const transcript = new Transcript(host);
  const timeline = new Timeline(host);
  const inspector = new Inspector(host);
  const summary = h('section', { class: 'summary', 'aria-label': 'Summary' });
  const problems = h('ul', { class: 'problems', role: 'alert', hidden: true });
  const leftTabs = h('div', { role: 'tablist', 'aria-label': 'Conversation' });
  const leftPanel = h('div', { class: 'tabpanel', role: 'tabpanel', id: 'left-panel', tabindex: '-1' });
  const left = h('section', { class: 'left', 'aria-label': 'Conversation' }, leftTabs, leftPanel);
  main.append(summary, problems, timeline.el, h('div', { class: 'panes' }, left, inspector.el));

  function drawSummary(): void {
    const d = model.doc,
      s = d.summary;
    clear(summary);
    crumb.textContent = s.title ?? id;
    document.title = `${s.title ?? id} · aszcol view`;
    const from = (s as { title_from?: string }).title_from;
    summary.append(
      h(
        'h1',
        { 'data-title-from': from ?? 'none', title: from === 'prompt' ? 'No title was recorded: this is the first prompt.' : undefined },
        s.title ?? h('span', { class: 'muted' }, '(untitled)'),
      ),
      badge(s.state, `s-${s.state}`),
      stat('talks', fmtCount(s.talks)),
      stat('steps', fmtCount(s.steps)),
      stat('model calls', fmtCount(s.kinds['llm.call'] ?? 0)),
      stat('streams', fmtCount(s.streams)),
      stat('segments', fmtCount(s.segments)),
      stat('rounds', fmtCount(s.rounds)),
      h('span', { class: 'stat' }, 'unresolved ', h('b', { class: s.unresolved ? 'q-unresolved' : '' }, `${s.unresolved} open`)),
      stat('span', s.from !== undefined && s.to !== undefined ? `${fmtTime(s.from, true)} → ${fmtTime(s.to, true)} UTC (${fmtDur(s.to - s.from)})` : '—'),
      h('span', { class: 'stat faint' }, `head r${d.head.round} ${short(d.head.digest)}`),
      totalsStrip(model),
    );
    clear(problems);
    problems.hidden = !s.problems.length;
    for (const p of s.problems) problems.append(h('li', null, p));
  }

  function drawLeftTabs(): void {
    const d = model.doc;
    const open = d.unresolved.filter((u) => u.state === 'open').length;
    const counts: Record<string, Child> = {
      transcript: d.talks.length,
      changes: changes ? `${changes.totals.changes} +${changes.totals.lines_added} −${changes.totals.lines_removed}` : '…',
      streams: d.streams.length,
      relations: d.relations.length,
      unresolved: h('span', { class: open ? 'count bad' : 'count' }, `${open}/${d.unresolved.length}`),
      files: d.files.length,
    };
    clear(leftTabs);
    for (const [tab, label] of LEFT_TABS) {
      const on = state.leftTab === tab;
      const c = counts[tab];
      leftTabs.append(
        h(
          'button',
          { role: 'tab', id: `left-${tab}`, 'aria-controls': 'left-panel', 'aria-selected': String(on), tabindex: on ? '0' : '-1', 'data-left': tab },
          label,
          c instanceof HTMLElement ? c : h('span', { class: 'count' }, String(c)),
        ),
      );
    }
    leftPanel.setAttribute('aria-labelledby', `left-${state.leftTab}`);
  }

  function drawLeft(): void {
    drawLeftTabs();
    clear(leftPanel);
    const d = model.doc;
    switch (state.leftTab) {
      case 'transcript':
        transcript.render();
        leftPanel.append(transcript.el);
        return;
      case 'changes':
        leftPanel.append(changesPanel(changes, (talk) => model.nodes.get(talk)?.node.label ?? talk));
        return;
      case 'streams':
        leftPanel.append(
          h(
            'table',
            { 'aria-label': 'Streams' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['Stream', 'Role', 'Parent', 'Records', 'Steps', 'First talk', 'Opened by'].map((c) => h('th', null, c)),
              ),
            ),
            h(
              'tbody',
              null,
              d.streams.map((s) =>
                h(
                  'tr',
                  { 'data-stream': s.name },
                  h(
                    'td',
                    null,
                    h('button', { class: 'linkbtn', 'data-goto': s.id }, s.label ?? s.name),
                    s.label ? h('div', { class: 'faint mono' }, s.name) : null,
                  ),
                  h('td', null, s.role),
                  h('td', { class: 'mono' }, s.parent ?? '—'),
                  h('td', { class: 'n' }, fmtCount(s.records)),
                  h('td', { class: 'n' }, fmtCount(s.steps)),
                  h('td', null, s.talk ? h('button', { class: 'linkbtn', 'data-goto': s.talk }, `#${model.talkNo.get(s.talk) ?? '?'}`) : '—'),
                  h(
                    'td',
                    null,
                    s.opened_by.length
                      ? s.opened_by.map((o) => h('div', null, h('button', { class: 'linkbtn', 'data-goto': o.step }, o.step), ' ', quality(o.quality)))
                      : s.role === 'main'
                        ? '—'
                        : badge('nothing names its start', 'q-unresolved'),
                  ),
                ),
              ),
            ),
          ),
        );
        return;
      case 'relations':
        leftPanel.append(
          d.relations.length
            ? h(
                'table',
                { 'aria-label': 'Relations' },
                h(
                  'thead',
                  null,
                  h(
                    'tr',
                    null,
                    ['Type', 'From', 'To', 'Quality', 'Via'].map((c) => h('th', null, c)),
                  ),
                ),
                h(
                  'tbody',
                  null,
                  d.relations.map((r) =>
                    h(
                      'tr',
                      null,
                      h('td', { class: 'mono' }, r.type),
                      h('td', null, h('button', { class: 'linkbtn', 'data-goto': r.from }, r.from)),
                      h('td', null, h('button', { class: 'linkbtn', 'data-goto': r.to }, r.to)),
                      h('td', null, quality(r.quality)),
                      h('td', { class: 'muted' }, r.via),
                    ),
                  ),
                ),
              )
            : h('p', { class: 'muted pad' }, 'No relations.'),
        );
        return;
      case 'unresolved':
        leftPanel.append(
          d.unresolved.length
            ? h(
                'table',
                { 'aria-label': 'Unresolved references' },
                h(
                  'thead',
                  null,
                  h(
                    'tr',
                    null,
                    ['State', 'Kind', 'Reference', 'Reason', 'Where'].map((c) => h('th', null, c)),
                  ),
                ),
                h(
                  'tbody',
                  null,
                  d.unresolved.map((u) => {
                    const at = [...model.unresolvedAt].find(([, l]) => l.includes(u))?.[0];
                    return h(
                      'tr',
                      { 'data-unresolved': u.id },
                      h('td', null, badge(u.state, `u-${u.state}`)),
                      h('td', { class: 'mono' }, u.kind),
                      h('td', { class: 'mono' }, u.ref),
                      h('td', null, u.reason),
                      h('td', null, at ? h('button', { class: 'linkbtn', 'data-goto': at }, at) : h('span', { class: 'faint' }, 'no step of this document')),
                    );
                  }),
                ),
              )
            : h('p', { class: 'muted pad' }, 'Every reference was resolved.'),
        );
        return;
      case 'files':
        leftPanel.append(
          h('div', { class: 'section-title' }, `Rounds (${d.rounds.length})`),
          h(
            'table',
            { 'aria-label': 'Rounds' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['Round', 'Digest', 'Sequences', 'Record times (UTC)', 'Verified'].map((c) => h('th', null, c)),
              ),
            ),
            h(
              'tbody',
              null,
              d.rounds.map((r) =>
                h(
                  'tr',
                  null,
                  h('td', { class: 'n' }, String(r.round)),
                  h('td', { class: 'mono' }, short(r.digest)),
                  h('td', { class: 'mono' }, r.from_seq !== undefined ? `${r.from_seq}..${r.through_seq}` : '—'),
                  h('td', null, r.from_time !== undefined ? `${fmtIso(r.from_time)} → ${fmtIso(r.through_time)}` : '—'),
                  h('td', null, badge(r.verified ? 'verified' : 'not verified', r.verified ? 's-verified' : 's-mismatch')),
                ),
              ),
            ),
          ),
          h('div', { class: 'section-title' }, `Files (${d.files.length})`),
          h(
            'table',
            { 'aria-label': 'Files' },
            h(
              'thead',
              null,
              h(
                'tr',
                null,
                ['File', 'Kind', 'Seq / round', 'Stream / run', 'Lines', 'Bytes', 'Digest', 'Verified'].map((c) => h('th', null, c)),
              ),
            ),
            h(
              'tbody',
              null,
              d.files.map((f) =>
                h(
                  'tr',
                  null,
                  h('td', { class: 'mono' }, f.file.split('/').pop()!),
                  h('td', null, f.kind),
                  h('td', { class: 'n' }, String(f.seq ?? f.round ?? '—')),
                  h('td', { class: 'mono' }, f.stream ?? f.run ?? '—'),
                  h('td', { class: 'n' }, fmtCount(f.lines)),
                  h('td', { class: 'n' }, fmtBytes(f.bytes)),
                  h('td', { class: 'mono' }, short(f.digest)),
                  h('td', null, badge(f.verified ? 'verified' : 'not verified', f.verified ? 's-verified' : 's-mismatch')),
                ),
              ),
            ),
          ),
        );
        return;
    }
  }

  /** True while the page follows the URL (a first load, Back): what it selects then is not a new history entry. */
  let restoring = false;
  const here = (): ConversationUrl => {
    const e = state.selected ? model.nodes.get(state.selected) : undefined;
    return { talk: e?.talk, step: state.selected, tab: state.inspectorTab };
  };

  function select(target: string, opts: { reveal?: boolean; focus?: boolean }): void {
    selectOnly(target, opts);
    if (!restoring) recordSelection(here(), true);
  }

  function selectOnly(target: string, opts: { reveal?: boolean; focus?: boolean }): void {
    // A stream's or a relation's end is shown where it lives: a stream by its first talk when asked to reveal.
    state.selected = target;
    state.evidence = 0;
    if (model.nodes.has(target)) {
      if (state.leftTab !== 'transcript' && opts.reveal) {
        state.leftTab = 'transcript';
        drawLeft();
      }
      const e = model.nodes.get(target)!;
      if (opts.reveal || e.node.kind === 'talk') transcript.reveal(target);
      transcript.markSelected();
      if (state.leftTab === 'transcript') {
        if (opts.focus !== false) transcript.focus(target, !!opts.reveal);
        else transcript.rowOf(target)?.scrollIntoView({ block: opts.reveal ? 'start' : 'nearest' });
      }
    }
    inspector.render();
    timeline.draw();
  }

  leftTabs.addEventListener('click', (e) => {
    const t = (e.target as HTMLElement).closest<HTMLElement>('[data-left]');
    if (!t) return;
    state.leftTab = t.dataset.left as UiState['leftTab'];
    drawLeft();
    (leftTabs.querySelector(`[data-left="${state.leftTab}"]`) as HTMLElement | null)?.focus();
  });
  leftTabs.addEventListener('keydown', (e) => {
    if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
    const i = LEFT_TABS.findIndex(([t]) => t === state.leftTab);
    state.leftTab = LEFT_TABS[(i + (e.key === 'ArrowRight' ? 1 : LEFT_TABS.length - 1)) % LEFT_TABS.length]![0];
    drawLeft();
    (leftTabs.querySelector(`[data-left="${state.leftTab}"]`) as HTMLElement | null)?.focus();
    e.preventDefault();
  });
  leftPanel.addEventListener('click', (e) => {
    const go = (e.target as HTMLElement).closest<HTMLElement>('[data-goto]');
    if (go && state.leftTab !== 'transcript') select(go.dataset.goto!, { reveal: true, focus: true });
  });
  // Shortcuts that work anywhere but in a text field.
  document.addEventListener('keydown', (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || (e.target as HTMLElement).closest('input, textarea')) return;
    const tabs: Record<string, UiState['inspectorTab']> = { 1: 'details', 2: 'relations', 3: 'evidence', 4: 'raw', 5: 'execution', 6: 'prompt' };
    if (tabs[e.key]) {
      inspector.show(tabs[e.key]!);
      e.preventDefault();
    } else if (e.key === 't') {
      (timeline.el.querySelector('canvas') as HTMLElement).focus();
      e.preventDefault();
    } else if (e.key === 'Escape') {
      const s = state.selected;
      if (s) transcript.focus(s);
    }
  });

  // A tab the reader picks replaces the URL's entry rather than adding one: Back goes to the step before.
  const showTab = inspector.show.bind(inspector);
  inspector.show = (tab, focusTab) => {
    showTab(tab, focusTab);
    if (!restoring) recordSelection(here(), false);
  };

  /** Shows what a URL names: its talk opened, its step selected, its tab; the first talk when it names none. */
  function follow(u: ConversationUrl): void {
    restoring = true;
    try {
      const target = [u.step, u.talk].find((x) => x !== undefined && model.nodes.has(x)) ?? model.doc.talks[0]?.id;
      if (u.talk && model.nodes.has(u.talk)) state.open.add(u.talk);
      else if (target === model.doc.talks[0]?.id && target) state.open.add(target);
      if (target) {
        const talk = model.nodes.get(target)?.talk;
        if (talk) transcript.redrawTalk(talk);
        selectOnly(target, { reveal: true, focus: true });
      }
      inspector.show(u.tab ?? 'details');
    } finally {
      restoring = false;
    }
  }
  window.addEventListener('popstate', () => follow(readConversationUrl(location.search)));

  function drawAll(): void {
    drawSummary();
    drawLeft();
    timeline.render();
    inspector.render();
  }

  drawAll();
  const asked = readConversationUrl(location.search);
  // Open the first talk, so the page shows work rather than a list of closed cards.
  const firstTalk = model.doc.talks[0];
  if (asked.step || asked.talk || asked.tab) follow(asked);
  else if (firstTalk) {
    state.open.add(firstTalk.id);
    state.selected = firstTalk.id;
    transcript.redrawTalk(firstTalk.id);
    inspector.render();
    transcript.focus(firstTalk.id);
  }
  window.__aszView = { firstRenderMs: performance.now(), renders: 1 };
  document.body.dataset.ready = 'conversation';
  void loadChanges();
  void getJson<Glossary>('/api/glossary').then((g) => {
    if (g.status === 200) {
      glossary = g.body;
      inspector.render();
    }
  });

  let seenHead: string | undefined;
  return {
    observe: async (status: ViewStatus) => {
      const head = status.heads[id];
      // Before the first answer, compare with the round the document was folded to (a round may have landed since).
      const docHead = `r${String(model.doc.head.round).padStart(6, '0')}-${model.doc.head.digest.slice(0, 12)}.sf:`;
      const moved = head !== undefined && (seenHead === undefined ? !head.startsWith(docHead) : head !== seenHead);
      if (head !== undefined) seenHead = head;
      if (!moved) return;
      const r = await getJson<ViewDocument>(`/api/c/${encodeURIComponent(id)}/view`);
      if (r.status !== 200) return;
      model = indexDoc(id, r.body);
      void loadChanges();
      const focused = (document.activeElement as HTMLElement | null)?.dataset?.id;
      drawAll();
      if (focused) transcript.focus(focused);
      window.__aszView!.renders++;
      document.body.dataset.head = String(r.body.head.round);
    },
  };
}
