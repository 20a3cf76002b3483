/**
 * A line Claude Code appends reaches the page without waiting for the pass interval: the local
 * receiver watches the source directories and nudges a pass confined to the session that moved,
 * and the page, waiting on `/api/status?after=`, is answered once that pass has parsed. The
 * interval here is a minute, so only the watch can explain a line landing within the test's bound.
 */
import { afterAll, describe, expect, test } from '@jest/globals';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ViewDocument } from '../../src/formats/view/types.js';
import { collectAndParse, writeConfig } from '../helpers/cli.js';
import { mainPath } from '../helpers/cc.js';
import { startService } from '../helpers/service.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { writeLines } from '../helpers/transcript.js';
import { PROJECT, SID, writeFixture } from '../helpers/view-fixture.js';
import type { Bench } from '../helpers/collect.js';
import { ViewExtension } from '../../src/extensions/view/extension.js';
import { defaultViewConfig } from '../../src/extensions/view/config.js';

afterAll(cleanupTemp);

type Status = { generation: number; heads: Record<string, string> };
const json = async <T>(url: string): Promise<T> => (await (await fetch(url)).json()) as T;

/** A prompt and its answer, continuing the fixture's main transcript. */
function appendTalk(src: string, prompt: string, n: number): void {
  const u = (k: number) => `m0000000-0000-4000-8000-00000000${String(n).padStart(2, '0')}${String(k).padStart(2, '0')}`;
  writeLines(
    mainPath(src, PROJECT, SID),
    [
      {
        parentUuid: null,
        isSidechain: false,
        promptId: `p-watch-${n}`,
        origin: { kind: 'human' },
        type: 'user',
        message: { role: 'user', content: prompt },
        uuid: u(1),
        timestamp: '2026-11-30T13:00:00.000Z',
        sessionId: SID,
      },
      {
        parentUuid: u(1),
        isSidechain: false,
        type: 'assistant',
        uuid: u(2),
        timestamp: '2026-11-30T13:00:01.000Z',
        sessionId: SID,
        message: {
          id: `msg_watch_${n}`,
          type: 'message',
          role: 'assistant',
          model: 'claude-opus-5-5',
          content: [{ type: 'text', text: `Done ${n}.` }],
          stop_reason: 'end_turn',
          usage: { input_tokens: 1, output_tokens: 2 },
        },
      },
    ],
    { append: true },
  );
}

const VIEW = [
  'processors:',
  '  assembler:',
  'extensions:',
  '  view:',
  '    endpoint: 127.0.0.1:0',
  'service:',
  '  extensions: [view]',
  '  pipelines:',
  '    sessions:',
  '      receivers: [claude_code_local]',
  '      processors: [assembler]',
  '  telemetry:',
  '    logs:',
  '      level: debug',
  '',
];

