/**
 * The hook spool is trimmed once its lines have landed: the landed spool is renamed aside, new
 * appends go to a fresh file, and the old one is deleted only after every line a hook could still
 * append to it has landed. Hooks append by path with O_APPEND and may hold the file open across
 * the rename, so each scenario here checks the landed records against the ids the hooks wrote:
 * every one once, none lost, verify clean.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, openSync, readdirSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { observeHookInput, type HookObservation } from '../../src/adapters/claude-code/hook-event.js';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import { loadHookCursor, readObservations, retiredSpoolPath, spoolPath } from '../../src/storage/hook-landing.js';
import { appendSpoolLineSync, spoolDir } from '../../src/storage/hook-spool.js';
import { beginSpoolWrite, endSpoolWrite } from '../../src/storage/hook-spool-writers.js';
import { listLanded } from '../../src/storage/landed-files.js';
import { verifyRoot } from '../../src/storage/verify.js';
import { bench, SID } from '../helpers/collect.js';
import { rec, writeLines } from '../helpers/transcript.js';
import { cleanupTemp } from '../helpers/tmp.js';

afterAll(cleanupTemp);

let clock = 0;
function observed(tool: string): HookObservation {
  const input = { session_id: SID, cwd: '/w', hook_event_name: 'PostToolUse', tool_name: 'Bash', tool_use_id: tool, tool_input: { command: `make ${tool}` } };
  return observeHookInput(Buffer.from(JSON.stringify(input)), new Date(Date.UTC(2026, 11, 2, 9, 0, 0, clock++)).toISOString());
}

function landedSession() {
  const b = bench();
  writeLines(b.main, [rec.user(SID, 'build it'), rec.assistant(SID, 'msg_1', [{ type: 'text', text: 'ok' }])]);
  expect(b.pass().errors).toEqual([]);
  return b;
}

/** Every id the landed `changes`/`execution` records hold, in sequence order. */
const landedIds = (root: string) =>
  listLanded(root, SID)
    .filter((f) => f.prefix === 'changes' || f.prefix === 'execution')
    .sort((a, b) => a.seq - b.seq)
    .flatMap((f) => readSessionData(f.path).records.map((r) => r.id));

const spoolFiles = (root: string) => readdirSync(spoolDir(root)).filter((n) => !n.startsWith('.writer-'));

function expectVerified(root: string): void {
  const v = verifyRoot(root);
  expect(v.problems).toEqual([]);
  expect(v.relanded).toBe(0);
}

