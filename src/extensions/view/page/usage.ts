/**
 * `/usage`: tokens and cost per day and per project, from `GET /api/usage` (the figures `aszcol
 * usage` prints), each as a stacked bar chart in plain SVG and a table. Days are counted in the
 * browser's time zone. A cost nobody knows is shown as unknown with its models, never as $0.
 */
import type { UsageAnswer } from '../../../assemble/usage/answer.js';
import type { Figures } from '../../../assemble/usage/figures.js';
import type { UsageRow } from '../../../assemble/usage/report.js';
import type { ViewStatus } from '../catalog.js';
import { clear, fmtCount, getJson, h } from './dom.js';
import type { Page } from './page.js';

const SVG = 'http://www.w3.org/2000/svg';
const PARTS = [
  { key: 'input_tokens', label: 'input', part: 'input' },
  { key: 'output_tokens', label: 'output', part: 'output' },
  { key: 'cache_creation_tokens', label: 'cache write', part: 'cache-write' },
  { key: 'cache_read_tokens', label: 'cache read', part: 'cache-read' },
] as const;

function svg(tag: string, attrs: Record<string, string | number>, ...children: (SVGElement | string)[]): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  for (const c of children) el.append(c);
  return el;
}

export function fmtCost(f: Figures): string {
  const known = `$${f.cost_usd.toFixed(f.cost_usd < 1 ? 4 : 2)}`;
  if (!f.cost_unknown_calls) return known;
  return f.calls === f.cost_unknown_calls ? `unknown (${f.unknown_models.join(', ')})` : `${known} + unknown (${f.unknown_models.join(', ')})`;
}

/** One bar per row, its height the row's tokens, stacked by kind; the row's key under it and every figure on hover. */
function chart(rows: UsageRow[], label: string): SVGElement {
  const barW = 28,
    gap = 12,
    height = 160,
    top = 10,
    bottom = 60,
    left = 8;
  const width = Math.max(240, left * 2 + rows.length * (barW + gap));
  const max = Math.max(1, ...rows.map((r) => r.total_tokens));
  const root = svg('svg', {
    viewBox: `0 0 ${width} ${height + top + bottom}`,
    width,
    height: height + top + bottom,
    role: 'img',
    'aria-label': label,
    class: 'usage-chart',
  });
  rows.forEach((r, i) => {
    const x = left + i * (barW + gap);
    let y = top + height;
    const bar = svg('g', { 'data-key': r.key, class: 'usage-bar' }, svg('title', {}, `${r.key}: ${fmtCount(r.total_tokens)} tokens, ${fmtCost(r)}`));
    for (const p of PARTS) {
      const hgt = (r[p.key] / max) * height;
      if (hgt <= 0) continue;
      y -= hgt;
      bar.append(svg('rect', { x, y, width: barW, height: hgt, class: `part-${p.part}`, 'data-part': p.label }));
    }
    const tx = x + barW / 2;
    bar.append(svg('text', { x: tx, y: top + height + 12, transform: `rotate(45 ${tx} ${top + height + 12})`, class: 'usage-label' }, r.key));
    root.append(bar);
  });
  return root;
}

function legend(): HTMLElement {
  return h(
    'div',
    { class: 'faint usage-legend' },
    PARTS.map((p) => h('span', { class: `usage-key part-${p.part}` }, `■ ${p.label} `)),
  );
}

function table(rows: UsageRow[], totals: Figures, keyLabel: string): HTMLElement {
  const n = (v: number) => h('td', { class: 'n' }, fmtCount(v));
  const line = (key: string, f: Figures, cls = '') =>
    h(
      'tr',
      { class: cls, 'data-key': key },
      h('td', { class: 'mono' }, key),
      h('td', { class: 'mono' }, f.models.join(', ')),
      n(f.input_tokens),
      n(f.output_tokens),
      n(f.cache_creation_tokens),
      n(f.cache_read_tokens),
      n(f.total_tokens),
      h('td', { class: 'n', 'data-col': 'cost' }, fmtCost(f)),
    );
  const body = h('tbody');
  for (const r of rows) {
    body.append(line(r.key, r));
    if (r.subagents) body.append(line(`  of which subagents`, r.subagents, 'faint'));
  }
  body.append(line('Total', totals, 'usage-total'));
  return h(
    'table',
    { 'aria-label': `Usage per ${keyLabel}` },
    h(
      'thead',
      null,
      h(
        'tr',
        null,
        [keyLabel, 'Models', 'Input', 'Output', 'Cache write', 'Cache read', 'Total tokens', 'Cost'].map((t, i) => h('th', { class: i >= 2 ? 'n' : '' }, t)),
      ),
    ),
    body,
  );
}

function costNote(a: UsageAnswer): HTMLElement {
  const t = a.totals;
  return h(
    'p',
    { class: 'muted pad', 'data-testid': 'usage-cost-note' },
    `Cost: $${t.cost_runtime_usd.toFixed(4)} as Claude Code reported it, $${t.cost_computed_usd.toFixed(4)} computed from the price table (as of ${a.pricing.as_of}).`,
    t.cost_unknown_calls ? ` Unknown for ${t.cost_unknown_calls} call(s): no price for ${t.unknown_models.join(', ')}.` : '',
  );
}

async function section(report: 'daily' | 'project', title: string, keyLabel: string): Promise<HTMLElement> {
  const zone = Intl.DateTimeFormat().resolvedOptions().timeZone;
  const r = await getJson<UsageAnswer & { error?: string }>(`/api/usage?report=${report}&timezone=${encodeURIComponent(zone)}`);
  if (r.status !== 200) return h('p', { class: 'q-unresolved pad' }, `usage: ${r.body.error ?? r.status}`);
  const a = r.body;
  return h(
    'section',
    { 'data-testid': `usage-${report}` },
    h('h2', { class: 'section-title' }, title),
    a.rows.length
      ? [chart(a.rows, `${title}: tokens per ${keyLabel}`), legend(), table(a.rows, a.totals, keyLabel)]
      : h('p', { class: 'muted pad' }, 'No counted calls yet.'),
    report === 'daily' ? costNote(a) : null,
  );
}

export async function renderUsage(main: HTMLElement): Promise<Page> {
  let generation = -1;
  const draw = async () => {
    const parts = await Promise.all([section('daily', 'Per day', 'Day'), section('project', 'Per project', 'Project')]);
    clear(main);
    main.append(h('div', { class: 'usage', 'data-testid': 'usage' }, h('h1', { class: 'pad' }, 'Usage'), parts));
  };
  await draw();
  return {
    observe: async (status: ViewStatus) => {
      if (generation !== -1 && status.generation !== generation) await draw();
      generation = status.generation;
    },
  };
}
