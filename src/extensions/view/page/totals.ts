/** A conversation's totals for its header: tokens, model calls, tools, how long it ran, what it cost and its API and tool time. */
import type { ViewSummary } from '../../../formats/view/types.js';
import { fmtCount, fmtDur, h } from './dom.js';
import type { Model } from './model.js';
import { fmtCost } from './figures-tabs.js';

export interface Totals {
  tokensIn: number;
  tokensOut: number;
  tokensCache: number;
  /** Model calls that carried usage: with none, the token sums are unknown rather than zero. */
  withUsage: number;
  calls: number;
  tools: number;
  durationMs?: number;
}

export function totalsOf(m: Model): Totals {
  const t: Totals = { tokensIn: 0, tokensOut: 0, tokensCache: 0, withUsage: 0, calls: 0, tools: 0 };
  for (const { node } of m.nodes.values()) {
    if (node.kind === 'tool' || node.kind === 'agent.call') t.tools++;
    if (node.kind !== 'llm.call') continue;
    t.calls++;
    if (!node.usage) continue;
    t.withUsage++;
    t.tokensIn += node.usage.in ?? 0;
    t.tokensOut += node.usage.out ?? 0;
    t.tokensCache += (node.usage.cache_read ?? 0) + (node.usage.cache_write ?? 0);
  }
  const s: ViewSummary = m.doc.summary;
  if (s.from !== undefined && s.to !== undefined) t.durationMs = s.to - s.from;
  return t;
}

const stat = (label: string, value: string, testid: string) => h('span', { class: 'stat', 'data-testid': testid }, `${label} `, h('b', null, value));

export function totalsStrip(m: Model): HTMLElement {
  const t = totalsOf(m);
  return h(
    'div',
    { class: 'totals', 'data-testid': 'totals' },
    stat('tokens', t.withUsage ? `${fmtCount(t.tokensIn)} in · ${fmtCount(t.tokensOut)} out · ${fmtCount(t.tokensCache)} cache` : 'unknown', 'total-tokens'),
    stat('model calls', fmtCount(t.calls), 'total-calls'),
    stat('tools', fmtCount(t.tools), 'total-tools'),
    stat('duration', fmtDur(t.durationMs), 'total-duration'),
    // The runtime's own bill and API time (its OTLP export); without one they are unknown, not zero.
    stat('cost', fmtCost(m.doc.summary.cost_usd) ?? 'unknown', 'total-cost'),
    stat('API time', m.doc.summary.api_ms === undefined ? 'unknown' : fmtDur(m.doc.summary.api_ms), 'total-api'),
    stat('tool time', m.doc.summary.tool_ms === undefined ? 'unknown' : fmtDur(m.doc.summary.tool_ms), 'total-tool-time'),
  );
}
