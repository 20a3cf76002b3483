/**
 * The transcript: talks → runs → steps, each talk a card that opens on demand, so a conversation
 * of tens of thousands of steps draws only its talk headers first. Qualities, content states and
 * unresolved entries are drawn on the rows they concern, never left to a tooltip.
 */
import type { ViewNode, ViewUnresolved } from '../../../formats/view/types.js';
import { badge, clear, fmtDur, fmtTime, h, kindClass, oneLine, quality } from './dom.js';
import { openUnresolvedIn, streamLabel, type Model, type UiState } from './model.js';
import { fmtCost } from './figures-tabs.js';

export interface TranscriptHost {
  model(): Model;
  state: UiState;
  select(id: string, opts?: { reveal?: boolean; focus?: boolean }): void;
}

/** A folded run of context rows is remembered open under its first row's id with this prefix. */
const CONTEXT_PREFIX = 'context-group:';
const contextKey = (firstId: string) => `${CONTEXT_PREFIX}${firstId}`;

function unresolvedRows(list: ViewUnresolved[] | undefined): HTMLElement[] {
  return (list ?? []).map((u) =>
    h(
      'div',
      { class: `unres-inline${u.state === 'open' ? '' : ' settled'}`, 'data-unresolved': u.id },
      badge(u.state, `u-${u.state}`),
      ' ',
      h('b', null, `unresolved ${u.kind}`),
      ` · ${u.reason} `,
      h('span', { class: 'faint mono' }, u.ref),
    ),
  );
}

/** What a step's row says in one line. */
function summary(m: Model, n: ViewNode): HTMLElement[] {
  const out: HTMLElement[] = [];
  const a = n.attrs ?? {};
  switch (n.kind) {
    case 'run':
      out.push(h('span', { class: 'muted' }, `run · trigger ${String(a.trigger ?? 'unknown')}`));
      break;
    case 'llm.call': {
      const u = n.usage;
      out.push(h('span', { class: 'muted' }, `model call · ${a.fragments ?? '?'} fragment${a.fragments === 1 ? '' : 's'}`));
      if (u)
        out.push(h('span', { class: 'faint mono' }, ` in ${u.in ?? 0} · out ${u.out ?? 0} · cache read ${u.cache_read ?? 0} · write ${u.cache_write ?? 0}`));
      else out.push(badge(`usage ${String(a.usage ?? 'unavailable')}`, 's-unavailable'));
      out.push(callFigures(a));
      break;
    }
    case 'tool':
    case 'agent.call':
      out.push(h('b', null, n.name ?? String(a.name ?? 'tool')), h('span', { class: 'faint mono' }, ` ${oneLine(n.text, 120)}`));
      break;
    default:
      out.push(
        n.text
          ? h('span', null, oneLine(n.text, 300))
          : h('span', { class: 'faint' }, n.state ? `(content ${n.state})` : '(no text: its record is not readable)'),
      );
  }
  return out;
}

/** A call's or a talk's cost and API time (assembly's telemetry join), or what is unavailable. */
function callFigures(a: Record<string, unknown>): HTMLElement {
  const cost = typeof a.cost_usd === 'number' ? fmtCost(a.cost_usd) : undefined;
  const api = typeof a.duration_ms === 'number' ? a.duration_ms : typeof a.api_ms === 'number' ? a.api_ms : undefined;
  const text = [api !== undefined ? `API ${fmtDur(api)}` : '', cost ?? ''].filter(Boolean).join(' · ');
  return h('span', { class: 'faint mono', 'data-figures': text || 'unavailable' }, text ? ` · ${text}` : '');
}

function metaOf(n: ViewNode): HTMLElement[] {
  const out: HTMLElement[] = [];
  const a = n.attrs ?? {};
  if (n.kind === 'tool' || n.kind === 'agent.call') {
    out.push(badge(`result ${String(a.result ?? n.result_state ?? 'unavailable')}`, `s-${String(a.result ?? 'unavailable')}`));
    if (typeof a.result_join === 'string') out.push(quality(a.result_join)!);
    if (n.failed) out.push(badge('failed', 's-failed'));
    if (n.request_to_result_ms !== undefined)
      out.push(
        h(
          'span',
          { class: 'faint', title: 'time between the request record and the result record; not how long the tool ran' },
          ` ${fmtDur(n.request_to_result_ms)} request→result`,
        ),
      );
    if (a.timing === 'unavailable') out.push(h('span', { class: 'faint' }, ' · timing unavailable'));
  } else if (n.state && n.state !== 'available') {
    out.push(badge(n.state, `s-${n.state}`));
  }
  for (const e of n.edges ?? []) {
    if (e.type === 'in_segment') continue;
    out.push(h('span', { class: 'faint' }, ` ${e.dir === 'out' ? '→' : '←'} ${e.type} `), quality(e.quality)!);
  }
  return out;
}

