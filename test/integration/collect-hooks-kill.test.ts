/**
 * The plugin's spooled observations land as Session Data under the session's lock. A collect
 * killed (a real SIGKILL) after it installed the observation files and before any cursor moved
 * leaves files no cursor counts; the next collect finds them, lands only what they do not hold,
 * and every observation is landed once: verify finds nothing landed again and no gap, the rounds
 * bind every file, and the view's tools answer reads each observation once, from landed files.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { observeHookInput } from '../../src/adapters/claude-code/hook-event.js';
import { readSessionData } from '../../src/formats/session-data/decode.js';
import { readObservations } from '../../src/storage/hook-landing.js';
import { appendSpoolLineSync, readSpool } from '../../src/storage/hook-spool.js';
import { listLanded } from '../../src/storage/landed-files.js';
import { verifyRoot } from '../../src/storage/verify.js';
import { loadChain } from '../../src/storage/chain.js';
import { collectAndParse, runCli, writeConfig } from '../helpers/cli.js';
import { rec, writeLines } from '../helpers/transcript.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const SID = '5a1e0c3d-2222-4333-8444-555566667777';

function spool(root: string, tools: string[], second = 0): void {
  for (const [i, tool] of tools.entries()) {
    const mcp = i % 2 === 0;
    const input = {
      session_id: SID,
      hook_event_name: 'PostToolUse',
      tool_name: mcp ? 'mcp__lab__echo' : 'Bash',
      tool_use_id: tool,
      tool_input: { n: i },
      duration_ms: 5,
    };
    const o = observeHookInput(Buffer.from(JSON.stringify(input)), new Date(Date.UTC(2026, 11, 2, 5, 0, second + i)).toISOString());
    appendSpoolLineSync(root, SID, JSON.stringify(o));
  }
}

describe('a collect killed between landing the plugin’s observations and moving their cursors', () => {
  test('the next collect lands the rest, nothing twice, and every file is bound by a round', async () => {
    const base = tempDir('aszcol-hooks-kill-');
    const root = join(base, 'data');
    const src = join(base, 'projects');
    mkdirSync(src, { recursive: true });
    writeLines(join(src, '-w', `${SID}.jsonl`), [rec.user(SID, 'echo twice'), rec.assistant(SID, 'msg_1', [{ type: 'text', text: 'ok' }])]);
    const config = writeConfig(base, root, src);
    await collectAndParse(config);

    spool(root, ['t1', 't2', 't3', 't4']);
    const killed = await runCli(['collect', '--once', '--config', config], { env: { ASZCOL_TEST_CRASH_AFTER_HOOK_LAND: '1' } });
    expect(killed.code).toBe(137);
    const early = listLanded(root, SID).filter((f) => f.prefix === 'changes' || f.prefix === 'execution');
    expect(early.map((f) => f.prefix).sort()).toEqual(['changes', 'execution']);
    // Nothing counts them yet: to the spool, every line is still unread.
    expect(readObservations(root, SID).notLanded).toBe(4);

    spool(root, ['t5'], 10);
    const again = await runCli(['collect', '--once', '--json', '--config', config]);
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout).hooks).toEqual({ landed: 1, skipped: 4, waiting: [] });

    const landed = listLanded(root, SID).filter((f) => f.prefix === 'changes' || f.prefix === 'execution');
    const ids = landed.flatMap((f) => readSessionData(f.path).records.map((r) => r.id));
    expect(ids.sort()).toEqual(
      readSpool(root, SID)
        .map((l) => (l.value as { id: string }).id)
        .sort(),
    );
    const v = verifyRoot(root);
    expect(v.problems).toEqual([]);
    expect(v.relanded).toBe(0);
    expect(readObservations(root, SID)).toMatchObject({ landed: 5, notLanded: 0 });

    const parsed = await runCli(['parse', '--config', config]);
    expect(parsed.code).toBe(0);
    expect(loadChain(root, SID).fold.head!.through_seq).toBe(Math.max(...landed.map((f) => f.seq)));
    const verify = await runCli(['verify', '--config', config]);
    expect(verify.stdout + verify.stderr).not.toMatch(/problem/);
    expect(verify.code).toBe(0);

    // Observations of a session whose transcript has not landed wait in the spool, and the collect says why.
    const ghost = '6b2f1d4e-3333-4444-8555-666677778888';
    appendSpoolLineSync(root, ghost, JSON.stringify({ ...readSpool(root, SID)[0]!.value!, session: ghost }));
    const waiting = await runCli(['collect', '--once', '--config', config]);
    expect(waiting.code).toBe(0);
    expect(waiting.stderr).toBe(
      `aszcol: waiting: _hooks/spool/${ghost}.jsonl: the session has no conversation landed yet: its observations land once its transcript does\n`,
    );
    expect(listLanded(root, ghost)).toEqual([]);
  }, 120_000);
});
