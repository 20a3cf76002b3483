import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { TERMS } from '../../src/adapters/claude-code/glossary.js';
import { ViewExtension } from '../../src/extensions/view/extension.js';
import type { ConversationRow } from '../../src/extensions/view/catalog.js';
import type { ViewDocument, ViewNode } from '../../src/formats/view/types.js';
import { labRun, readRequestLog, type LoggedRequest } from '../helpers/lab.js';
import { collectAndParse, writeConfig } from '../helpers/cli.js';
import { launchChromium } from '../helpers/browser.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { PROJECT, SID as FIXTURE, writeFixture } from '../helpers/view-fixture.js';
import type { Bench } from '../helpers/collect.js';

afterAll(cleanupTemp);

/** The nodes of a document in its own order, every talk and loose tree walked depth first. */
function flat(doc: ViewDocument): ViewNode[] {
  const out: ViewNode[] = [];
  const walk = (n: ViewNode) => {
    out.push(n);
    (n.children ?? []).forEach(walk);
  };
  doc.talks.forEach(walk);
  doc.loose.forEach(walk);
  return out;
}

/**
 * The page as someone opening it on their own Claude Code history uses it: a real session the lab
 * ran (no title of its own) beside the fixture (titled by the runtime), in another project. Held
 * against the lab's request log (tokens, models), the projects directory Claude Code wrote, and the
 * glossary.
 */
