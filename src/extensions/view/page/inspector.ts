/**
 * The inspector answers "where did this come from": Details (the node as the fold holds it and
 * what its record says), Relations (every edge, with quality and via), Evidence (the landed
 * record itself, read from the server on demand, with what was dropped and why), Raw, and
 * Execution and Prompt (figures-tabs.ts).
 */
import type { ViewNode, ViewRef } from '../../../formats/view/types.js';
import type { RecordAnswer } from '../catalog.js';
import { append, badge, clear, fmtBytes, fmtDur, fmtIso, getJson, h, kindClass, quality, type Child } from './dom.js';
import type { Model, UiState } from './model.js';
import { goto, kv, refText, textBlock, value } from './inspector-parts.js';
import { INSPECTOR_TABS } from './url-state.js';
import { executionTab, promptTab } from './figures-tabs.js';

export interface Glossary {
  dialect: string;
  terms: Record<string, { native?: string; where: string; note?: string }>;
  fields: Record<string, string>;
}

export interface InspectorHost {
  model(): Model;
  state: UiState;
  glossary(): Glossary | undefined;
  select(id: string, opts?: { reveal?: boolean; focus?: boolean }): void;
}

const TABS = INSPECTOR_TABS;
const SHOW_CHARS = 6000;

export class Inspector {
  readonly el: HTMLElement;
  private readonly tabs: HTMLElement;
  private readonly panel: HTMLElement;
  private record: { key: string; answer?: RecordAnswer; error?: string } | undefined;

  constructor(private readonly host: InspectorHost) {
    this.tabs = h('div', { role: 'tablist', 'aria-label': 'Inspector' });
    for (const [id, label] of TABS) {
      this.tabs.append(
        h('button', { role: 'tab', id: `tab-${id}`, 'aria-controls': 'inspector-panel', 'aria-selected': 'false', tabindex: '-1', 'data-tab': id }, label),
      );
    }
    this.panel = h('div', { class: 'tabpanel', role: 'tabpanel', id: 'inspector-panel', tabindex: '0' });
    this.el = h(
      'section',
      { class: 'right', 'aria-label': 'Inspector' },
      this.tabs,
      this.panel,
      h('div', { class: 'help' }, '↑↓ move · → open · ← close · Enter select · 1–6 inspector tabs · t timeline'),
    );
    this.tabs.addEventListener('click', (e) => {
      const t = (e.target as HTMLElement).closest<HTMLElement>('[data-tab]');
      if (t) this.show(t.dataset.tab as UiState['inspectorTab'], true);
    });
    this.tabs.addEventListener('keydown', (e) => {
      if (e.key !== 'ArrowRight' && e.key !== 'ArrowLeft') return;
      const i = TABS.findIndex(([id]) => id === this.host.state.inspectorTab);
      const next = TABS[(i + (e.key === 'ArrowRight' ? 1 : TABS.length - 1)) % TABS.length]![0];
      this.show(next, true);
      e.preventDefault();
    });
    this.panel.addEventListener('click', (e) => this.onClick(e));
  }

  show(tab: UiState['inspectorTab'], focusTab = false): void {
    this.host.state.inspectorTab = tab;
    this.render();
    if (focusTab) (this.tabs.querySelector(`[data-tab="${tab}"]`) as HTMLElement | null)?.focus();
  }

  render(): void {
    for (const b of this.tabs.querySelectorAll<HTMLElement>('[role=tab]')) {
      const on = b.dataset.tab === this.host.state.inspectorTab;
      b.setAttribute('aria-selected', String(on));
      b.tabIndex = on ? 0 : -1;
    }
    this.panel.setAttribute('aria-labelledby', `tab-${this.host.state.inspectorTab}`);
    clear(this.panel);
    const body = h('div', { class: 'insp' });
    this.panel.append(body);
    const m = this.host.model();
    const id = this.host.state.selected;
    if (!id) {
      body.append(h('p', { class: 'muted' }, 'Select a talk, a run or a step to see where it came from.'));
      return;
    }
    const node = m.nodes.get(id)?.node;
    const stream = m.streams.get(id);
    const segment = m.segments.get(id);
    if (!node && !stream && !segment) {
      body.append(h('p', { class: 'muted' }, `${id} is not in this document.`));
      return;
    }
    switch (this.host.state.inspectorTab) {
      case 'details':
        append(body, node ? this.details(node) : stream ? this.streamDetails(id) : this.segmentDetails(id));
        break;
      case 'relations':
        append(body, this.relations(id, node));
        break;
      case 'evidence':
        append(body, this.evidence(node));
        break;
      case 'raw':
        append(body, this.raw(node ?? stream ?? segment));
        break;
      case 'execution':
      case 'prompt':
        append(
          body,
          !node ? [h('p', { class: 'muted' }, 'Select a step.')] : this.host.state.inspectorTab === 'execution' ? executionTab(node) : promptTab(node, m.id),
        );
        break;
    }
  }

