/** The inspector's small pieces: a value shown by its kind, a key-value list, a clipped text, a link to a node. */
import type { ViewRef } from '../../../formats/view/types.js';
import { badge, fmtBytes, h, quality, type Child } from './dom.js';

const QUALITIES = new Set(['exact_unique', 'exact_ambiguous', 'strong_inference', 'weak_inference', 'unresolved', 'conflict']);
const STATES = new Set(['available', 'unavailable', 'truncated', 'redacted', 'omitted', 'observed_replayable']);

export const goto = (id: string) => h('button', { class: 'linkbtn', 'data-goto': id }, id);
export const refText = (r: ViewRef) => `seq ${r.seq} · row ${r.row}${r.block === undefined ? '' : ` · block ${r.block}`}`;

export function value(v: unknown): Child {
  if (typeof v === 'string') {
    if (QUALITIES.has(v)) return quality(v);
    if (STATES.has(v)) return badge(v, `s-${v}`);
    return v;
  }
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return h('code', null, JSON.stringify(v));
}

export function kv(rows: [string, Child][], gloss?: (k: string) => HTMLElement | null): HTMLElement {
  const dl = h('dl', { class: 'kv' });
  for (const [k, v] of rows) {
    if (v === undefined || v === null || v === '') continue;
    dl.append(h('dt', null, k, gloss?.(k) ?? null), h('dd', null, v));
  }
  return dl;
}

export function textBlock(text: string | undefined, bytes: number | undefined, what: string): Child[] {
  if (text === undefined) return [];
  const shown = new TextEncoder().encode(text).length;
  return [
    h('h3', null, what),
    h('pre', { class: 'text' }, text),
    bytes !== undefined && bytes > shown
      ? h('p', { class: 'note' }, `Clipped: ${fmtBytes(shown)} shown of ${fmtBytes(bytes)}. The whole part is in the landed record (Evidence).`)
      : null,
  ];
}
