/**
 * The page's entry: `/` is the list, `/c/{id}` one conversation. Both wait on `/api/status`
 * (`?after=` the generation they have: the server answers once a head round moves) and redraw, so
 * a collector and a parser running beside the server show up without a reload, as soon as they
 * wrote. A failed wait is tried again after `poll` (2 s unless the address says).
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

  /** One look at `/api/status`, waiting for a change once a generation is known; false when the server did not answer. */
  private async poll(): Promise<boolean> {
    let status: ViewStatus;
    try {
      const r = await getJson<ViewStatus>(this.lastGeneration === -1 ? '/api/status' : `/api/status?after=${this.lastGeneration}`);
      if (r.status !== 200) throw new Error(`HTTP ${r.status}`);
      status = r.body;
    } catch {
      this.showLive(undefined, false);
      return false;
    }
    const changed = this.lastGeneration !== -1 && status.generation !== this.lastGeneration;
    this.lastGeneration = status.generation;
    this.showLive(status, changed);
    if (this.page) await this.page.observe(status);
    return true;
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
    for (;;) {
      const asked = Date.now();
      const before = this.lastGeneration;
      let answered = false;
      try {
        answered = await this.poll();
      } catch (err) {
        console.error(err); // a redraw that failed: the next change draws again
      }
      // Failed, or answered at once with nothing new (a server that does not wait): look again after `poll`.
      const elapsed = Date.now() - asked;
      if ((!answered || this.lastGeneration === before) && elapsed < POLL_MS) await new Promise((res) => window.setTimeout(res, POLL_MS - elapsed));
    }
  }
}

void new App().start();