  private gloss = (k: string): HTMLElement | null => {
    const g = this.host.glossary();
    if (!g || (!g.terms[k] && !g.fields[k])) return null;
    return h('button', { class: 'gq', 'data-gloss': k, 'aria-label': `What ${k} means`, 'aria-expanded': 'false' }, '?');
  };

  private details(n: ViewNode): Child[] {
    const m = this.host.model();
    const e = m.nodes.get(n.id)!;
    const out: Child[] = [h('h2', null, h('span', { class: kindClass(n.kind) }, n.kind), ' ', h('span', { class: 'mono' }, n.id))];
    out.push(
      kv(
        [
          ['kind', n.kind],
          ['parent', n.parent ? goto(n.parent) : undefined],
          ['stream', n.stream],
          ['talk', e.talk && e.talk !== n.id ? goto(e.talk) : undefined],
          ['time', n.at !== undefined ? `${fmtIso(n.at)}` : h('span', { class: 'faint' }, 'the record carries no time')],
          ['ref', n.ref ? refText(n.ref) : undefined],
          ['refs', n.refs ? `${n.refs.length} record${n.refs.length === 1 ? '' : 's'}` : undefined],
          ['state', n.state ? badge(n.state, `s-${n.state}`) : undefined],
          ['bytes', n.bytes !== undefined ? fmtBytes(n.bytes) : undefined],
          ['flags', n.flags?.length ? n.flags.map((f) => [badge(f), ' ']) : undefined],
        ],
        this.gloss,
      ),
    );
    if (n.kind === 'talk') {
      out.push(
        h('h3', null, 'Talk'),
        kv(
          [
            ['runs', String(n.runs ?? 0)],
            ['steps', String(n.steps ?? 0)],
            ['tools', String(n.tools ?? 0)],
            ['from', fmtIso(n.from)],
            ['to', fmtIso(n.to)],
            ['span', n.from !== undefined ? fmtDur((n.to ?? n.from) - n.from) : undefined],
            ['segment', n.segment ? goto(n.segment) : undefined],
            ['child stream', n.child ? 'yes' : undefined],
          ],
          this.gloss,
        ),
      );
      out.push(...textBlock(n.label, undefined, 'Label'), ...textBlock(n.reply, undefined, 'Reply'));
    }
    if (n.kind === 'tool' || n.kind === 'agent.call') {
      out.push(
        h('h3', null, 'Tool'),
        kv(
          [
            ['name', n.name],
            ['result', n.result_state ? badge(n.result_state, `s-${n.result_state}`) : badge(String(n.attrs?.result ?? 'unavailable'), 's-unavailable')],
            ['result bytes', n.result_bytes !== undefined ? fmtBytes(n.result_bytes) : undefined],
            ['failed', n.failed !== undefined ? String(n.failed) : undefined],
            [
              'request → result',
              n.request_to_result_ms !== undefined
                ? `${fmtDur(n.request_to_result_ms)} (${n.request_to_result_join})`
                : n.request_to_result_join
                  ? `under 1 ms (${n.request_to_result_join})`
                  : h('span', { class: 'faint' }, 'not stated: the join is not exact_unique or a time is missing'),
            ],
          ],
          this.gloss,
        ),
      );
      out.push(h('p', { class: 'note' }, 'Request → result is the time between two records the runtime wrote; it is not how long the tool ran.'));
    }
    if (n.kind === 'llm.call') {
      out.push(
        h('h3', null, 'Usage'),
        n.usage
          ? kv(
              [
                ['in', String(n.usage.in ?? 0)],
                ['out', String(n.usage.out ?? 0)],
                ['cache_read', String(n.usage.cache_read ?? 0)],
                ['cache_write', String(n.usage.cache_write ?? 0)],
              ],
              this.gloss,
            )
          : h('p', { class: 'muted' }, `Usage ${String(n.attrs?.usage ?? 'unavailable')}: no fragment of this call carries a stop reason.`),
      );
    }
    if (n.attrs)
      out.push(
        h('h3', null, 'Attributes'),
        kv(
          Object.entries(n.attrs).map(([k, v]) => [k, value(v)]),
          this.gloss,
        ),
      );
    out.push(...textBlock(n.text, n.bytes, n.kind === 'tool' || n.kind === 'agent.call' ? 'Input' : 'Text'));
    out.push(...textBlock(n.result, n.result_bytes, 'Result'));
    if (n.dropped?.length) {
      out.push(
        h(
          'div',
          { class: 'dropped' },
          h('h3', null, 'Dropped on landing'),
          n.dropped.map((d) => h('div', null, h('b', null, d.what), ` · ${fmtBytes(d.bytes)}`, d.why ? h('span', { class: 'muted' }, ` — ${d.why}`) : null)),
        ),
      );
    }
    const unres = m.unresolvedAt.get(n.id) ?? [];
    if (unres.length) {
      out.push(
        h('h3', null, 'Unresolved'),
        unres.map((u) => h('div', { class: `unres-inline${u.state === 'open' ? '' : ' settled'}` }, badge(u.state, `u-${u.state}`), ` ${u.kind}: ${u.reason}`)),
      );
    }
    return out;
  }

