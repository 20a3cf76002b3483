/**
 * The README's screenshots come from `scripts/screenshots.mjs` (a real lab session, the service's
 * view, Debian's Chromium). Run into a temporary directory: it must exit 0 and leave two PNGs of
 * the browser's viewport that show a page, not an empty or error screen.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { REPO } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** A blank 1440×900 page compresses to a few kilobytes; the list and a conversation are tens. */
const MIN_BYTES = 20_000;

describe('npm run screenshots', () => {
  test('records a lab session and photographs the list and a conversation into PNGs of the viewport', () => {
    const out = tempDir('aszcol-shots-');
    const r = spawnSync(process.execPath, [join(REPO, 'scripts', 'screenshots.mjs'), '--out', out], { encoding: 'utf8', timeout: 180_000 });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const report = JSON.parse(r.stdout.trim().split('\n').at(-1)!) as { sessions: string[]; screenshots: { path: string; bytes: number }[] };
    expect(report.sessions).toHaveLength(2);
    expect(report.screenshots.map((s) => s.path)).toEqual([join(out, 'screenshot-list.png'), join(out, 'screenshot-conversation.png')]);
    for (const s of report.screenshots) {
      const png = readFileSync(s.path);
      expect(png.subarray(0, 8).equals(PNG_SIGNATURE)).toBe(true);
      // IHDR: width and height, big-endian, right after the chunk's length and type.
      expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([1440, 900]);
      expect(png.length).toBe(s.bytes);
      expect(png.length).toBeGreaterThan(MIN_BYTES);
    }
  }, 200_000);
});