describe('a hook spool whose lines have landed', () => {
  test('stays while it is small, and is rotated away once it reaches the trim size; later lines land once, continuing the stream', () => {
    const b = landedSession();
    const first = [observed('a1'), observed('a2')];
    for (const o of first) appendSpoolLineSync(b.root, SID, JSON.stringify(o));
    expect(b.pass({ hookTrimBytes: 1 << 20 }).errors).toEqual([]);
    expect(spoolFiles(b.root)).toEqual([`${SID}.jsonl`]);

    expect(b.pass({ hookTrimBytes: 1 }).errors).toEqual([]);
    expect(spoolFiles(b.root)).toEqual([]);
    expect(loadHookCursor(b.root, SID)).toMatchObject({ offset: 0, ino: 0 });
    expect(loadHookCursor(b.root, SID)!.retired).toBeGreaterThan(0);

    const later = observed('a3');
    appendSpoolLineSync(b.root, SID, JSON.stringify(later));
    expect(readObservations(b.root, SID)).toMatchObject({ landed: 2, notLanded: 1 });
    expect(b.pass({ hookTrimBytes: 1 << 20 }).hooks).toEqual({ landed: 1, skipped: 0, waiting: [] });
    expect(landedIds(b.root)).toEqual([...first, later].map((o) => o.id));
    // The landing of the live spool drops the retired inode's name, so a spool reusing the inode is never taken for it.
    expect(loadHookCursor(b.root, SID)!.retired).toBeUndefined();
    expectVerified(b.root);
  });

  test('a hook that opened the spool before the rename and writes after it: its line lands from the retired file, once, and the file goes after', () => {
    const b = landedSession();
    const before = [observed('b1'), observed('b2')];
    for (const o of before) appendSpoolLineSync(b.root, SID, JSON.stringify(o));
    expect(b.pass({ hookTrimBytes: 1 << 20 }).errors).toEqual([]);

    // A hook in the middle of its append: marker left, spool opened, nothing written yet.
    const marker = beginSpoolWrite(spoolDir(b.root));
    const fd = openSync(spoolPath(b.root, SID), 'a');
    const r1 = b.pass({ hookTrimBytes: 1 });
    expect(r1.errors).toEqual([]);
    // Renamed aside, but kept: a writer still holds a marker.
    expect(existsSync(retiredSpoolPath(b.root, SID))).toBe(true);
    expect(existsSync(spoolPath(b.root, SID))).toBe(false);

    const late = observed('b3');
    writeSync(fd, JSON.stringify(late) + '\n'); // lands in the retired file: the fd is the old inode
    closeSync(fd);
    endSpoolWrite(marker);
    const fresh = observed('b4');
    appendSpoolLineSync(b.root, SID, JSON.stringify(fresh)); // a new hook: the fresh live spool
    expect(readObservations(b.root, SID)).toMatchObject({ landed: 2, notLanded: 2 });

    const r2 = b.pass({ hookTrimBytes: 1 << 20 });
    expect(r2.errors).toEqual([]);
    expect(r2.hooks).toEqual({ landed: 2, skipped: 0, waiting: [] });
    expect(existsSync(retiredSpoolPath(b.root, SID))).toBe(false);
    expect(landedIds(b.root)).toEqual([...before, late, fresh].map((o) => o.id));
    expect(readObservations(b.root, SID)).toMatchObject({ landed: 4, notLanded: 0 });
    expectVerified(b.root);
  });

  test('a hook killed while it held its marker does not keep the retired file forever', () => {
    const b = landedSession();
    appendSpoolLineSync(b.root, SID, JSON.stringify(observed('c1')));
    const dead = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    writeFileSync(join(spoolDir(b.root), `.writer-${dead.stdout}-deadbeef`), '');
    expect(b.pass({ hookTrimBytes: 1 }).errors).toEqual([]);
    expect(spoolFiles(b.root)).toEqual([]);
    expect(readdirSync(spoolDir(b.root))).toEqual([]);
    expect(landedIds(b.root)).toHaveLength(1);
  });

  test('hooks appending from other processes while passes trim at every landing: every line lands exactly once', async () => {
    const b = landedSession();
    const writers = 3;
    const each = 40;
    const module = new URL('../../src/storage/hook-spool.js', import.meta.url).href;
    const script = `
      const { appendSpoolLineSync } = await import(${JSON.stringify(module)});
      const [root, sid, tag, n] = process.argv.slice(1);
      for (let i = 0; i < Number(n); i++) appendSpoolLineSync(root, sid, JSON.stringify({ schema: 'aszcol-hook/1', id: tag + '-' + i, session: sid, event: 'tool_done', tool: 'Bash', tool_use_id: tag + '-' + i, time: '2026-12-02T09:00:00.000Z' }));
    `;
    const exits = Array.from({ length: writers }, (_, w) => {
      const child = spawn(process.execPath, ['--input-type=module', '-e', script, b.root, SID, `w${w}`, String(each)], { stdio: 'ignore' });
      return new Promise<number | null>((ok) => child.on('exit', ok));
    });
    let running = writers;
    void Promise.all(exits).then(() => (running = 0));
    // Passes run while the writers append (bounded), then until nothing is left.
    for (let i = 0; i < 400 && running > 0; i++) {
      expect(b.pass({ hookTrimBytes: 0 }).errors).toEqual([]);
      await new Promise((r) => setImmediate(r));
    }
    expect(await Promise.all(exits)).toEqual(Array(writers).fill(0));
    for (let i = 0; i < 5; i++) expect(b.pass({ hookTrimBytes: 0 }).errors).toEqual([]);

    const ids = landedIds(b.root);
    const want = Array.from({ length: writers }, (_, w) => Array.from({ length: each }, (_, i) => `w${w}-${i}`)).flat();
    expect([...ids].sort()).toEqual([...want].sort());
    expect(new Set(ids).size).toBe(ids.length);
    // Trimmed at every landing: nothing is left in the spool directory but what the last pass found landed.
    expect(spoolFiles(b.root)).toEqual([]);
    expectVerified(b.root);
  }, 120_000);
});