  private streamDetails(id: string): Child[] {
    const s = this.host.model().streams.get(id)!;
    return [
      h('h2', null, h('span', { class: 'k' }, 'stream'), ' ', h('span', { class: 'mono' }, id)),
      kv(
        [
          ['name', s.name],
          ['role', s.role],
          ['label', s.label],
          ['parent', s.parent],
          ['records', String(s.records)],
          ['steps', String(s.steps)],
          ['first talk', s.talk ? goto(s.talk) : undefined],
        ],
        this.gloss,
      ),
      h('h3', null, 'Opened by'),
      s.opened_by.length
        ? s.opened_by.map((o) =>
            h('div', { class: 'edge' }, goto(o.step), quality(o.quality), h('span', { class: 'muted' }, o.talk ? ['in ', goto(o.talk)] : '')),
          )
        : h(
            'p',
            { class: 'muted' },
            s.role === 'main' ? 'The main stream is opened by the session.' : 'No landed record names the step that opened this stream.',
          ),
    ];
  }

  private segmentDetails(id: string): Child[] {
    const s = this.host.model().segments.get(id)!;
    return [
      h('h2', null, h('span', { class: 'k' }, 'segment'), ' ', h('span', { class: 'mono' }, id)),
      kv(
        [
          ['state', s.state],
          ['committable', s.committable !== undefined ? String(s.committable) : undefined],
          ['talks', String(s.talks)],
          ['from', fmtIso(s.from)],
          ['to', fmtIso(s.to)],
          ['gates unmet', s.gates_unmet?.length ? s.gates_unmet.join(', ') : 'none'],
        ],
        this.gloss,
      ),
      h('p', { class: 'note' }, 'A segment is an activity window the assembler proposes; nothing commits it.'),
    ];
  }

  private relations(id: string, n: ViewNode | undefined): Child[] {
    const m = this.host.model();
    const edges =
      n?.edges ??
      m.doc.relations
        .filter((r) => r.from === id || r.to === id)
        .map((r) => ({ type: r.type, other: r.from === id ? r.to : r.from, dir: r.from === id ? 'out' : 'in', quality: r.quality, via: r.via }));
    if (!edges.length) return [h('p', { class: 'muted' }, 'No relation touches this node. Containment (talk → run → step) is not a relation.')];
    return [
      h('h3', null, `${edges.length} relation${edges.length === 1 ? '' : 's'}, in the order they happened`),
      edges.map((e) =>
        h(
          'div',
          { class: 'edge', 'data-edge': e.type },
          h('span', { class: 'k' }, e.type),
          h('span', { class: 'faint' }, e.dir === 'out' ? 'to →' : '← from'),
          h('span', null, goto(e.other), ' ', quality(e.quality)),
          h('div', { class: 'via' }, `via ${e.via}`),
        ),
      ),
    ];
  }

