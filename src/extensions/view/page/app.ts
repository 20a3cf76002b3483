/**
 * The page's entry: `/` is the list, `/c/{id}` one conversation. Both poll `/api/status` and
 * redraw when a head round moves, so a collector and a parser running beside the server show up
 * without a reload.
 */
import type { ViewStatus } from '../catalog.js';
import { clear, getJson, h } from './dom.js';
import { renderList } from './list.js';
import { openConversation } from './conversation.js';
import { renderUsage } from './usage.js';
import type { Page } from './page.js';

const POLL_MS = Math.max(200, Number(new URLSearchParams(location.search).get('poll')) || 2000);

/** The page's one live instance: the open page, the last generation seen, the flash of the live badge. */
class App {
  private page: Page | undefined;
  private lastGeneration = -1;
  private flashTimer: number | undefined;
  private readonly main = document.getElementById('main')!;
  private readonly live = document.getElementById('live')!;
  private readonly crumbs = document.getElementById('crumbs')!;

  private showLive(status: ViewStatus | undefined, changed: boolean): void {
    const live = this.live;
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
      window.clearTimeout(this.flashTimer);
      this.flashTimer = window.setTimeout(() => {
        live.classList.remove('flash');
      }, 2500);
    }
  }

  private async poll(): Promise<void> {
    let status: ViewStatus;
    try {
      const r = await getJson<ViewStatus>('/api/status');
      status = r.body;
    } catch {
      this.showLive(undefined, false);
      return;
    }
    const changed = this.lastGeneration !== -1 && status.generation !== this.lastGeneration;
    this.lastGeneration = status.generation;
    this.showLive(status, changed);
    if (this.page) await this.page.observe(status);
  }

  async start(): Promise<void> {
    const m = /^\/c\/([^/]+)\/?$/.exec(location.pathname);
    clear(this.main);
    if (m) {
      this.page = await openConversation(decodeURIComponent(m[1]!), this.main, this.crumbs);
    } else if (/^\/usage\/?$/.test(location.pathname)) {
      this.crumbs.append(h('a', { href: '/' }, 'Conversations'), ' · ', h('span', null, 'Usage'));
      this.page = await renderUsage(this.main);
    } else {
      this.crumbs.append(h('span', null, 'Conversations'), ' · ', h('a', { href: '/usage', 'data-testid': 'usage-link' }, 'Usage'));
      this.page = await renderList(this.main);
    }
    await this.poll();
    window.setInterval(() => {
      void this.poll();
    }, POLL_MS);
  }
}

void new App().start();
