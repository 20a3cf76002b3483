/**
 * Debian's Chromium, driven by playwright-core (nothing is downloaded), as every page test and the
 * view bench launch it: headless, no sandbox, nothing reaching off the machine.
 */
import { existsSync } from 'node:fs';
import { chromium, type BrowserContext } from 'playwright-core';
import { tempDir } from './tmp.js';

export const CHROMIUM = '/usr/bin/chromium';
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface ChromiumOptions {
  /** The browser binary; Debian's by default. */
  executablePath?: string;
  /** The profile folder; a fresh one by default, so nothing a previous run cached answers for this server. */
  profile?: string;
  viewport?: { width: number; height: number };
}

export async function launchChromium(opts: ChromiumOptions = {}): Promise<BrowserContext> {
  const executablePath = opts.executablePath ?? CHROMIUM;
  if (!existsSync(executablePath))
    throw new Error(`${executablePath} is missing: install Debian's browser with \`apt-get install -y --no-install-recommends chromium\``);
  return chromium.launchPersistentContext(opts.profile ?? tempDir('aszcol-chromium-'), {
    executablePath,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: opts.viewport ?? { width: 1440, height: 900 },
  });
}