  private refsOf(n: ViewNode | undefined): ViewRef[] {
    if (!n) return [];
    const out: ViewRef[] = [];
    const seen = new Set<string>();
    for (const r of [...(n.ref ? [n.ref] : []), ...(n.refs ?? [])]) {
      const k = `${r.seq}/${r.row}/${r.block ?? ''}`;
      if (!seen.has(k)) {
        seen.add(k);
        out.push(r);
      }
    }
    return out;
  }

  private evidence(n: ViewNode | undefined): Child[] {
    const refs = this.refsOf(n);
    if (!refs.length) return [h('p', { class: 'muted' }, 'This entity stands on no landed record.')];
    const i = Math.min(this.host.state.evidence, refs.length - 1);
    const ref = refs[i]!;
    const key = `${this.host.model().id}/${ref.seq}/${ref.row}`;
    const out: Child[] = [
      h('h3', null, `Records it stands on (${refs.length})`),
      h(
        'div',
        { class: 'refs' },
        refs.map((r, k) => h('button', { 'data-ref': String(k), 'aria-pressed': String(k === i) }, k === 0 ? `${refText(r)} (its own)` : refText(r))),
      ),
    ];
    if (this.record?.key !== key) {
      this.record = { key };
      void this.load(key, ref);
      out.push(h('p', { class: 'muted' }, 'Reading the landed record…'));
      return out;
    }
    if (this.record.error) {
      out.push(h('p', { class: 'q-unresolved' }, this.record.error));
      return out;
    }
    if (!this.record.answer) {
      out.push(h('p', { class: 'muted' }, 'Reading the landed record…'));
      return out;
    }
    out.push(...this.recordView(this.record.answer, ref.block));
    return out;
  }

  private async load(key: string, ref: ViewRef): Promise<void> {
    const m = this.host.model();
    try {
      const r = await getJson<RecordAnswer & { error?: string }>(`/api/c/${encodeURIComponent(m.id)}/record/${ref.seq}/${ref.row}`);
      if (this.record?.key !== key) return;
      this.record = r.status === 200 ? { key, answer: r.body } : { key, error: r.body.error ?? `the server answered ${r.status}` };
    } catch (err) {
      if (this.record?.key === key) this.record = { key, error: String(err) };
    }
    if (this.host.state.inspectorTab === 'evidence' || this.host.state.inspectorTab === 'raw') this.render();
  }

