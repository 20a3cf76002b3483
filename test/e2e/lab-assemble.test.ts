import { afterAll, beforeAll, describe, expect, test } from '@jest/globals';
import { join } from 'node:path';
import { labRun, readRequestLog, type LoggedRequest } from '../helpers/lab.js';
import { collectAndParse, runCli, writeConfig } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { landedFiles } from '../helpers/root.js';
import { foldOf } from '../helpers/parse.js';
import { expectChainProperties } from '../helpers/chain-props.js';
import type { SdRecord } from '../../src/formats/session-data/types.js';

afterAll(cleanupTemp);

/**
 * The real Claude Code CLI, assembled, held against the lab's request log: the log is written by
 * the scripted API, not by us, so it is independent ground truth for calls, usage and tools.
 */
describe('assembly of sessions the real Claude Code wrote', () => {
  const base = tempDir('aszcol-e2e-asm-');
  const home = join(base, 'home');
  const work = join(base, 'work');
  const root = join(base, 'data');
  const log = join(base, 'requests.jsonl');
  const compactLog = join(base, 'compact-requests.jsonl');
  let config = '';
  let parallel = '';
  let delegate = '';
  let requests: LoggedRequest[] = [];

  beforeAll(async () => {
    config = writeConfig(base, root, join(home, 'projects'));
    parallel = (await labRun({ configDir: home, cwd: work, prompt: 'PARALLEL please', tools: 'Bash', log })).session_id;
    // Collect and parse between turns, so the chain grows over several rounds as it would live.
    await collectAndParse(config);
    await labRun({ configDir: home, cwd: work, prompt: 'and one more thing', resume: parallel, log });
    // The compaction's own summarising request is not written as a call in the transcript: log it apart.
    await labRun({ configDir: home, cwd: work, prompt: '/compact', resume: parallel, log: compactLog });
    delegate = (await labRun({ configDir: home, cwd: work, prompt: 'DELEGATE now', tools: 'Bash,Agent', log })).session_id;
    await collectAndParse(config);
    requests = readRequestLog(log);
  }, 180_000);

  const recordAt = (session: string, ref: { seq: number; row: number }): SdRecord =>
    landedFiles(root, session).find((f) => f.seq === ref.seq)!.records[ref.row - 1]!;

  test('one llm.call per answered request, with exactly the usage the API reported, and every tool joined', () => {
    const calls = [parallel, delegate].flatMap((s) =>
      foldOf(root, s)
        .nodes.filter((n) => n.kind === 'llm.call')
        .map((n) => ({ s, n })),
    );
    const real = calls.filter(({ n }) => n.id.startsWith('call/msg_'));
    expect(real.map(({ n }) => n.id.slice(5)).sort()).toEqual(requests.map((r) => r.message_id).sort());
    for (const r of readRequestLog(compactLog)) expect(real.some(({ n }) => n.id === `call/${r.message_id}`)).toBe(false);
    for (const req of requests) {
      const { s, n } = real.find(({ n }) => n.id === `call/${req.message_id}`)!;
      expect(n.attrs).toMatchObject({ usage: 'observed_replayable', usage_from: 'last_fragment_in_line_order' });
      expect(recordAt(s, n.attrs!.usage_at as { seq: number; row: number }).usage).toEqual(req.usage);
      for (const t of req.tools) {
        const tool = foldOf(root, s).node(`tool/${t.id}`)!;
        expect(tool.parent).toBe(`call/${req.message_id}`);
        expect(tool.attrs).toMatchObject({ name: t.name, result: 'available', result_join: 'exact_unique' });
      }
    }
  });

  test('talks on main are the prompts a person gave; the /compact epoch carries its summary', () => {
    const f = foldOf(root, parallel);
    expect(f.nodes.filter((n) => n.kind === 'talk' && n.stream === 'main')).toHaveLength(3); // PARALLEL, the resumed prompt, /compact
    expect(f.kinds).toMatchObject({ epoch: 2, 'epoch.boundary': 1, 'epoch.summary': 1 });
    expect(f.rel('follows')).toHaveLength(1);
    expect(f.rel('summarizes')).toHaveLength(1);
    expect(f.unresolved.filter((u) => u.state === 'open')).toEqual([]);
    expect(f.chain.fold.rounds).toBe(2);
  });

  test('the child is joined with starts, reports and ends_with; the notification starts no talk', () => {
    const f = foldOf(root, delegate);
    const child = f.nodes.find((n) => n.kind === 'stream' && n.attrs?.role === 'child')!;
    expect(child.attrs).toMatchObject({ label: 'helper task' });
    expect(f.rel('starts')).toEqual([expect.objectContaining({ to: child.id, quality: 'exact_unique' })]);
    expect(f.node(f.rel('starts')[0]!.from!)!.kind).toBe('agent.call');
    expect(f.rel('reports')).toEqual([expect.objectContaining({ to: child.id, quality: 'exact_unique', via: 'task id on the notification' })]);
    expect(f.rel('ends_with')).toEqual([expect.objectContaining({ from: child.id })]);
    expect(f.nodes.filter((n) => n.kind === 'talk' && n.stream === 'main')).toHaveLength(1);
    expect(f.kinds).toMatchObject({ 'agent.launch_ack': 1, 'runtime.notification': 1, 'agent.output': 1, 'agent.call': 1 });
    expect(f.unresolved.filter((u) => u.state === 'open')).toEqual([]);
  });

  test('the chain properties hold on both sessions, and verify checks every round', async () => {
    expectChainProperties(root, parallel);
    expectChainProperties(root, delegate);
    const v = await runCli(['verify', '--config', config]);
    expect(v.stderr).toBe('');
    expect(v.stdout).toMatch(/checked 2 conversation chain\(s\), 3 round\(s\)/);
    const c = await runCli(['conversation', '--config', config, delegate, '--terms', 'both']);
    expect(c.code).toBe(0);
    expect(c.stdout).toMatch(/llm\.call \(message\.id\)/);
  });
});
