import { afterAll, describe, expect, test } from '@jest/globals';
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { labRun } from '../helpers/lab.js';
import { runCli, SHARED } from '../helpers/cli.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';

afterAll(cleanupTemp);

function files(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => (statSync(join(dir, n)).isDirectory() ? files(join(dir, n)) : [join(dir, n)]));
}
const records = (p: string) =>
  readFileSync(p, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, any>);

/**
 * The builder must write what the real runtime writes for the same behaviour. The lab's DELEGATE
 * run and the `delegation` scenario are the same behaviour: a call that launches a background
 * agent, the child's own stream and sidecar, and the notification that brings the parent back.
 */
describe('the scenario builder against the real Claude Code CLI', () => {
  test('delegation: fragment layout, launch result, sidecar, notification text and origin agree', async () => {
    const base = tempDir();
    await labRun({ configDir: join(base, 'home'), cwd: join(base, 'work'), prompt: 'DELEGATE now', tools: 'Bash,Agent' });
    const out = tempDir();
    expect(
      (await runCli(['scenario', 'build', join(SHARED, 'conformance', 'scenarios', 'delegation.yaml'), '--out', out, '--at', '2026-06-01T09:00:00Z'])).code,
    ).toBe(0);
    const shape = (root: string) => {
      const all = files(root);
      const main = all.find((f) => /\/[0-9a-f-]{36}\.jsonl$/.test(f))!;
      const child = all.find((f) => /subagents\/agent-a[0-9a-f]{16}\.jsonl$/.test(f))!;
      const meta = all.find((f) => /subagents\/agent-a[0-9a-f]{16}\.meta\.json$/.test(f))!;
      const m = records(main),
        c = records(child);
      const launch = m.find((r) => r.toolUseResult?.status === 'async_launched')!;
      const note = m.find((r) => r.origin?.kind === 'task-notification')!;
      const assistants = [...m, ...c].filter((r) => r.type === 'assistant');
      return {
        oneBlockPerFragment: assistants.every((r) => r.message.content.length === 1),
        childLastFragmentStops: !!c.filter((r) => r.type === 'assistant').pop()?.message.stop_reason,
        usageKeys: Object.keys(assistants[0]!.message.usage)
          .filter((k) => /tokens$/.test(k))
          .sort(),
        launchKeys: ['isAsync', 'status', 'agentId', 'description', 'prompt', 'outputFile'].filter((k) => k in launch.toolUseResult),
        launchContentIsList: Array.isArray(launch.message.content[0].content),
        childHasSidechainAndAgentId: c.every((r) => !('uuid' in r) || (r.isSidechain === true && /^a[0-9a-f]{16}$/.test(r.agentId))),
        childRootHasNoParent: c[0]!.parentUuid === null,
        metaKeys: ['agentType', 'description', 'toolUseId'].filter((k) => k in JSON.parse(readFileSync(meta, 'utf8'))),
        noteShape:
          /^<task-notification>\n<task-id>a[0-9a-f]{16}<\/task-id>\n<tool-use-id>[^<]+<\/tool-use-id>\n<output-file>[^<]+<\/output-file>\n<status>completed<\/status>\n<summary>Agent "[^"]+" finished<\/summary>/.test(
            note.message.content,
          ),
        noteOrigin: note.origin.producer,
        notePromptIdIsNew: !!note.promptId && note.promptId !== m.find((r) => r.type === 'user' && typeof r.message.content === 'string')!.promptId,
      };
    };
    const lab = shape(join(base, 'home', 'projects'));
    const built = shape(join(out, '_source', 'projects'));
    expect(built).toEqual(lab);
  });
});