export class Transcript {
  readonly el = h('div', { class: 'tree', role: 'tree', 'aria-label': 'Transcript: talks, runs and steps' });

  constructor(private readonly host: TranscriptHost) {
    this.el.addEventListener('keydown', (e) => this.onKey(e));
    this.el.addEventListener('click', (e) => this.onClick(e));
  }

  render(): void {
    const m = this.host.model();
    clear(this.el);
    const open = m.doc.unresolved.filter((u) => u.state === 'open');
    if (open.length) {
      this.el.append(h('div', { class: 'section-title' }, `Unresolved references still open (${open.length})`), ...unresolvedRows(open));
    }
    if (!m.doc.talks.length) this.el.append(h('p', { class: 'muted pad' }, 'This conversation has no talk yet.'));
    for (const t of m.doc.talks) this.el.append(this.talkCard(t));
    if (m.doc.loose.length) {
      this.el.append(h('div', { class: 'section-title' }, `Outside any talk (${m.doc.loose.length})`));
      const group = h('div', { role: 'group', class: 'kids' });
      for (const l of m.doc.loose) this.nodeRows(l, 1, group);
      this.el.append(group);
    }
    this.markSelected();
  }

  private talkCard(t: ViewNode): HTMLElement {
    const m = this.host.model();
    const open = this.host.state.open.has(t.id);
    const no = m.talkNo.get(t.id)!;
    const unres = openUnresolvedIn(m, t);
    const seg = t.edges?.find((e) => e.type === 'in_segment');
    const stream = m.streams.get(`stream/${t.stream}`);
    const head = h(
      'div',
      { class: 'row', role: 'treeitem', 'aria-level': '1', 'aria-expanded': String(open), tabindex: '-1', 'data-id': t.id, 'data-kind': 'talk' },
      h('span', { class: 'tw', 'data-toggle': '1', 'aria-hidden': 'true' }, open ? '▾' : '▸'),
      h('span', { class: 'faint mono' }, `#${no}`),
      h(
        'span',
        { class: `stream-tag${t.stream === 'main' ? ' main' : ''}`, title: t.stream },
        t.child ? `↳ ${streamLabel(m, t.stream)}` : streamLabel(m, t.stream),
      ),
      h('span', { class: 'txt' }, t.label ? h('span', { class: 'label' }, oneLine(t.label, 200)) : h('span', { class: 'faint' }, '(no input recorded)')),
      h(
        'span',
        { class: 'meta' },
        `${t.runs ?? 0} run${t.runs === 1 ? '' : 's'} · ${t.steps ?? 0} steps · ${t.tools ?? 0} tools`,
        t.from !== undefined ? ` · ${fmtDur((t.to ?? t.from) - t.from)}` : '',
        callFigures(t.attrs ?? {}),
      ),
      h('span', { class: 'badges' }, seg ? quality(seg.quality) : null, unres ? [' ', badge(`${unres} unresolved`, 'u-open')] : null),
      h('span', { class: 'time' }, t.from !== undefined ? fmtTime(t.from) : 'no time'),
    );
    const card = h('div', { class: `talk${open ? ' open' : ''}${t.child ? ' child' : ''}`, 'data-talk': t.id }, head);
    if (t.child && stream?.opened_by.length) {
      card.append(
        h(
          'div',
          { class: 'reply' },
          'opened by ',
          stream.opened_by.map((o) => [h('button', { class: 'linkbtn', 'data-goto': o.step }, o.step), ' ', quality(o.quality)]),
        ),
      );
    } else if (t.child) {
      card.append(h('div', { class: 'reply' }, badge('no step is known to have opened this stream', 'q-unresolved')));
    }
    if (t.reply) card.append(h('div', { class: 'reply', title: t.reply }, '↳ ', oneLine(t.reply, 300)));
    card.append(...unresolvedRows(m.unresolvedAt.get(t.id)));
    if (open) {
      const group = h('div', { role: 'group', class: 'kids' });
      this.childRows(t.children ?? [], 2, group);
      if (!t.children?.length) group.append(h('p', { class: 'faint pad' }, 'No run or step is recorded in this talk.'));
      card.append(group);
    }
    return card;
  }