  private recordView(a: RecordAnswer, block: number | undefined): Child[] {
    const r = a.record;
    const envelope = Object.entries(r).filter(([k]) => k !== 'parts' && k !== 'dropped');
    const dropped = r.dropped ?? [];
    return [
      h(
        'div',
        { class: 'evidence-record', 'data-seq': String(a.seq), 'data-row': String(a.row) },
        h('h3', null, 'Landed record'),
        kv(
          [
            ['file', h('span', { class: 'mono' }, a.file)],
            ['kind', a.header.kind],
            ['stream', a.header.stream],
            ['dialect', a.header.dialect],
            ['source', h('span', { class: 'mono' }, a.header.src)],
          ],
          this.gloss,
        ),
        kv(
          envelope.map(([k, v]) => [k, value(v)]),
          this.gloss,
        ),
        h(
          'div',
          { class: 'dropped', 'data-testid': 'dropped' },
          h('h3', null, `Dropped on landing (${dropped.length})`, this.gloss('dropped')),
          dropped.length
            ? dropped.map((d) =>
                h(
                  'div',
                  { class: 'dropped-item' },
                  h('b', null, d.what),
                  ` · ${fmtBytes(d.bytes)}`,
                  d.why ? h('span', { class: 'muted' }, ` — ${d.why}`) : null,
                ),
              )
            : h('span', { class: 'muted' }, 'Nothing was left out of this record.'),
        ),
        h('h3', null, `Parts (${r.parts.length})`, this.gloss('parts')),
        r.parts.map((p, k) => {
          const body = p.text !== undefined ? p.text : p.data !== undefined ? JSON.stringify(p.data, null, 2) : undefined;
          const part = h(
            'div',
            { class: 'part' },
            h(
              'div',
              null,
              h('span', { class: 'k' }, p.k),
              ' ',
              badge(p.state, `s-${p.state}`),
              h('span', { class: 'faint' }, ` ${fmtBytes(p.bytes)} · block ${k}`),
              p.name ? [' · ', h('b', null, p.name)] : null,
              p.id ? h('span', { class: 'faint mono' }, ` ${p.id}`) : null,
              p.of ? h('span', { class: 'faint mono' }, ` answers ${p.of}`) : null,
              p.failed !== undefined ? [' ', badge(p.failed ? 'failed' : 'ok', p.failed ? 's-failed' : 's-available')] : null,
            ),
            body !== undefined ? h('pre', { class: 'text' }, body.length > SHOW_CHARS ? body.slice(0, SHOW_CHARS) + '…' : body) : null,
            body !== undefined && body.length > SHOW_CHARS
              ? h(
                  'p',
                  { class: 'note' },
                  `${SHOW_CHARS.toLocaleString('en-US')} of ${body.length.toLocaleString('en-US')} characters shown; Raw has all of it.`,
                )
              : null,
          );
          if (k === block) part.style.borderColor = '#58a8ff';
          return part;
        }),
      ),
    ];
  }

  private raw(entity: unknown): Child[] {
    const plain =
      entity && typeof entity === 'object' && 'children' in entity
        ? { ...(entity as ViewNode), children: `(${(entity as ViewNode).children!.length} children, shown in the transcript)` }
        : entity;
    return [
      h('h3', null, 'As the document holds it'),
      h('pre', { class: 'text' }, JSON.stringify(plain, null, 2)),
      this.record?.answer
        ? [
            h('h3', null, `Landed record ${this.record.answer.seq}/${this.record.answer.row}, as read from disk`),
            h('pre', { class: 'text' }, JSON.stringify(this.record.answer.record, null, 2)),
          ]
        : null,
    ];
  }

  private onClick(e: MouseEvent): void {
    const t = e.target as HTMLElement;
    const go = t.closest<HTMLElement>('[data-goto]');
    if (go) {
      this.host.select(go.dataset.goto!, { reveal: true, focus: false });
      return;
    }
    const ref = t.closest<HTMLElement>('[data-ref]');
    if (ref) {
      this.host.state.evidence = Number(ref.dataset.ref);
      this.render();
      (this.panel.querySelector(`[data-ref="${ref.dataset.ref}"]`) as HTMLElement | null)?.focus();
      return;
    }
    const gq = t.closest<HTMLElement>('[data-gloss]');
    if (gq) this.toggleGloss(gq);
  }

  private toggleGloss(btn: HTMLElement): void {
    const holder = btn.closest('dt, h3') as HTMLElement;
    const next = (holder.tagName === 'DT' ? holder.nextElementSibling?.nextElementSibling : holder.nextElementSibling) as HTMLElement | null;
    if (next?.classList.contains('gloss')) {
      next.remove();
      btn.setAttribute('aria-expanded', 'false');
      return;
    }
    const g = this.host.glossary()!;
    const k = btn.dataset.gloss!;
    const term = g.terms[k];
    const text: Child[] = term
      ? [
          h('b', null, k),
          ': ',
          term.native ? ['the runtime calls it ', h('code', null, term.native)] : 'the runtime has no word for it; this project derives it',
          `; found in ${term.where}`,
          term.note ? `. ${term.note}` : '',
          h('span', { class: 'faint' }, ` (${g.dialect})`),
        ]
      : [h('b', null, k), `: ${g.fields[k]}`];
    const div = h('div', { class: 'gloss', role: 'note' }, text);
    const anchor = holder.tagName === 'DT' ? holder.nextElementSibling! : holder;
    anchor.after(div);
    btn.setAttribute('aria-expanded', 'true');
  }
}
