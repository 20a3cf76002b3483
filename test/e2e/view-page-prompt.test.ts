/**
 * The inspector's Prompt and Execution tabs in headless Chromium, on a real session the lab ran with
 * the runtime's raw body dump: what the page shows for each call is held against the mock's request
 * log (offered tools, message count, system characters), and the tab lives in the URL.
 */
import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import type { BrowserContext, Page } from 'playwright-core';
import { ViewExtension } from '../../src/extensions/view/extension.js';
import { labRun, readRequestLog, WORK_SCRIPT, type LoggedRequest } from '../helpers/lab.js';
import { collectAndParse, writeConfig } from '../helpers/cli.js';
import { launchChromium } from '../helpers/browser.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

type Shaped = LoggedRequest & { system_chars: number; offered_tools: string[]; messages: number };

describe('the Prompt and Execution tabs, in headless Chromium', () => {
  const base = tempDir('aszcol-view-prompt-');
  const home = join(base, 'home');
  const root = join(base, 'data');
  const log = join(base, 'requests.jsonl');
  let session = '';
  let requests: Shaped[] = [];
  let ext: ViewExtension;
  let url = '';
  let ctx: BrowserContext;
  let page: Page;
  const errors: string[] = [];

  beforeAll(async () => {
    const raw = join(base, 'raw');
    const config = writeConfig(base, root, join(home, 'projects'), `    provider_bodies: ${JSON.stringify(raw)}\n`);
    session = (await labRun({ configDir: home, cwd: join(base, 'work'), prompt: 'SLOWTOOL please', tools: 'Bash', script: WORK_SCRIPT, log, rawBodies: raw }))
      .session_id;
    requests = readRequestLog(log) as Shaped[];
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

  test('a call opened on its Prompt tab shows what the mock received, and the change since the previous call', async () => {
    const second = requests[1]!;
    await page.goto(`${url}/c/${session}?step=${encodeURIComponent(`call/${second.message_id}`)}&tab=prompt`);
    const panel = page.locator('#inspector-panel');
    await expect(panel.locator('[data-tools]').getAttribute('data-tools')).resolves.toBe(String(second.offered_tools.length));
    expect(await panel.locator('[data-messages]').getAttribute('data-messages')).toBe(String(second.messages));
    // The tool call and its result are what the second call added.
    expect(await panel.locator('[data-added]').getAttribute('data-added')).toBe('2');
    await panel.locator('[data-load-prompt]').click();
    const system = await panel.locator('[data-system]').textContent();
    expect(system!.length).toBe(second.system_chars);
    expect(await page.locator('#tab-prompt').getAttribute('aria-selected')).toBe('true');
    expect(errors).toEqual([]);
  });

  test('the Execution tab of a tool says which figures are unavailable and why; the header says the cost is unknown', async () => {
    const tool = requests[0]!.tools[0]!;
    await page.goto(`${url}/c/${session}?step=${encodeURIComponent(`tool/${tool.id}`)}&tab=execution`);
    const note = page.locator('#inspector-panel [data-unavailable]');
    expect(await note.textContent()).toContain('no OTLP export from the runtime has landed for this session');
    expect(await page.locator('[data-testid=total-cost] b').textContent()).toBe('unknown');
    // Key 6 switches to the Prompt tab and the URL follows.
    await page.locator('#inspector-panel').focus();
    await page.keyboard.press('6');
    await page.waitForURL(/tab=prompt/);
    expect(await page.locator('#inspector-panel').textContent()).toContain('A prompt belongs to a provider call');
    expect(errors).toEqual([]);
  });
});
