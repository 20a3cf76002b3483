import { afterAll, describe, expect, test } from '@jest/globals';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { compileFilterPattern, discover } from '../../src/adapters/claude-code/discovery.js';
import { splitScriptName } from '../../src/adapters/claude-code/paths.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

const S = '0438c73b-1111-4222-8333-444455556666';
const UP = '41090DAB-113C-4A2B-9C3D-5E6F7A8B9C0D';
const A1 = 'a0123456789abcdef';
const A2 = 'afedcba9876543210';

function touch(root: string, rel: string, body = '{}\n') {
  const p = join(root, rel);
  mkdirSync(join(p, '..'), { recursive: true });
  writeFileSync(p, body);
}

describe('session-first discovery', () => {
  test('every kind of source, where it lands, and a session unioned across directories', () => {
    const root = tempDir();
    touch(root, `-w-proj/${S}.jsonl`);
    touch(root, `-w-proj/${S}/subagents/agent-${A1}.jsonl`);
    touch(root, `-w-proj/${S}/subagents/agent-${A1}.meta.json`);
    touch(root, `-w-proj/${S}/subagents/workflows/wf_afa31e47-f6c/agent-${A2}.jsonl`);
    touch(root, `-w-proj/${S}/subagents/workflows/wf_afa31e47-f6c/journal.jsonl`);
    touch(root, `-w-proj/${S}/workflows/wf_afa31e47-f6c.json`);
    touch(root, `-w-other/${S}/workflows/scripts/my-review-wf_x-wf_afa31e47-f6c.js`, 'export default 1\n');
    touch(root, `-w-proj/memory/MEMORY.md`, '# not a session\n');
    touch(root, `-w-proj/${S}/subagents/deeper/agent-${A1}.jsonl`); // below the two levels: not read
    touch(root, `-w-proj/${S}/tool-results/x.txt`, 'spilled\n');
    const d = discover(root);
    expect(d.errors).toEqual([]);
    expect(d.sessions).toHaveLength(1);
    const s = d.sessions[0]!;
    expect(s.dirs).toEqual(['-w-other', '-w-proj']);
    expect(s.primaryDir).toBe('-w-proj');
    const rows = s.sources.map((x) => [x.kind, `${x.area}/${x.areaName}`, x.prefix, x.batch ?? '-']).sort();
    expect(rows).toEqual(
      [
        ['agent_meta', `streams/${A1}`, 'meta', '-'],
        ['journal', 'runs/wf_afa31e47-f6c', 'journal', 'wf_afa31e47-f6c'],
        ['transcript', `streams/${A1}`, 'transcript', '-'],
        ['transcript', `streams/${A2}`, 'transcript', 'wf_afa31e47-f6c'],
        ['transcript', 'streams/main', 'transcript', '-'],
        ['workflow_manifest', 'runs/wf_afa31e47-f6c', 'manifest', 'wf_afa31e47-f6c'],
        ['workflow_script', 'runs/wf_afa31e47-f6c', 'script', 'wf_afa31e47-f6c'],
      ].sort(),
    );
    const script = s.sources.find((x) => x.kind === 'workflow_script')!;
    expect(script.label).toBe('my-review-wf_x');
    expect(script.rel).toBe(`-w-other/${S}/workflows/scripts/my-review-wf_x-wf_afa31e47-f6c.js`);
  });

  test('upper-case session ids are found and kept byte-exact', () => {
    const root = tempDir();
    touch(root, `-p/${UP}.jsonl`);
    touch(root, `-p/${UP}/subagents/agent-${A1}.jsonl`);
    const d = discover(root);
    expect(d.sessions.map((s) => s.id)).toEqual([UP]);
    expect(d.sessions[0]!.sources).toHaveLength(2);
  });

  test('a session with children and no main transcript is a session; a non-agent-id child name is skipped and said', () => {
    const root = tempDir();
    touch(root, `-p/${S}/subagents/agent-${A1}.jsonl`);
    touch(root, `-p/${S}/subagents/agent-acompact-123.jsonl`);
    const d = discover(root);
    expect(d.sessions).toHaveLength(1);
    expect(d.sessions[0]!.sources.map((x) => x.stream)).toEqual([A1]);
    expect(d.skipped).toEqual([expect.objectContaining({ why: expect.stringContaining('not an agent id') })]);
  });

  test('script names split on the last -wf_', () => {
    expect(splitScriptName('review-wf_afa31e47-f6c.js')).toEqual({ label: 'review', run: 'wf_afa31e47-f6c' });
    expect(splitScriptName('a-wf_b-wf_c.js')).toEqual({ label: 'a-wf_b', run: 'wf_c' });
    expect(splitScriptName('nowf.js')).toBeUndefined();
  });

  test('filters: a /path is slugified forward; /** matches the directory and its continuations only', () => {
    const m = compileFilterPattern('/private/tmp/**');
    expect(m('-private-tmp')).toBe(true);
    expect(m('-private-tmp-agentsessionizer-cc-v04-psixvf')).toBe(true);
    expect(m('-private-tmpx')).toBe(false);
    expect(m('-Users-me')).toBe(false);
    expect(compileFilterPattern('/Users/me/GoLand2026.1/x y')('-Users-me-GoLand2026-1-x-y')).toBe(true);
    expect(compileFilterPattern('-Users-*')('-Users-me')).toBe(true);
  });

  test('filters judge the primary directory; with the main transcript pruned, every directory must be excluded', () => {
    const root = tempDir();
    touch(root, `-tmp-scratch/${S}.jsonl`);
    touch(root, `-Users-me/${S}/workflows/scripts/x-wf_1.js`, 'x\n');
    const d = discover(root, { include: [], exclude: ['/tmp/**'] });
    expect(d.sessions).toHaveLength(0);
    expect(d.filteredOut).toEqual([S]);
    const root2 = tempDir();
    touch(root2, `-tmp-scratch/${S}/subagents/agent-${A1}.jsonl`);
    touch(root2, `-Users-me/${S}/workflows/scripts/x-wf_1.js`, 'x\n');
    expect(discover(root2, { include: [], exclude: ['/tmp/**'] }).sessions).toHaveLength(1);
    expect(discover(root2, { include: [], exclude: ['/tmp/**', '/Users/**'] }).sessions).toHaveLength(0);
    expect(discover(root2, { include: ['/Users/me/**'], exclude: [] }).sessions).toHaveLength(1);
  });

  test('a workflow run whose name the storage root cannot hold is skipped and said; the rest of the session is collected', () => {
    const root = tempDir();
    const long = 'wf_' + 'é'.repeat(80); // 163 bytes: a valid file name here, too long for the root's rule
    const decomposed = 'wf_cafe\u0301';
    touch(root, `-w-proj/${S}.jsonl`);
    touch(root, `-w-proj/${S}/subagents/workflows/${long}/agent-${A1}.jsonl`);
    touch(root, `-w-proj/${S}/workflows/${decomposed}.json`);
    touch(root, `-w-proj/${S}/workflows/scripts/review-wf_a\u0001b.js`, 'export default 1\n');
    touch(root, `-w-proj/${S}/workflows/wf_ok.json`);
    const d = discover(root);
    expect(d.sessions[0]!.sources.map((x) => `${x.area}/${x.areaName}`).sort()).toEqual(['runs/wf_ok', 'streams/main']);
    expect(d.skipped.map((x) => [x.path.slice(root.length + 1), x.why])).toEqual([
      [`-w-proj/${S}/subagents/workflows/${long}`, expect.stringMatching(/^workflow run ".*" cannot name a directory in the storage root: 163 bytes in UTF-8/)],
      [`-w-proj/${S}/workflows/${decomposed}.json`, expect.stringMatching(/not in Unicode normalisation form NFC/)],
      [`-w-proj/${S}/workflows/scripts/review-wf_a\u0001b.js`, expect.stringMatching(/control character U\+0001/)],
    ]);
  });

  test('a project directory that vanishes mid-scan is skipped, not an error', () => {
    const root = tempDir();
    touch(root, `-a/${S}.jsonl`);
    touch(root, `-b/${UP}.jsonl`);
    const d = discover(root, { include: [], exclude: [] }, (p) => {
      if (p.endsWith('-a')) rmSync(p, { recursive: true });
    });
    expect(d.errors).toEqual([]);
    expect(d.sessions.map((s) => s.id)).toEqual([UP]);
  });

  test('a source root that does not exist is no sessions and no error', () => {
    expect(discover(join(tempDir(), 'nope'))).toMatchObject({ sessions: [], errors: [] });
  });
});
