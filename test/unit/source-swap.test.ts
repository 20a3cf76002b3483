/**
 * A source swapped after discovery chose it (issue 13, M4): discovery decided on a real path
 * inside the source root; the read refuses whatever stands there by then if it is a link, a
 * FIFO, or reached through a directory turned into a link.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import { renameSync, rmSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { discover } from '../../src/adapters/claude-code/discovery.js';
import { collectSession, emptyReport } from '../../src/receivers/claude-code-local/session-collect.js';
import { listDir } from '../../src/storage/layout.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { rec, writeLines } from '../helpers/transcript.js';

afterAll(cleanupTemp);

const S = '0438c73b-1111-4222-8333-000000000001';
const A1 = 'a0123456789abcdef';
const SECRET = 'do-not-collect-this-secret';

function setup() {
  const base = tempDir('aszcol-swap-');
  const src = join(base, 'projects');
  const root = join(base, 'data');
  const outside = join(base, 'outside');
  writeLines(join(outside, `${S}.jsonl`), [rec.user(S, SECRET)]);
  writeLines(join(outside, `agent-${A1}.meta.json`), [{ secret: SECRET }]);
  writeLines(join(src, '-p', `${S}.jsonl`), [rec.user(S, 'x')]);
  writeLines(join(src, '-p', S, 'subagents', `agent-${A1}.meta.json`), [{ agentType: 'general' }]);
  return { src, root, outside };
}

/** Discovers, lets `swap` change the tree, then collects what discovery found: the window an attacker has. */
function collectAfterSwap(src: string, root: string, swap: () => void) {
  const found = discover(src);
  expect(found.sessions).toHaveLength(1);
  swap();
  const report = emptyReport();
  collectSession(found.sessions[0]!, { root, sourceRoot: src, filter: { include: [], exclude: [] }, maxDeltaBytes: 1 << 20 }, report);
  return report;
}

describe('a source swapped between discovery and the read', () => {
  test('a transcript and a sidecar replaced by links out of the root are not read; the pass says why', () => {
    const { src, root, outside } = setup();
    const r = collectAfterSwap(src, root, () => {
      rmSync(join(src, '-p', `${S}.jsonl`));
      symlinkSync(join(outside, `${S}.jsonl`), join(src, '-p', `${S}.jsonl`));
      rmSync(join(src, '-p', S, 'subagents', `agent-${A1}.meta.json`));
      symlinkSync(join(outside, `agent-${A1}.meta.json`), join(src, '-p', S, 'subagents', `agent-${A1}.meta.json`));
    });
    expect(r.landedFiles).toBe(0);
    expect(r.errors.map((e) => e.message)).toEqual([
      expect.stringMatching(/is a symbolic link now .*not followed/),
      expect.stringMatching(/is a symbolic link now/),
    ]);
  });

  test('a project directory replaced by a link out of the root is not read through', () => {
    const { src, root, outside } = setup();
    const r = collectAfterSwap(src, root, () => {
      renameSync(join(src, '-p'), join(src, '-p-old'));
      symlinkSync(outside, join(src, '-p'));
    });
    expect(r.landedFiles).toBe(0);
    expect(r.errors[0]?.message).toMatch(/became a link after discovery/);
  });

  test('a transcript replaced by a FIFO is refused without blocking', () => {
    const { src, root } = setup();
    const r = collectAfterSwap(src, root, () => {
      rmSync(join(src, '-p', `${S}.jsonl`));
      expect(spawnSync('mkfifo', [join(src, '-p', `${S}.jsonl`)]).status).toBe(0);
    });
    expect(r.errors[0]?.message).toMatch(/no longer a regular file/);
    // The untouched sidecar still lands: one refused source does not stop the session.
    expect(r.landedFiles).toBe(1);
    expect(listDir(join(root, S, 'streams'))).toEqual([A1]);
  });
});