  private nodeRows(n: ViewNode, level: number, into: HTMLElement): void {
    const m = this.host.model();
    const kids = n.children ?? [];
    const closed = this.host.state.closed.has(n.id);
    const row = h(
      'div',
      {
        class: 'row',
        role: 'treeitem',
        'aria-level': String(level),
        tabindex: '-1',
        'data-id': n.id,
        'data-kind': n.kind,
        'aria-expanded': kids.length ? String(!closed) : undefined,
      },
      h('span', { class: 'tw', 'data-toggle': kids.length ? '1' : undefined, 'aria-hidden': 'true' }, kids.length ? (closed ? '▸' : '▾') : ''),
      h('span', { class: kindClass(n.kind) }, n.kind),
      h('span', { class: 'txt' }, summary(m, n)),
      h('span', { class: 'meta' }, metaOf(n)),
      h('span', { class: 'time' }, fmtTime(n.at)),
    );
    row.style.paddingLeft = `${12 + (level - 2) * 18}px`;
    into.append(row);
    if ((n.kind === 'tool' || n.kind === 'agent.call') && n.result !== undefined) {
      const r = h(
        'div',
        { class: 'row faint', 'data-result-of': n.id, 'aria-hidden': 'true' },
        h('span', { class: 'tw' }),
        h('span', { class: 'txt mono' }, `⇐ ${oneLine(n.result, 200)}`),
      );
      r.style.paddingLeft = `${12 + (level - 2) * 18 + 22}px`;
      into.append(r);
    }
    for (const u of unresolvedRows(m.unresolvedAt.get(n.id))) {
      u.style.marginLeft = `${40 + (level - 2) * 18}px`;
      into.append(u);
    }
    if (!closed) this.childRows(kids, level + 1, into);
  }

  /**
   * Siblings in order, with the context the runtime injected before the first model call folded
   * into one row: ten raw records ahead of every run say less than "10 context items".
   */
  private childRows(kids: ViewNode[], level: number, into: HTMLElement): void {
    const firstCall = kids.findIndex((k) => k.kind === 'llm.call');
    const before = firstCall === -1 ? kids.length : firstCall;
    for (let i = 0; i < kids.length;) {
      let j = i;
      while (j < before && kids[j]!.kind === 'context.injection') j++;
      if (j - i >= 2) {
        this.contextGroup(kids.slice(i, j), level, into);
        i = j;
      } else this.nodeRows(kids[i++]!, level, into);
    }
  }

  private contextGroup(items: ViewNode[], level: number, into: HTMLElement): void {
    const key = contextKey(items[0]!.id);
    const sel = this.host.state.selected;
    // Open when the reader opened it, or when what is selected is inside it (a shared link to one of them).
    const open = this.host.state.open.has(key) || items.some((n) => n.id === sel);
    const row = h(
      'div',
      { class: 'row ctx-group', 'data-ctx-group': key, 'aria-expanded': String(open) },
      h('span', { class: 'tw', 'aria-hidden': 'true' }, open ? '▾' : '▸'),
      h('span', { class: kindClass('context.injection') }, 'context'),
      h('button', { class: 'linkbtn ctx-toggle', 'data-ctx-toggle': key, 'aria-expanded': String(open) }, `${items.length} context items`),
      h('span', { class: 'time' }, fmtTime(items[0]!.at)),
    );
    row.style.paddingLeft = `${12 + (level - 2) * 18}px`;
    into.append(row);
    if (open) for (const n of items) this.nodeRows(n, level, into);
  }

  private toggleContext(key: string): void {
    if (this.host.state.open.has(key)) this.host.state.open.delete(key);
    else this.host.state.open.add(key);
    const talk = this.host.model().nodes.get(key.slice(CONTEXT_PREFIX.length))?.talk;
    if (talk) this.redrawTalk(talk);
    else this.render();
    (this.el.querySelector(`[data-ctx-toggle="${CSS.escape(key)}"]`) as HTMLElement | null)?.focus();
  }

  /** Redraws one talk's card in place, keeping focus where it was. */
  redrawTalk(id: string): void {
    const old = this.el.querySelector(`[data-talk="${CSS.escape(id)}"]`);
    const t = this.host.model().doc.talks.find((x) => x.id === id);
    if (!old || !t) {
      this.render();
      return;
    }
    const focused = (document.activeElement as HTMLElement | null)?.dataset?.id;
    old.replaceWith(this.talkCard(t));
    this.markSelected();
    if (focused) this.focus(focused);
  }