describe('the page for its users, in headless Chromium', () => {
  const base = tempDir('aszcol-view-users-');
  const home = join(base, 'home');
  const root = join(base, 'data');
  const log = join(base, 'requests.jsonl');
  let lab = '';
  let labProject = '';
  let requests: LoggedRequest[] = [];
  let ext: ViewExtension;
  let url = '';
  let ctx: BrowserContext;
  let page: Page;
  const errors: string[] = [];

  const apiRows = async () => ((await (await fetch(`${url}/api/conversations`)).json()) as { conversations: ConversationRow[] }).conversations;
  const shownIds = () => page.locator('tr.conv-row').evaluateAll((rows) => rows.map((r) => (r as HTMLElement).dataset.id));

  beforeAll(async () => {
    const config = writeConfig(base, root, join(home, 'projects'));
    lab = (await labRun({ configDir: home, cwd: join(base, 'work'), prompt: 'DELEGATE now', tools: 'Bash,Agent', log })).session_id;
    requests = readRequestLog(log);
    writeFixture({ src: join(home, 'projects') } as Bench);
    labProject = readdirSync(join(home, 'projects')).find((d) => existsSync(join(home, 'projects', d, `${lab}.jsonl`)))!;
    await collectAndParse(config);
    ext = new ViewExtension({ endpoint: '127.0.0.1:0', allowedHosts: [] }, { storageRoot: root });
    await ext.start();
    url = `http://${ext.address()}`;
    ctx = await launchChromium({ viewport: { width: 1600, height: 900 } });
    page = await ctx.newPage();
    page.on('pageerror', (e) => errors.push(e.message));
  }, 240_000);

  afterAll(async () => {
    await ctx?.close();
    await ext?.shutdown();
  });

  test('a conversation the runtime did not title is titled by its first prompt, in the list and in its header', async () => {
    const rows = await apiRows();
    const labRow = rows.find((r) => r.id === lab)!;
    expect(labRow).toMatchObject({ title: 'DELEGATE now', title_from: 'prompt' });
    expect(rows.find((r) => r.id === FIXTURE)).toMatchObject({ title: 'Build and check the tests', title_from: 'runtime' });
    await page.goto(`${url}/`);
    await page.waitForSelector('body[data-ready=list]');
    const link = page.locator(`tr[data-id="${lab}"] a.conv-link`);
    expect(await link.textContent()).toBe('DELEGATE now');
    expect(await link.getAttribute('data-title-from')).toBe('prompt');
    await link.click();
    await page.waitForSelector('body[data-ready=conversation]');
    expect(await page.locator('.summary h1').textContent()).toBe('DELEGATE now');
    expect(await page.title()).toContain('DELEGATE now');
  });

  test("the list's columns: project as Claude Code filed it, the models and tokens the API answered with, tools, subagents", async () => {
    const sum = (k: keyof LoggedRequest['usage']) => requests.reduce((a, r) => a + r.usage[k], 0);
    const labRow = (await apiRows()).find((r) => r.id === lab)!;
    expect(labRow).toMatchObject({
      project: labProject,
      models: [...new Set(requests.map((r) => r.model))].sort(),
      tokens_in: sum('in'),
      tokens_out: sum('out'),
      tokens_cache: sum('cache_read') + sum('cache_write'),
      tools: requests.flatMap((r) => r.tools).length,
      subagents: 1,
    });
    await page.goto(`${url}/`);
    await page.waitForSelector('body[data-ready=list]');
    const row = page.locator(`tr[data-id="${lab}"]`);
    expect(await row.locator('td[data-col=project]').textContent()).toBe(labProject);
    expect(await row.locator('td[data-col=models]').textContent()).toBe(labRow.models!.join(''));
    expect(await row.locator('td[data-col=tokens_in]').textContent()).toBe(sum('in').toLocaleString('en-US'));
    expect(await row.locator('td[data-col=tokens_out]').textContent()).toBe(sum('out').toLocaleString('en-US'));
    expect(await row.locator('td[data-col=tools]').textContent()).toBe(String(labRow.tools));
    expect(await page.locator(`tr[data-id="${FIXTURE}"] td[data-col=project]`).textContent()).toBe(PROJECT);
    // No part of the service reported a cost: the column is not there rather than full of dashes.
    expect(await page.locator('th', { hasText: 'Cost' }).count()).toBe(0);
  });

  test('sorting by a column header, both ways, held in the URL; Back undoes it', async () => {
    await page.goto(`${url}/`);
    await page.waitForSelector('body[data-ready=list]');
    const rows = await apiRows();
    const byTokens = (dir: 1 | -1) =>
      [...rows].sort((a, b) => (a.tokens_in === undefined ? 1 : b.tokens_in === undefined ? -1 : dir * (a.tokens_in - b.tokens_in))).map((r) => r.id);
    await page.click('button[data-sort=tokens_in]');
    expect(new URL(page.url()).search).toBe('?sort=tokens_in&dir=desc');
    expect(await shownIds()).toEqual(byTokens(-1));
    await page.click('button[data-sort=tokens_in]');
    expect(new URL(page.url()).search).toBe('?sort=tokens_in&dir=asc');
    expect(await shownIds()).toEqual(byTokens(1));
    expect(await page.locator('th[aria-sort=ascending]').textContent()).toContain('Tokens in');
    await page.goBack();
    await page.waitForURL(/dir=desc/);
    expect(await shownIds()).toEqual(byTokens(-1));
    // A shared link opens sorted the same way.
    const other = await ctx.newPage();
    await other.goto(`${url}/?sort=title&dir=asc`);
    await other.waitForSelector('body[data-ready=list]');
    const titles = await other.locator('a.conv-link').allTextContents();
    expect(titles).toEqual([...titles].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)));
    await other.close();
  });

  test('a search over titles and every prompt, and a project filter, both in the URL', async () => {
    await page.goto(`${url}/`);
    await page.waitForSelector('body[data-ready=list]');
    // "read the log" is the fixture's second prompt: neither its title nor its first prompt.
    await page.fill('[data-testid=list-search]', 'READ the log');
    expect(await shownIds()).toEqual([FIXTURE]);
    expect(new URL(page.url()).searchParams.get('q')).toBe('READ the log');
    await page.fill('[data-testid=list-search]', 'delegate');
    expect(await shownIds()).toEqual([lab]);
    await page.fill('[data-testid=list-search]', 'nothing like this anywhere');
    expect(await page.locator('[data-testid=list-none]').count()).toBe(1);
    await page.fill('[data-testid=list-search]', '');
    expect((await shownIds()).sort()).toEqual([lab, FIXTURE].sort());
    await page.selectOption('[data-testid=list-project]', PROJECT);
    expect(await shownIds()).toEqual([FIXTURE]);
    expect(new URL(page.url()).searchParams.get('project')).toBe(PROJECT);
    expect(await page.locator('[data-testid=list-count]').textContent()).toBe('(1 of 2)');
    await page.goBack();
    await page.waitForURL((u) => !u.searchParams.has('project'));
    expect((await shownIds()).sort()).toEqual([lab, FIXTURE].sort());
    expect(await page.inputValue('[data-testid=list-project]')).toBe('');
    await page.goto(`${url}/?project=${encodeURIComponent(labProject)}`);
    await page.waitForSelector('body[data-ready=list]');
    expect(await shownIds()).toEqual([lab]);
  });

  test('the URL holds the talk, the step and the tab: a shared link opens on them, Back returns to the step before', async () => {
    await page.goto(`${url}/c/${lab}`);
    await page.waitForSelector('body[data-ready=conversation]');
    const call = page.locator('.row[data-kind="agent.call"]');
    const callId = (await call.getAttribute('data-id'))!;
    await call.click();
    let params = new URL(page.url()).searchParams;
    expect(params.get('step')).toBe(callId);
    expect(params.get('talk')).toMatch(/^talk\//);
    await page.click('#tab-evidence');
    expect(new URL(page.url()).searchParams.get('tab')).toBe('evidence');
    const shared = page.url();

    const other = await ctx.newPage();
    await other.goto(shared);
    await other.waitForSelector('body[data-ready=conversation]');
    expect(await other.locator('.row.selected').getAttribute('data-id')).toBe(callId);
    expect(await other.locator('#tab-evidence').getAttribute('aria-selected')).toBe('true');
    await other.locator('.evidence-record').waitFor();
    await other.close();

    const run = page.locator('.row[data-kind=run]').first();
    const runId = (await run.getAttribute('data-id'))!;
    await run.click();
    params = new URL(page.url()).searchParams;
    expect(params.get('step')).toBe(runId);
    await page.goBack();
    await page.waitForURL((u) => u.searchParams.get('step') === callId);
    expect(await page.locator('.row.selected').getAttribute('data-id')).toBe(callId);
    expect(await page.locator('#tab-evidence').getAttribute('aria-selected')).toBe('true');
    await page.goBack();
    await page.waitForURL((u) => !u.searchParams.has('step'));
    expect(await page.locator('.row.selected').getAttribute('data-kind')).toBe('talk');
    await page.goForward();
    await page.waitForURL((u) => u.searchParams.get('step') === callId);
    expect(await page.locator('.row.selected').getAttribute('data-id')).toBe(callId);
  });

  test("a run's context injections are one row that opens on click; plain evidence words; totals; summaries that wrap", async () => {
    const doc = (await (await fetch(`${url}/api/c/${lab}/view`)).json()) as ViewDocument;
    const run = flat(doc).find((n) => n.kind === 'run' && n.stream === 'main')!;
    const kids = run.children ?? [];
    const firstCall = kids.findIndex((k) => k.kind === 'llm.call');
    const injected = kids.slice(0, firstCall).filter((k) => k.kind === 'context.injection');
    expect(injected.length).toBeGreaterThanOrEqual(2);
    await page.goto(`${url}/c/${lab}`);
    await page.waitForSelector('body[data-ready=conversation]');
    const group = page.locator('.ctx-group').first();
    expect(await group.textContent()).toContain(`${injected.length} context items`);
    expect(await page.locator(`.row[data-id="${injected[0]!.id}"]`).count()).toBe(0);
    await group.locator('button').click();
    for (const n of injected) expect(await page.locator(`.row[data-id="${n.id}"]`).count()).toBe(1);
    expect(await page.locator('.ctx-group button').first().getAttribute('aria-expanded')).toBe('true');

    // The join's quality in plain words; the term and the glossary's definition on hover.
    const exact = page.locator('.row[data-kind="agent.call"] [data-quality=exact_unique]').first();
    expect(await exact.textContent()).toBe('exact');
    expect(await exact.getAttribute('title')).toBe(`exact_unique: ${TERMS.exact_unique!.note!}`);
    // Every quality badge on the page, whatever drew it, hovers with the glossary's words.
    for (const badge of await page.locator('[data-quality]').all()) {
      const term = (await badge.getAttribute('data-quality'))!;
      expect(await badge.getAttribute('title')).toBe(`${term}: ${TERMS[term]!.note!}`);
    }

    // Totals in the header, against the lab's request log.
    const sum = (k: keyof LoggedRequest['usage']) => requests.reduce((a, r) => a + r.usage[k], 0);
    expect(await page.locator('[data-testid=total-tokens]').textContent()).toBe(
      `tokens ${sum('in').toLocaleString('en-US')} in · ${sum('out').toLocaleString('en-US')} out · ${(sum('cache_read') + sum('cache_write')).toLocaleString('en-US')} cache`,
    );
    expect(await page.locator('[data-testid=total-calls]').textContent()).toBe(`model calls ${requests.length}`);
    expect(await page.locator('[data-testid=total-tools]').textContent()).toBe(`tools ${requests.flatMap((r) => r.tools).length}`);

    // A talk's summary wraps: all of it is on screen, nothing is cut with an ellipsis.
    const meta = page.locator('.talk > .row .meta').first();
    const { scroll, client } = await meta.evaluate((el) => ({ scroll: el.scrollWidth, client: el.clientWidth }));
    expect(scroll).toBeLessThanOrEqual(client);
  });

  test('a light theme when the system asks for one, the dark one otherwise', async () => {
    await page.goto(`${url}/`);
    await page.waitForSelector('body[data-ready=list]');
    const ground = () => page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    await page.emulateMedia({ colorScheme: 'light' });
    expect(await ground()).toBe('rgb(247, 249, 252)');
    await page.emulateMedia({ colorScheme: 'dark' });
    expect(await ground()).toBe('rgb(7, 17, 31)');
    expect(errors).toEqual([]);
  });
});