describe('the service with a pass interval of a minute', () => {
  test('an appended line is landed, parsed and announced to a waiting page by a pass for its session alone', async () => {
    const base = tempDir('aszcol-watch-');
    const src = join(base, 'projects');
    writeFixture({ src } as Bench);
    const config = writeConfig(base, join(base, 'data'), src, ['    interval: 60s', ...VIEW].join('\n'));
    const svc = startService(['--config', config]);
    try {
      const url = `http://${Object.entries(await svc.addresses()).find(([k]) => k.includes('view'))![1]}`;
      await svc.waitFor((l) => l.msg === 'pass finished' && l.pass === 1);
      const before = await json<Status>(`${url}/api/status`);
      expect(before.heads[SID]).toMatch(/^r000001-/);

      // The page's wait, asked before the line exists: answered once the head moves.
      const waited = json<Status>(`${url}/api/status?after=${before.generation}`);
      appendTalk(src, 'and now deploy', 1);
      const after = await waited;
      expect(after.generation).not.toBe(before.generation);
      expect(after.heads[SID]).toMatch(/^r000002-/);
      const doc = await json<ViewDocument>(`${url}/api/c/${SID}/view`);
      expect(doc.talks.find((t) => t.label === 'and now deploy')).toMatchObject({ reply: 'Done 1.', stream: 'main' });

      // The pass that took it was a nudged one, confined to the session; no second whole pass ran within the minute.
      const passes = svc.logs.filter((l) => l.msg === 'pass finished');
      const nudged = passes.filter((l) => l.nudged_sessions === 1);
      expect(nudged.length).toBeGreaterThanOrEqual(1);
      expect(nudged.some((l) => (l.counts as Record<string, Record<string, number>>)['receivers/claude_code_local']!.landed_files! > 0)).toBe(true);
      expect(passes.filter((l) => l.nudged_sessions === undefined).map((l) => l.pass)).toEqual([1]);
      // Each pass's line says where its time went, stage by stage.
      expect(Object.keys(nudged[0]!.stages_ms as object)).toEqual(['land', 'parse', 'derive', 'send']);

      // A file beside the sessions (the runtime's own index of them) is not a session's: it nudges nothing.
      const count = svc.logs.filter((l) => l.msg === 'pass finished').length;
      writeFileSync(join(src, PROJECT, 'sessions-index.json'), '{}');
      appendTalk(src, 'and then verify', 2);
      await svc.waitFor((l) => l.msg === 'pass finished' && Number(l.pass) > count && l.nudged_sessions === 1);
      expect(
        svc.logs
          .filter((l) => l.msg === 'pass finished')
          .slice(count)
          .every((l) => l.nudged_sessions === 1),
      ).toBe(true);
    } finally {
      svc.child.kill('SIGTERM');
      await svc.exited;
    }
  }, 60_000);

  test('with watch: false the line waits for the interval: no nudged pass runs', async () => {
    const base = tempDir('aszcol-nowatch-');
    const src = join(base, 'projects');
    writeFixture({ src } as Bench);
    const config = writeConfig(base, join(base, 'data'), src, ['    interval: 60s', '    watch: false', ...VIEW].join('\n'));
    const svc = startService(['--config', config]);
    try {
      const url = `http://${Object.entries(await svc.addresses()).find(([k]) => k.includes('view'))![1]}`;
      await svc.waitFor((l) => l.msg === 'pass finished' && l.pass === 1);
      appendTalk(src, 'and now deploy', 1);
      const doc = await json<ViewDocument>(`${url}/api/c/${SID}/view`);
      expect(doc.talks.some((t) => t.label === 'and now deploy')).toBe(false);
      svc.child.kill('SIGTERM');
      await svc.exited;
      const passes = svc.logs.filter((l) => l.msg === 'pass finished');
      expect(passes.every((l) => l.nudged_sessions === undefined)).toBe(true);
      // The drain's final pass, a whole one, is what lands the line.
      expect(passes.find((l) => l.final === true)).toMatchObject({ counts: { 'receivers/claude_code_local': { landed_files: 1 } } });
      expect(svc.logs.find((l) => l.msg === 'watching source root')).toMatchObject({ watch: false });
    } finally {
      svc.child.kill('SIGTERM');
      await svc.exited;
    }
  }, 60_000);
});

describe('aszcol view on its own, beside a collector and a parser', () => {
  test('/api/status?after= waits until a parse moves a head, and refuses what is not a generation', async () => {
    const base = tempDir('aszcol-view-wait-');
    const src = join(base, 'projects');
    const root = join(base, 'data');
    writeFixture({ src } as Bench);
    const config = writeConfig(base, root, src);
    await collectAndParse(config);
    const ext = new ViewExtension({ ...defaultViewConfig(), endpoint: '127.0.0.1:0' }, { storageRoot: root });
    await ext.start();
    try {
      const url = `http://${ext.address()}`;
      const bad = await fetch(`${url}/api/status?after=soon`);
      expect(bad.status).toBe(400);
      expect(((await bad.json()) as { error: string }).error).toMatch(/a generation is a whole number/);
      const before = await json<Status>(`${url}/api/status`);
      // A page that is behind is answered at once.
      expect((await json<Status>(`${url}/api/status?after=${before.generation + 7}`)).generation).toBe(before.generation);
      const waited = json<Status>(`${url}/api/status?after=${before.generation}`);
      appendTalk(src, 'and now deploy', 1);
      await collectAndParse(config);
      const after = await waited;
      expect(after.heads[SID]).toMatch(/^r000002-/);
      expect(after.generation).toBe(before.generation + 1);
    } finally {
      await ext.shutdown();
    }
  }, 60_000);
});