  markSelected(): void {
    for (const el of this.el.querySelectorAll('.row.selected')) el.classList.remove('selected');
    const sel = this.host.state.selected;
    if (!sel) return;
    const row = this.rowOf(sel);
    if (row) {
      row.classList.add('selected');
      row.setAttribute('aria-selected', 'true');
    }
  }

  rowOf(id: string): HTMLElement | null {
    return this.el.querySelector(`.row[data-id="${CSS.escape(id)}"]`);
  }

  /** Moves focus to a row; `top` brings it to the top of the pane (a jump), else just into view (a step). */
  focus(id: string, top = false): void {
    const row = this.rowOf(id);
    if (!row) return;
    for (const r of this.el.querySelectorAll<HTMLElement>('.row[tabindex="0"]')) r.tabIndex = -1;
    row.tabIndex = 0;
    row.focus({ preventScroll: true });
    row.scrollIntoView({ block: top ? 'start' : 'nearest' });
  }

  /** Opens whatever hides a node: its talk, and any closed node above it. */
  reveal(id: string): void {
    const e = this.host.model().nodes.get(id);
    if (!e) return;
    if (e.talk && !this.host.state.open.has(e.talk)) this.host.state.open.add(e.talk);
    let p = e.node.parent;
    for (let i = 0; p && i < 64; i++) {
      this.host.state.closed.delete(p);
      p = this.host.model().nodes.get(p)?.node.parent;
    }
    if (e.talk) this.redrawTalk(e.talk);
  }

  toggle(id: string): void {
    const m = this.host.model();
    const e = m.nodes.get(id);
    if (!e) return;
    if (e.node.kind === 'talk') {
      if (this.host.state.open.has(id)) this.host.state.open.delete(id);
      else this.host.state.open.add(id);
    } else if (e.node.children?.length) {
      if (this.host.state.closed.has(id)) this.host.state.closed.delete(id);
      else this.host.state.closed.add(id);
    } else return;
    if (e.talk) this.redrawTalk(e.talk);
    else this.render();
    this.focus(id);
  }

  private isOpen(id: string): boolean | undefined {
    const e = this.host.model().nodes.get(id);
    if (!e) return undefined;
    if (e.node.kind === 'talk') return this.host.state.open.has(id);
    if (!e.node.children?.length) return undefined;
    return !this.host.state.closed.has(id);
  }

  private onClick(e: MouseEvent): void {
    const t = e.target as HTMLElement;
    const group = t.closest<HTMLElement>('[data-ctx-group]');
    if (group) {
      this.toggleContext(group.dataset.ctxGroup!);
      return;
    }
    const goto = t.closest<HTMLElement>('[data-goto]');
    if (goto) {
      this.host.select(goto.dataset.goto!, { reveal: true, focus: true });
      return;
    }
    const row = t.closest<HTMLElement>('.row[data-id]');
    if (!row) return;
    const id = row.dataset.id!;
    // A talk's header opens it; any other row opens or closes by its twisty.
    if (t.closest('[data-toggle]') || row.dataset.kind === 'talk') this.toggle(id);
    this.host.select(id, { focus: true });
  }

  private onKey(e: KeyboardEvent): void {
    const row = (e.target as HTMLElement).closest<HTMLElement>('.row[data-id]');
    if (!row || e.altKey || e.ctrlKey || e.metaKey) return;
    const rows = [...this.el.querySelectorAll<HTMLElement>('.row[data-id]')];
    const i = rows.indexOf(row);
    const id = row.dataset.id!;
    const go = (r: HTMLElement | undefined) => {
      if (r) this.focus(r.dataset.id!);
    };
    switch (e.key) {
      case 'ArrowDown':
      case 'j':
        go(rows[i + 1]);
        break;
      case 'ArrowUp':
      case 'k':
        go(rows[i - 1]);
        break;
      case 'Home':
        go(rows[0]);
        break;
      case 'End':
        go(rows[rows.length - 1]);
        break;
      case 'ArrowRight':
      case 'l': {
        const open = this.isOpen(id);
        if (open === false) this.toggle(id);
        else if (open) go(rows[i + 1]);
        break;
      }
      case 'ArrowLeft':
      case 'h': {
        const open = this.isOpen(id);
        if (open) this.toggle(id);
        else {
          const parent = this.host.model().nodes.get(id)?.node.parent;
          if (parent && this.rowOf(parent)) this.focus(parent);
        }
        break;
      }
      case 'Enter':
      case ' ':
        if (row.dataset.kind === 'talk') this.toggle(id);
        this.host.select(id, { focus: true });
        break;
      default:
        return;
    }
    e.preventDefault();
  }
}
