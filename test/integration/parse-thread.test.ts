/**
 * The assembler's parse step on its own thread (as the service runs it) writes exactly the rounds
 * the step writes in-process, and stops between sessions when asked.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { cpSync } from 'node:fs';
import { join } from 'node:path';
import { parseStep } from '../../src/processors/assembler/parse-step.js';
import { ParseThread } from '../../src/processors/assembler/parse-thread.js';
import { validateAssemblerConfig } from '../../src/processors/assembler/config.js';
import { landedSessions } from '../../src/storage/landed-files.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { AT, CONFORMANCE, rootFiles } from './export-root.js';
import { runCli } from '../helpers/cli.js';

afterAll(cleanupTemp);

describe('the parse step on its own thread', () => {
  test('writes the same rounds, byte for byte, as in-process; an aborted step stops before the next session', async () => {
    const base = tempDir('aszcol-parse-thread-');
    const root = join(base, 'a');
    for (const s of ['test/scenarios/child-tools.yaml', join(CONFORMANCE, 'workflow.yaml'), join(CONFORMANCE, 'delegation.yaml')]) {
      const r = await runCli(['scenario', 'build', s, '--format', 'sd', '--out', root, '--at', AT]);
      expect(r.code).toBe(0);
    }
    const sessions = landedSessions(root);
    expect(sessions.length).toBeGreaterThanOrEqual(3);
    const other = join(base, 'b');
    const stopped = join(base, 'c');
    cpSync(root, other, { recursive: true });
    cpSync(root, stopped, { recursive: true });
    const cfg = validateAssemblerConfig(undefined, 'processors.assembler');

    const inProcess = await parseStep(root, cfg);
    const thread = new ParseThread();
    try {
      const threaded = await thread.parse(other, cfg);
      expect(threaded).toEqual(inProcess);
      expect(inProcess.rounds).toBeGreaterThanOrEqual(sessions.length);
      const a = rootFiles(root);
      const b = rootFiles(other);
      expect([...b.keys()].filter((k) => k.endsWith('.sf')).length).toBe(inProcess.rounds);
      expect(b).toEqual(a);

      const abort = new AbortController();
      abort.abort();
      const cut = await thread.parse(stopped, cfg, abort.signal);
      expect(cut).toMatchObject({ rounds: 0, left: sessions.length });
      // The thread takes the next step as usual.
      expect(await thread.parse(stopped, cfg)).toEqual(inProcess);
    } finally {
      await thread.close();
    }
  }, 120_000);
});
