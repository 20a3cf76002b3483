/** Small DOM and formatting helpers for the page. Text always goes in as text, never as markup. */
import { definitionOf } from './glossary.js';
import { QUALITY_LABELS } from './labels.js';

export type Child = Node | string | number | null | undefined | false | Child[];

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props?: Record<string, unknown> | null, ...children: Child[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (props) {
    for (const [k, v] of Object.entries(props)) {
      if (v === undefined || v === null || v === false) continue;
      if (k === 'class') el.className = String(v);
      else if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2).toLowerCase(), v as EventListener);
      else if (k === 'text') el.textContent = String(v);
      else if (k === 'hidden') el.hidden = !!v;
      else el.setAttribute(k, v === true ? '' : String(v));
    }
  }
  append(el, children);
  return el;
}

export function append(el: Node, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    if (Array.isArray(c)) append(el, c);
    else el.appendChild(typeof c === 'string' || typeof c === 'number' ? document.createTextNode(String(c)) : c);
  }
}

export function clear(el: Node): void {
  while (el.firstChild) el.removeChild(el.firstChild);
}

/** Times are shown in UTC, the way the records write them. */
export function fmtTime(ms: number | undefined, withDate = false): string {
  if (ms === undefined) return '—';
  const iso = new Date(ms).toISOString();
  return withDate ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}` : iso.slice(11, 23);
}

export function fmtIso(ms: number | undefined): string {
  return ms === undefined ? '—' : new Date(ms).toISOString();
}

export function fmtDur(ms: number | undefined): string {
  if (ms === undefined || !Number.isFinite(ms)) return '—';
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(s < 10 ? 2 : 1)} s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${String(Math.floor(s % 60)).padStart(2, '0')}s`;
  const hr = Math.floor(m / 60);
  if (hr < 48) return `${hr}h ${String(m % 60).padStart(2, '0')}m`;
  return `${Math.floor(hr / 24)}d ${hr % 24}h`;
}

export function fmtBytes(n: number | undefined): string {
  if (n === undefined) return '—';
  if (n < 1024) return `${n} B`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(1)} KiB`;
  return `${(n / 1024 / 1024).toFixed(1)} MiB`;
}

export function fmtCount(n: number | undefined): string {
  return n === undefined ? '—' : n.toLocaleString('en-US');
}

export const kindClass = (kind: string) => `k k-${kind.replace(/\./g, '-')}`;

export function badge(text: string, cls = ''): HTMLElement {
  return h('span', { class: `badge ${cls}`.trim() }, text);
}

/** A quality or a content state, coloured by how much it can be trusted; a quality in plain words, its definition on hover. */
export function quality(q: string | undefined): HTMLElement | null {
  if (!q) return null;
  const plain = QUALITY_LABELS[q];
  if (!plain) return badge(q, `q-${q} s-${q}`);
  return h('span', { class: `badge q-${q}`, 'data-quality': q, title: `${q}: ${definitionOf(q) ?? 'no definition from the server'}` }, plain);
}

export function oneLine(text: string | undefined, max = 240): string {
  if (!text) return '';
  const t = text.replace(/\s+/g, ' ').trim();
  return t.length > max ? t.slice(0, max - 1) + '…' : t;
}

export const short = (digest: string | undefined, n = 12) => (digest ? digest.slice(0, n) : '—');

export async function getJson<T>(url: string): Promise<{ status: number; body: T }> {
  const res = await fetch(url, { headers: { accept: 'application/json' } });
  let body: unknown;
  try {
    body = await res.json();
  } catch {
    body = { error: `${res.status} ${res.statusText}` };
  }
  return { status: res.status, body: body as T };
}
