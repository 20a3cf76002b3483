/**
 * The page's entry: `/` is the list, `/c/{id}` one conversation. Both poll `/api/status` and
 * redraw when a head round moves, so a collector and a parser running beside the server show up
 * without a reload.
 */
import type { ViewStatus } from '../catalog.js';
import { clear, getJson, h } from './dom.js';
import { renderList } from './list.js';
import { openConversation } from './conversation.js';

const params = new URLSearchParams(location.search);
const POLL_MS = Math.max(200, Number(params.get('poll')) || 2000);

const main = document.getElementById('main')!;
const live = document.getElementById('live')!;
const crumbs = document.getElementById('crumbs')!;

export interface Page {
  /** Every poll's answer: a page that sees its own data moved fetches again and redraws, keeping what the reader had open. */
  observe(status: ViewStatus): Promise<void>;
}

let page: Page | undefined;
let lastGeneration = -1;
let flashTimer: number | undefined;

function showLive(status: ViewStatus | undefined, changed: boolean): void {
  clear(live);
  if (!status) {
    live.className = 'live stale';
    live.append(h('span', { class: 'dot' }), 'server unreachable');
    return;
  }
  live.className = changed ? 'live flash' : 'live';
  const when = status.last_refresh ? status.last_refresh.slice(11, 19) : '—';
  live.append(h('span', { class: 'dot', 'aria-hidden': 'true' }), changed ? `updated ${when} UTC` : `live · last change ${when} UTC`);
  if (changed) {
    window.clearTimeout(flashTimer);
    flashTimer = window.setTimeout(() => { live.classList.remove('flash'); }, 2500);
  }
}

async function poll(): Promise<void> {
  let status: ViewStatus;
  try {
    const r = await getJson<ViewStatus>('/api/status');
    status = r.body;
  } catch {
    showLive(undefined, false);
    return;
  }
  const changed = lastGeneration !== -1 && status.generation !== lastGeneration;
  lastGeneration = status.generation;
  showLive(status, changed);
  if (page) await page.observe(status);
}

async function start(): Promise<void> {
  const m = /^\/c\/([^/]+)\/?$/.exec(location.pathname);
  clear(main);
  if (m) {
    page = await openConversation(decodeURIComponent(m[1]!), main, crumbs);
  } else {
    crumbs.append(h('span', null, 'Conversations'));
    page = await renderList(main);
  }
  await poll();
  window.setInterval(() => { void poll(); }, POLL_MS);
}

void start();
