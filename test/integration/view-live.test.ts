import { afterAll, afterEach, beforeAll, describe, expect, test } from '@jest/globals';
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ViewDocument } from '../../src/formats/view/types.js';
import { roundsDir } from '../../src/storage/chain.js';
import { BIN, collectAndParse, runCli, writeConfig } from '../helpers/cli.js';
import { mainPath } from '../helpers/cc.js';
import { cleanupTemp, tempDir } from '../helpers/tmp.js';
import { writeLines } from '../helpers/transcript.js';
import { PROJECT, SID, writeFixture } from '../helpers/view-fixture.js';
import type { Bench } from '../helpers/collect.js';

afterAll(cleanupTemp);

interface Served {
  proc: ChildProcess;
  url: string;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number>;
}
const running: ChildProcess[] = [];
afterEach(() => {
  for (const p of running.splice(0)) if (p.exitCode === null) p.kill('SIGKILL');
});

/** `aszcol view` as its own process, the way a person runs it beside a collector. */
function serve(args: string[]): Promise<Served> {
  return new Promise((res, rej) => {
    const proc = spawn(process.execPath, [BIN, 'view', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    running.push(proc);
    let out = '',
      err = '';
    const exited = new Promise<number>((r) => proc.on('close', (code) => r(code ?? -1)));
    const timer = setTimeout(() => rej(new Error(`aszcol view did not start: ${out} ${err}`)), 20_000);
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /at (http:\/\/[^/\s]+)\//.exec(out);
      if (m) {
        clearTimeout(timer);
        res({ proc, url: m[1]!, stdout: () => out, stderr: () => err, exited });
      }
    });
    proc.stderr!.on('data', (d) => (err += d));
    void exited.then((code) => {
      clearTimeout(timer);
      rej(new Error(`aszcol view exited ${code}: ${err}`));
    });
  });
}

const json = async <T>(url: string): Promise<T> => (await (await fetch(url)).json()) as T;

async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 150));
  }
}

describe('aszcol view beside a collector and a parser', () => {
  const base = tempDir('aszcol-view-live-');
  const src = join(base, 'projects');
  const root = join(base, 'data');
  let config = '';

  beforeAll(async () => {
    config = writeConfig(base, root, src);
    writeFixture({ src } as Bench);
    await collectAndParse(config);
  }, 60_000);

  test('a parse that adds a round moves /api/status, and the new talk is in the next document, without a restart', async () => {
    const v = await serve(['--config', config, '--listen', '127.0.0.1:0']);
    type Status = { generation: number; last_refresh: string; heads: Record<string, string> };
    const before = await json<Status>(`${v.url}/api/status`);
    const doc1 = await json<ViewDocument>(`${v.url}/api/c/${SID}/view`);
    expect(doc1.head.round).toBe(1);
    expect(doc1.talks.some((t) => t.label === 'and now deploy')).toBe(false);
    // Unchanged root: the status does not move.
    expect((await json<Status>(`${v.url}/api/status`)).generation).toBe(before.generation);

    writeLines(
      mainPath(src, PROJECT, SID),
      [
        {
          parentUuid: null,
          isSidechain: false,
          promptId: 'p-live',
          origin: { kind: 'human' },
          type: 'user',
          message: { role: 'user', content: 'and now deploy' },
          uuid: 'm0000000-0000-4000-8000-0000000000f1',
          timestamp: '2026-11-30T13:00:00.000Z',
          sessionId: SID,
        },
        {
          parentUuid: 'm0000000-0000-4000-8000-0000000000f1',
          isSidechain: false,
          type: 'assistant',
          uuid: 'm0000000-0000-4000-8000-0000000000f2',
          timestamp: '2026-11-30T13:00:01.000Z',
          sessionId: SID,
          message: {
            id: 'msg_live',
            type: 'message',
            role: 'assistant',
            model: 'claude-opus-5-5',
            content: [{ type: 'text', text: 'Deployed.' }],
            stop_reason: 'end_turn',
            usage: { input_tokens: 1, output_tokens: 2 },
          },
        },
      ],
      { append: true },
    );
    await collectAndParse(config);

    const after = await until('the status to move', async () => {
      const s = await json<Status>(`${v.url}/api/status`);
      return s.generation !== before.generation ? s : undefined;
    });
    expect(after.heads[SID]).not.toBe(before.heads[SID]);
    expect(after.heads[SID]).toMatch(/^r000002-/);
    expect(Date.parse(after.last_refresh)).toBeGreaterThanOrEqual(Date.parse(before.last_refresh));
    const doc2 = await json<ViewDocument>(`${v.url}/api/c/${SID}/view`);
    expect(doc2.head.round).toBe(2);
    expect(doc2.summary).toMatchObject({ rounds: 2, state: 'verified', talks: doc1.summary.talks + 1 });
    const live = doc2.talks.find((t) => t.label === 'and now deploy')!;
    expect(live).toMatchObject({ reply: 'Deployed.', stream: 'main' });
    expect(doc2.talks.at(-1)!.id).toBe(live.id);

    // A round file listed before its bytes are written: that read says so, the next folds it.
    const partial = join(roundsDir(root, SID), 'r000003-000000000000.sf');
    writeFileSync(partial, '');
    const doc3 = await json<ViewDocument>(`${v.url}/api/c/${SID}/view`);
    expect(doc3.summary.state).toBe('mismatch');
    expect(doc3.summary.problems).toEqual([expect.stringMatching(/r000003-000000000000\.sf: round 3 is empty: it is still being written/)]);
    expect(doc3.head.round).toBe(2);
    rmSync(partial);
    expect((await json<ViewDocument>(`${v.url}/api/c/${SID}/view`)).summary.state).toBe('verified');

    v.proc.kill('SIGTERM');
    expect(await v.exited).toBe(0);
  }, 90_000);

  test('an address that is not one is refused with exit 2; a port in use with exit 1', async () => {
    const bad = await runCli(['view', '--config', config, '--listen', 'nowhere']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--listen: "nowhere" is not a listen address/);
    const v = await serve(['--config', config, '--listen', '127.0.0.1:0']);
    const taken = await runCli(['view', '--config', config, '--listen', v.url.slice('http://'.length)]);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toMatch(/cannot listen on 127\.0\.0\.1:\d+/);
    v.proc.kill('SIGINT');
    expect(await v.exited).toBe(0);
  }, 60_000);

  test('an empty root is served, and the command says how to fill it', async () => {
    const emptyBase = tempDir('aszcol-view-empty-');
    const v = await serve(['--config', writeConfig(emptyBase, join(emptyBase, 'data'), join(emptyBase, 'projects')), '--listen', '127.0.0.1:0']);
    await until('the hint', async () => (v.stderr().includes('aszcol collect --once && aszcol parse') ? true : undefined), 5_000);
    const list = await json<{ conversations: unknown[]; hint: string }>(`${v.url}/api/conversations`);
    expect(list.conversations).toEqual([]);
    v.proc.kill('SIGTERM');
    expect(await v.exited).toBe(0);
  }, 60_000);
});
