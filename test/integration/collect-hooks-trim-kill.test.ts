/**
 * The hook spool's trim, killed (a real SIGKILL) after each of its durable steps: the landed spool
 * renamed aside, the hook cursor moved to the live spool, the retired file deleted. A hook appends
 * after the kill, and the next collect finishes the trim: every observation the hooks wrote is
 * landed exactly once, nothing is left of the retired spool, verify finds no gap and nothing landed
 * twice, and a parse binds every file.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { observeHookInput, type HookObservation } from '../../src/adapters/claude-code/hook-event.js';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import { loadHookCursor, readObservations, retiredSpoolPath, spoolPath } from '../../src/storage/hook-landing.js';
import { appendSpoolLineSync } from '../../src/storage/hook-spool.js';
import { DEFAULT_TRIM_BYTES } from '../../src/storage/hook-spool-trim.js';
import { listLanded } from '../../src/storage/landed-files.js';
import { loadChain } from '../../src/storage/chain.js';
import { verifyRoot } from '../../src/storage/verify.js';
import { collectAndParse, runCli, writeConfig } from '../helpers/cli.js';
import { rec, writeLines } from '../helpers/transcript.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const SID = '7c3e2f5a-4444-4555-8666-777788889999';

let n = 0;
/** One Bash observation of about 1 KiB, as the hook reduces it. */
function spool(root: string): HookObservation {
  const input = {
    session_id: SID,
    hook_event_name: 'PostToolUse',
    tool_name: 'Bash',
    tool_use_id: `t${++n}`,
    tool_input: { command: `echo ${'x'.repeat(900)}` },
  };
  const o = observeHookInput(Buffer.from(JSON.stringify(input)), new Date(Date.UTC(2026, 11, 2, 8, 0, 0, n)).toISOString());
  appendSpoolLineSync(root, SID, JSON.stringify(o));
  return o;
}

const landedIds = (root: string) =>
  listLanded(root, SID)
    .filter((f) => f.prefix === 'changes' || f.prefix === 'execution')
    .flatMap((f) => readSessionData(f.path).records.map((r) => r.id));

describe('a collect killed at each step of trimming a landed hook spool', () => {
  test.each(['retired', 'switched', 'removed'] as const)(
    'killed once the spool is %s: the next collect finishes, every observation landed once',
    async (step) => {
      const base = tempDir('aszcol-hooks-trim-kill-');
      const root = join(base, 'data');
      const src = join(base, 'projects');
      mkdirSync(src, { recursive: true });
      writeLines(join(src, '-w', `${SID}.jsonl`), [rec.user(SID, 'echo a lot'), rec.assistant(SID, 'msg_1', [{ type: 'text', text: 'ok' }])]);
      const config = writeConfig(base, root, src);
      await collectAndParse(config);

      const written: HookObservation[] = [];
      while (!existsSync(spoolPath(root, SID)) || statSync(spoolPath(root, SID)).size < DEFAULT_TRIM_BYTES) written.push(spool(root));
      const killed = await runCli(['collect', '--once', '--config', config], { env: { ASZCOL_TEST_CRASH_AT_HOOK_TRIM: step } });
      expect(killed.code).toBe(137);
      // Every line landed before the trim began; what the kill left is the step's own state.
      expect(landedIds(root).sort()).toEqual(written.map((o) => o.id).sort());
      expect(existsSync(spoolPath(root, SID))).toBe(false);
      expect(existsSync(retiredSpoolPath(root, SID))).toBe(step !== 'removed');
      expect(loadHookCursor(root, SID)!.retired !== undefined).toBe(step !== 'retired');

      written.push(spool(root));
      expect(readObservations(root, SID).notLanded).toBe(1);
      const again = await runCli(['collect', '--once', '--json', '--config', config]);
      expect(again.code).toBe(0);
      expect(JSON.parse(again.stdout).hooks).toEqual({ landed: 1, skipped: 0, waiting: [] });

      const ids = landedIds(root);
      expect(ids.sort()).toEqual(written.map((o) => o.id).sort());
      expect(existsSync(retiredSpoolPath(root, SID))).toBe(false);
      expect(readObservations(root, SID)).toMatchObject({ landed: written.length, notLanded: 0 });
      const v = verifyRoot(root);
      expect(v.problems).toEqual([]);
      expect(v.relanded).toBe(0);

      const parsed = await runCli(['parse', '--config', config]);
      expect(parsed.code).toBe(0);
      expect(loadChain(root, SID).fold.head!.through_seq).toBe(Math.max(...listLanded(root, SID).map((f) => f.seq)));
      const verify = await runCli(['verify', '--config', config]);
      expect(verify.stdout + verify.stderr).not.toMatch(/problem/);
      expect(verify.code).toBe(0);
    },
    120_000,
  );
});
