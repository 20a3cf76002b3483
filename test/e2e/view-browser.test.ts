import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { ViewExtension } from '../../src/extensions/view/extension.js';
import { encodeRound } from '../../src/formats/session-flow/encode.js';
import { roundName } from '../../src/storage/chain.js';
import { writeOnce } from '../../src/storage/write-once.js';
import { labRun } from '../helpers/lab.js';
import { REPO, collectAndParse, writeConfig } from '../helpers/cli.js';
import { mainPath } from '../helpers/cc.js';
import { launchChromium } from '../helpers/browser.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { writeLines } from '../helpers/transcript.js';
import { PROJECT, SID as FIXTURE, writeFixture } from '../helpers/view-fixture.js';
import type { Bench } from '../helpers/collect.js';

afterAll(cleanupTemp);

const ARTIFACTS = join(REPO, 'test-artifacts');
const LEGACY = 'legacy-0000-4000-8000-000000000000';

/**
 * The page in a real browser over sessions the real Claude Code wrote (and the fixture with open
 * unresolved entries): the list, a conversation, a talk opened by mouse and by keyboard, a tool's
 * evidence, a child stream's talk, an unresolved entry, and a refresh when a parse adds a round.
 */
describe('the view in headless Chromium', () => {
  const base = tempDir('aszcol-view-e2e-');
  const home = join(base, 'home');
  const root = join(base, 'data');
  let config = '';
  let delegate = '';
  let ext: ViewExtension;
  let url = '';
  let ctx: BrowserContext;
  let page: Page;
  const foreign: string[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    config = writeConfig(base, root, join(home, 'projects'));
    delegate = (await labRun({ configDir: home, cwd: join(base, 'work'), prompt: 'DELEGATE now', tools: 'Bash,Agent', log: join(base, 'requests.jsonl') }))
      .session_id;
    writeFixture({ src: join(home, 'projects') } as Bench);
    await collectAndParse(config);
    // A chain written before the model-call, subagent and Bash counts existed: the list must say "unknown", not 0.
    const { text, digest } = encodeRound(
      {
        t: 'header',
        schema: 'sf/1',
        conversation: LEGACY,
        session: LEGACY,
        round: 1,
        from_seq: 1,
        through_seq: 0,
        input_digest: '0'.repeat(64),
        parser: 'v1',
        policy: 'v1+idle=10m0s',
        title: 'an older chain',
        talks: 0,
        steps: 0,
        streams: 0,
        segments: 0,
        unresolved: 0,
      } as never,
      [],
    );
    mkdirSync(join(root, '_conversations', LEGACY, 'rounds'), { recursive: true });
    writeOnce(join(root, '_conversations', LEGACY, 'rounds', roundName(1, digest)), Buffer.from(text));
    ext = new ViewExtension({ endpoint: '127.0.0.1:0', allowedHosts: [] }, { storageRoot: root });
    await ext.start();
    url = `http://${ext.address()}`;
    ctx = await launchChromium();
    page = await ctx.newPage();
    page.on('request', (r) => {
      if (!r.url().startsWith(url) && !r.url().startsWith('data:')) foreign.push(r.url());
    });
    page.on('pageerror', (e) => errors.push(e.message));
    mkdirSync(ARTIFACTS, { recursive: true });
  }, 240_000);

  afterAll(async () => {
    await ctx?.close();
    await ext?.shutdown();
  });

  test('the list: title, span and counts from each head round, a dash for a count the round does not carry', async () => {
    await page.goto(`${url}/`);
    await page.waitForSelector('body[data-ready=list]');
    const rows = page.locator('tr.conv-row');
    expect(await rows.count()).toBe(3);
    const fixture = page.locator(`tr[data-id="${FIXTURE}"]`);
    await expect(fixture.locator('a').textContent()).resolves.toBe('Build and check the tests');
    expect(await fixture.locator('td[data-col=unresolved]').textContent()).toBe('2');
    expect(await fixture.locator('td[data-col=subagents]').textContent()).toBe('2');
    const legacy = page.locator(`tr[data-id="${LEGACY}"]`);
    for (const col of ['llm_calls', 'subagents', 'bash_runs']) expect(await legacy.locator(`td[data-col=${col}]`).textContent()).toBe('—');
    expect(await legacy.locator('td[data-col=talks]').textContent()).toBe('0');
    expect(await page.locator(`tr[data-id="${delegate}"] td[data-col=llm_calls]`).textContent()).toMatch(/^[1-9]\d*$/);
    // Keyboard: the first link has focus, arrows move between rows.
    const first = await page.evaluate(() => (document.activeElement as HTMLElement).textContent);
    await page.keyboard.press('ArrowDown');
    const second = await page.evaluate(() => (document.activeElement as HTMLElement).textContent);
    expect(second).not.toBe(first);
    await page.screenshot({ path: join(ARTIFACTS, 'view-list.png') });
  });

  test("a conversation the real Claude Code wrote: a talk opened by keyboard, a tool's evidence, the child stream's talk", async () => {
    await page.click(`tr[data-id="${delegate}"] a`);
    await page.waitForSelector('body[data-ready=conversation]');
    expect(page.url()).toBe(`${url}/c/${delegate}`);
    const mainTalk = page.locator('.row[data-kind=talk]').first();
    expect(await mainTalk.textContent()).toContain('DELEGATE now');
    // The first talk opens with the page and has focus; ← closes it and Enter opens it again.
    expect(await mainTalk.getAttribute('aria-expanded')).toBe('true');
    await page.keyboard.press('ArrowLeft');
    expect(await page.locator('.row[data-kind=talk]').first().getAttribute('aria-expanded')).toBe('false');
    await page.keyboard.press('Enter');
    expect(await page.locator('.row[data-kind=talk]').first().getAttribute('aria-expanded')).toBe('true');
    await page.keyboard.press('ArrowDown');
    expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.kind)).toBe('run');

    // The Agent call: name, result, the join's quality; its evidence is the landed record.
    const call = page.locator('.row[data-kind="agent.call"]');
    expect(await call.textContent()).toMatch(/Agent.*result available.*exact.*starts/);
    await call.click();
    await page.click('#tab-relations');
    expect(await page.locator('.edge[data-edge=starts]').textContent()).toMatch(/stream\/a[0-9a-f]{16}.*exact/);
    await page.click('#tab-evidence');
    const record = page.locator('.evidence-record');
    await record.waitFor();
    const toolId = (await call.getAttribute('data-id'))!.slice('tool/'.length);
    expect(await record.textContent()).toContain(toolId);
    expect(await record.textContent()).toContain('Agent');
    expect(await record.locator('[data-testid=dropped]').textContent()).toMatch(/Dropped on landing \(\d+\)/);
    // The glossary explains a key: `call` is Claude Code's message.id.
    await record.locator('.gq[data-gloss=call]').click();
    expect(await page.locator('.gloss').first().textContent()).toContain('message.id');
    // The result record, second in the list.
    await page.click('.refs button[data-ref="1"]');
    await page.waitForSelector('.evidence-record');
    expect(await page.locator('.evidence-record').textContent()).toContain(toolId);

    // The child stream's talk: from the Streams tab to the transcript, opened.
    await page.click('#left-streams');
    const childRow = page.locator('tr[data-stream^="a"]');
    expect(await childRow.textContent()).toMatch(/helper task.*child.*main.*exact/);
    await childRow.locator('td:nth-child(6) button').click();
    const childTalk = page.locator('.talk.child > .row[data-kind=talk]');
    await childTalk.waitFor();
    expect(await childTalk.textContent()).toContain('helper task');
    expect(await childTalk.getAttribute('aria-expanded')).toBe('true');
    expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.kind)).toBe('talk');
    expect(await page.locator('.talk.child .row[data-kind="agent.output"]').count()).toBe(1);
    await page.screenshot({ path: join(ARTIFACTS, 'view-delegate.png') });
  });

  test("the fixture: unresolved entries on screen, what landing dropped, the timeline's gap", async () => {
    await page.goto(`${url}/c/${FIXTURE}`);
    await page.waitForSelector('body[data-ready=conversation]');
    expect(await page.locator('.problems').isHidden()).toBe(true);
    // The open entries are listed before the talks, and on the row they concern.
    const strip = page.locator('.tree > .unres-inline');
    expect(await strip.count()).toBe(2);
    expect(await strip.allTextContents()).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/open.*unresolved tool_result.*no result landed/),
        expect.stringMatching(/open.*unresolved spawn_of_child/),
      ]),
    );
    const secondTalk = page.locator('.row[data-kind=talk][data-id="talk/main/p2"]');
    expect(await secondTalk.textContent()).toContain('1 unresolved');
    await secondTalk.click();
    const open = page.locator('.row[data-id="tool/tu_open"]');
    await open.waitFor();
    expect(await open.textContent()).toMatch(/Read.*result unavailable/);
    expect(await page.locator('.talk.open .unres-inline[data-unresolved="unres/tool_result/tu_open"]').count()).toBe(1);
    await page.click('#left-unresolved');
    expect(await page.locator('tr[data-unresolved]').count()).toBe(2);
    await page.click('tr[data-unresolved="unres/tool_result/tu_open"] button');
    expect(await page.evaluate(() => (document.activeElement as HTMLElement).dataset.id)).toBe('tool/tu_open');
    // A thinking block whose signature was left out on landing, and why.
    await page.click('.row[data-kind=thinking]');
    await page.keyboard.press('3');
    await page.locator('.evidence-record').waitFor();
    expect(await page.locator('[data-testid=dropped]').textContent()).toMatch(/Dropped on landing \(1\).*reasoning signature.*a provider verifies it/);
    const label = await page.locator('[data-testid=timeline] canvas').getAttribute('aria-label');
    expect(label).toMatch(/4 talks on 3 lanes, 1 gaps over 10 minutes/);
    await page.click('.row[data-id="tool/tu_build"]');
    await page.keyboard.press('3');
    await page.locator('.evidence-record').waitFor();
    await page.screenshot({ path: join(ARTIFACTS, 'view-conversation.png') });
    expect(errors).toEqual([]);
  });

  test('live: a parse that adds a round redraws the open page', async () => {
    await page.goto(`${url}/c/${FIXTURE}?poll=250`);
    await page.waitForSelector('body[data-ready=conversation]');
    writeLines(
      mainPath(join(home, 'projects'), PROJECT, FIXTURE),
      [
        {
          parentUuid: null,
          isSidechain: false,
          promptId: 'p-live',
          origin: { kind: 'human' },
          type: 'user',
          message: { role: 'user', content: 'ship it' },
          uuid: 'm0000000-0000-4000-8000-0000000000e1',
          timestamp: '2026-11-30T13:00:00.000Z',
          sessionId: FIXTURE,
        },
      ],
      { append: true },
    );
    await collectAndParse(config);
    await page.waitForSelector('body[data-head="2"]', { timeout: 15_000 });
    expect(await page.locator('.row[data-kind=talk]').last().textContent()).toContain('ship it');
    expect(await page.locator('#live').textContent()).toMatch(/updated|last change/);
  }, 60_000);

  test('nothing was asked of any host but this server, and no script failed', () => {
    expect(foreign).toEqual([]);
    expect(errors).toEqual([]);
  });
});
